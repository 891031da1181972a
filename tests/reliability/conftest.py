"""Fault injection, crash safety, fuzzing and security tests.

Every test here is marked ``reliability``. ``make test`` runs them all with a seeded, bounded budget
(a few ``kill -9`` episodes, a few examples per fuzzed route); ``make test-reliability`` passes
``--reliability-full`` for the full budget (20 ``kill -9`` episodes, many more examples). The budget
never deselects anything: the same tests run in both, only their sizes change.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
import pytest_asyncio

from osw_studio.envs.local import LocalEnv
from osw_studio.envs.registry import make_env

SEED = 20260514
"""The seed of every randomised choice here (kill points, fuzzed inputs), so a failure replays."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--reliability-full",
        action="store_true",
        default=False,
        help="run the reliability tests with their full budget (make test-reliability)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/reliability/" in item.nodeid:
            item.add_marker(pytest.mark.reliability)


@dataclass(frozen=True)
class Budget:
    """How much of each reliability test to run."""

    full: bool
    kill_episodes: int
    examples: int

    def pick(self, subset: int, full: int) -> int:
        """``full`` with ``--reliability-full``, else ``subset``."""
        return full if self.full else subset


@pytest.fixture(scope="session")
def budget(request: pytest.FixtureRequest) -> Budget:
    full = bool(request.config.getoption("--reliability-full"))
    return Budget(full=full, kill_episodes=20 if full else 5, examples=60 if full else 8)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sandbox() -> AsyncIterator[LocalEnv]:
    """A local sandbox desktop (bubblewrap when installed) shared by a module's tests."""
    env = await make_env("local")
    assert isinstance(env, LocalEnv)
    try:
        yield env
    finally:
        await env.close()
