"""The Ray backend against a Ray instance this test starts in a network namespace of its own.

Ray's gRPC servers listen on every interface whatever the node address, so the Ray tests run in a
child pytest inside private network and PID namespaces (``unshare --net --pid``, only loopback up):
nothing they start can be reached from outside the machine, and the instance dies with the namespace.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from osw_studio.core.errors import OswError
from osw_studio.envs.setup import SetupOptions
from osw_studio.runner.batch import Batch
from osw_studio.runner.episode import EpisodeConfig
from osw_studio.runner.slot import AgentMaker, EnvMaker, SlotConfig
from osw_studio.settings.model import Settings
from osw_studio.tasks.load import load_tasks
from osw_studio.trajectory.store import RunStore
from tests.batch.suite import write_suite

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

HAS_RAY = importlib.util.find_spec("ray") is not None
INSIDE = "OSW_TEST_RAY_NETNS"
"""Set in the child pytest that runs inside the private network namespace."""
needs_namespace = pytest.mark.skipif(
    os.environ.get(INSIDE) != "1", reason="runs in a private network namespace (see the module docstring)"
)


def unshare_command() -> list[str]:
    """``unshare`` into a new network namespace (with a user namespace of its own when not root)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.fail("unshare (util-linux) is needed to keep Ray's servers off the network")
    user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    # A PID namespace too: whatever Ray leaves running dies with the child pytest (PID 1 there).
    return [unshare, *user, "--net", "--pid", "--fork", "--mount-proc", "--kill-child", "--"]


@pytest.mark.skipif(not HAS_RAY, reason="ray is not installed (pip install 'osw-studio[ray]')")
def test_the_ray_tests_pass_in_a_private_network_namespace() -> None:
    """The child pytest runs this module's Ray tests with only loopback: they must pass there."""
    script = (
        # Ray's shutdown signals its processes without waiting for them; their Popen objects then warn
        # at collection (an error under this project's warning filters). They die with the namespace.
        'ip link set lo up && exec "$0" -m pytest -q -p no:cacheprovider "$1" -m slow -k ray_actor '
        "-W ignore::pytest.PytestUnraisableExceptionWarning"
    )
    child = subprocess.run(
        [*unshare_command(), "sh", "-c", script, sys.executable, __file__],
        env={**os.environ, INSIDE: "1", "RAY_USAGE_STATS_ENABLED": "0"},
        capture_output=True,
        text=True,
        timeout=220,
        check=False,
    )
    assert child.returncode == 0, child.stdout[-3000:] + child.stderr[-2000:]
    assert "1 passed" in child.stdout, child.stdout[-2000:]


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    with warnings_from_ray_ignored():
        ray.init(
            address="local", include_dashboard=False, num_cpus=2, log_to_driver=False,
            _node_ip_address="127.0.0.1",
        )  # fmt: skip
    try:
        yield
    finally:
        ray.shutdown()


@contextlib.contextmanager
def warnings_from_ray_ignored() -> Iterator[None]:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@needs_namespace
@pytest.mark.skipif(not HAS_RAY, reason="ray is not installed (pip install 'osw-studio[ray]')")
async def test_each_env_is_a_ray_actor_and_every_run_comes_back(local_ray: None, tmp_path: Path) -> None:
    from osw_studio.runner.ray_backend import ray_workers

    entries = load_tasks([write_suite(tmp_path / "suite", 4)]).entries
    profile = Settings().resolve_profile().model_copy(update={"agent": "replay"})
    config = SlotConfig(
        episode=EpisodeConfig(max_steps=5),
        task_timeout=60,
        run_meta={"provider": "local", "action_space": "pyautogui", "observation_type": "screenshot"},
    )
    makers = [EnvMaker("local", {"screen": (1280, 800), "setup": SetupOptions()}) for _ in range(2)]
    out = tmp_path / "out"
    workers = list(ray_workers(makers, AgentMaker(profile), config, out / "runs"))
    with warnings_from_ray_ignored():
        summary = await Batch(entries, out, workers).run()

    assert [t.score for t in summary.tasks] == [1.0] * 4
    assert {t.env for t in summary.tasks} == {"ray-1", "ray-2"}
    assert all(w.actors_started == 1 for w in workers)
    # The run stores were written inside the actors and sent back whole.
    runs = [RunStore(p) for p in sorted((out / "runs").iterdir())]
    assert sorted(r.meta.task_id for r in runs) == sorted(e.task.id for e in entries)
    assert all(r.result is not None and r.count_steps() == 3 and r.final_screen_path() for r in runs)
    assert len(list((out / "results").rglob("result.txt"))) == 4


def test_ray_backend_without_ray_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from osw_studio.runner import ray_backend

    monkeypatch.setitem(sys.modules, "ray", None)  # as if it were not installed
    with pytest.raises(OswError, match="needs Ray, which is not installed") as caught:
        ray_backend.connect(None)
    assert "osw-studio[ray]" in (caught.value.hint or "")
