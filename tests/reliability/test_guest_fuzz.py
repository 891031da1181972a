"""The guest API fuzzed with schemathesis against its own OpenAPI schema, on a real sandboxed guest.

Bad input (schemathesis' negative mode: wrong types, missing or out-of-range values, malformed bodies)
gets a 4xx, never a 500; valid input never crashes the server (no bare ``Internal Server Error``:
the documented 500s carry OSWorld's error shapes). Every route answers 401 without the token.

The server runs inside the local sandbox (bubblewrap, throwaway HOME), since fuzzed input reaches
``/execute``, ``/setup/upload`` and friends. Two routes stay out of the fuzzing and get explicit bad
input instead: ``/stream`` (valid input streams forever) and ``/setup/download_file`` (valid input
would reach the network).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, seed, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from osw_studio.envs.local import LocalEnv
from tests.reliability.conftest import SEED, Budget

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(600)]

NOT_FUZZED = {"/stream", "/setup/download_file"}
"""Routes whose valid input cannot be sent blindly (see the module docstring)."""

WAITING = {
    "/setup/open_file",
    "/execute_with_verification",
    "/setup/execute_with_verification",
    "/run_bash_script",
    "/run_python",
}
"""Routes whose valid input may ask the guest to wait (a timeout field): fuzzed with bad input only."""

CRASH = "Internal Server Error"
"""Starlette's body for an exception nobody handled."""


@pytest.fixture(scope="module")
def guest(sandbox: LocalEnv) -> Iterator[tuple[str, dict[str, str]]]:
    yield sandbox.url, {"Authorization": f"Bearer {sandbox.token}"}


@pytest.fixture(scope="module")
def schema(guest: tuple[str, dict[str, str]]) -> Any:
    url, auth = guest
    return schemathesis.openapi.from_url(f"{url}/openapi.json", headers=auth, timeout=30)


def operations(schema: Any) -> list[Any]:
    return [result.ok() for result in schema.get_all_operations()]


def fuzz(operation: Any, mode: GenerationMode, examples: int, check: Any) -> bool:
    """Send ``examples`` generated requests to ``operation`` and ``check`` each response.

    Returns:
        False when no such request exists (no bad input for a route that takes no input).
    """

    @seed(SEED)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode))
    def run(case: Any) -> None:
        check(case)

    try:
        run()
    except Unsatisfiable:
        return False
    return True


def describe(case: Any, response: Any) -> str:
    return f"{case.operation.label} {case.as_curl_command()} -> {response.status_code}: {response.text[:300]}"


def test_the_schema_covers_every_route(schema: Any) -> None:
    paths = {op.path for op in operations(schema)}
    for path in ("/screenshot", "/execute", "/setup/upload", "/input", "/stream", "/capabilities", "/file"):
        assert path in paths
    assert len(paths) >= 29


def test_bad_input_gets_a_4xx_never_a_500(
    schema: Any, guest: tuple[str, dict[str, str]], budget: Budget
) -> None:
    url, auth = guest
    tried = 0
    for operation in operations(schema):
        if operation.path in NOT_FUZZED:
            continue

        def check(case: Any) -> None:
            response = case.call(base_url=url, headers=auth, timeout=60)
            # 2xx means the server accepted what the schema calls invalid (FastAPI is lenient with
            # extra fields and coerces "1" to 1); then it ran it, and only a crash is wrong.
            assert response.status_code < 500 or CRASH not in response.text, describe(case, response)
            if response.status_code >= 500:
                assert response.headers.get("content-type", "").startswith("application/json") or (
                    response.text.strip() and CRASH not in response.text
                ), describe(case, response)

        tried += fuzz(operation, GenerationMode.NEGATIVE, budget.examples, check)
    assert tried >= 15  # the routes that take any input


def test_valid_input_never_crashes_the_server(
    schema: Any, guest: tuple[str, dict[str, str]], budget: Budget
) -> None:
    url, auth = guest
    for operation in operations(schema):
        if operation.path in NOT_FUZZED | WAITING:
            continue

        def check(case: Any) -> None:
            response = case.call(base_url=url, headers=auth, timeout=60)
            assert not (response.status_code == 500 and response.text == CRASH), describe(case, response)

        fuzz(operation, GenerationMode.POSITIVE, budget.examples, check)


def test_every_route_needs_the_token(schema: Any, guest: tuple[str, dict[str, str]]) -> None:
    url, _ = guest
    routes = sorted({(op.method.upper(), op.path) for op in operations(schema)})
    routes += [("GET", "/openapi.json"), ("GET", "/docs"), ("GET", "/redoc"), ("GET", "/no-such-route")]
    refused = []
    with httpx.Client(base_url=url, timeout=30) as client:
        for method, path in routes:
            for headers, params in [
                ({}, {}),
                ({"Authorization": "Bearer wrong"}, {}),
                ({"Authorization": "Basic d3Jvbmc6d3Jvbmc="}, {}),
                ({}, {"token": "wrong"}),
                ({}, {"token": ""}),
            ]:
                response = client.request(method, path, headers=headers, params=params)
                assert response.status_code == 401, (method, path, headers, params, response.text)
                assert response.json() == {"detail": "missing or wrong token"}
                refused.append(path)
    assert len(refused) >= 5 * 29


@pytest.mark.parametrize(
    ("method", "path", "kwargs"),
    [
        ("GET", "/stream", {"params": {"fps": "0"}}),
        ("GET", "/stream", {"params": {"fps": "many"}}),
        ("GET", "/stream", {"params": {"quality": "500"}}),
        ("GET", "/stream", {"params": {"max_width": "-3"}}),
        ("POST", "/setup/download_file", {"content": b"{not json"}),
        ("POST", "/setup/download_file", {"json": {"url": 5, "path": []}}),
        ("POST", "/setup/download_file", {"json": []}),
        ("POST", "/setup/download_file", {"json": {"url": "", "path": ""}}),
        # Found by the fuzzing above: each was a bare 500 (or a guest deaf for hours) before.
        ("POST", "/execute", {"json": {}}),
        ("POST", "/execute", {"json": {"command": []}}),
        ("POST", "/setup/execute", {"json": {"command": "echo 'unbalanced"}}),
        ("POST", "/execute", {"json": {"command": "echo a\0b", "shell": True}}),
        ("POST", "/setup/launch", {"json": {"command": "  ", "shell": True}}),
        ("POST", "/execute_with_verification", {"json": {"command": ["ls", "\0"]}}),
        ("POST", "/setup/upload", {"data": {"file_path": "/home/user/a\0b"}, "files": {"file_data": b"x"}}),
        ("POST", "/input", {"json": {"actions": [{"kind": "scroll", "dy": -(10**9)}]}}),
        ("POST", "/input", {"json": {"actions": [{"kind": "wait", "seconds": 86400}]}}),
        ("POST", "/input", {"json": {"actions": [{"kind": "click", "x": 10**9, "y": 5}]}}),
    ],
)
def test_known_bad_input_gets_a_4xx(
    guest: tuple[str, dict[str, str]], method: str, path: str, kwargs: dict[str, Any]
) -> None:
    url, auth = guest
    response = httpx.request(method, url + path, headers=auth, timeout=30, **kwargs)
    assert 400 <= response.status_code < 500, response.text
    assert CRASH not in response.text
