"""The Ray backend against a Ray instance this test starts on this machine (loopback only)."""

from __future__ import annotations

import contextlib
import importlib.util
import os
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


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    with warnings_from_ray_ignored():
        ray.init(address="local", include_dashboard=False, num_cpus=2, log_to_driver=False)
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
