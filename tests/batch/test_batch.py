"""Batch evaluation end to end on local sandbox desktops: a pool of envs, crashes, timeouts and resume."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from osw_studio.agent.base import Agent, Prediction, TokenCallback
from osw_studio.core.errors import StoreError
from osw_studio.core.observation import Observation
from osw_studio.envs.local import LocalProvider
from osw_studio.runner.batch import Batch, BatchProgress
from osw_studio.runner.episode import EpisodeConfig
from osw_studio.runner.slot import AgentMaker, EnvSlot, SlotConfig
from osw_studio.runner.summary import TaskOutcome, read_summary
from osw_studio.settings.model import Settings
from osw_studio.tasks.load import TaskEntry, load_tasks
from osw_studio.trajectory.store import RunStore, is_run_folder
from tests.batch.suite import write_suite

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
REPLAY = Settings().resolve_profile().model_copy(update={"agent": "replay"})


class CrashingAgent(Agent):
    """An agent with a bug: its first prediction raises."""

    async def predict(
        self, instruction: str, observation: Observation, *, on_token: TokenCallback | None = None
    ) -> Prediction:
        raise RuntimeError("agent bug")


class HangingAgent(Agent):
    """An agent whose model never answers."""

    async def predict(
        self, instruction: str, observation: Observation, *, on_token: TokenCallback | None = None
    ) -> Prediction:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")


def agents_with_trouble(crash: str, hang: str) -> AgentMaker:
    """Replay every task's solution, except one task whose agent crashes and one whose agent hangs."""
    replay = AgentMaker(REPLAY)

    class Maker(AgentMaker):
        def __call__(self, entry: TaskEntry) -> Agent:
            if entry.task.id == crash:
                return CrashingAgent()
            if entry.task.id == hang:
                return HangingAgent()
            return replay(entry)

    return Maker(REPLAY)


def osworld_results(out: Path) -> dict[str, str]:
    """OSWorld's layout as a user would look at it: task id -> result.txt content."""
    return {p.parent.name: p.read_text().strip() for p in (out / "results").rglob("result.txt")}


async def test_twelve_tasks_on_three_envs_with_a_crash_and_a_timeout(tmp_path: Path) -> None:
    entries = load_tasks([write_suite(tmp_path / "suite", 12)]).entries
    crash, hang = entries[4].task.id, entries[8].task.id
    config = SlotConfig(
        episode=EpisodeConfig(max_steps=5),
        task_timeout=20.0,
        recycle="error",
        run_meta={"provider": "local", "action_space": "pyautogui", "observation_type": "screenshot"},
    )
    provider = LocalProvider(screen=(1280, 800))
    out = tmp_path / "out"
    slots = [
        EnvSlot(f"env-{i}", provider.create, agents_with_trouble(crash, hang), out / "runs", config)
        for i in (1, 2, 3)
    ]
    batch = Batch(entries, out, slots)
    seen: list[BatchProgress] = []
    finished: list[TaskOutcome] = []
    batch.progress_changed.connect(seen.append)
    batch.task_finished.connect(finished.append)

    summary = await batch.run()

    assert len(finished) == 12 and seen[-1].done == 12 and seen[-1].running == 0
    assert max(p.running for p in seen) == 3  # three envs worked side by side
    by_id = {t.task_id: t for t in summary.tasks}
    assert [t.task_id for t in summary.tasks] == [e.task.id for e in entries]
    assert by_id[crash].status == "error" and "agent bug" in (by_id[crash].error or "")
    assert by_id[hang].status == "error" and "timed out after 20 s" in (by_id[hang].error or "")
    solved = [t for t in summary.tasks if t.task_id not in (crash, hang)]
    assert all(t.score == 1.0 and t.success and t.steps == 3 for t in solved)
    assert Counter(t.env for t in summary.tasks).keys() == {"env-1", "env-2", "env-3"}
    # Each failing task's env was replaced; healthy envs were kept between tasks.
    assert sum(slot.recycled["error"] for slot in slots) == 2
    assert sum(slot.recycled["task"] for slot in slots) == 0

    # Every result is written: a run store per task, summary.json, and OSWorld's layout for scored ones.
    runs = [RunStore(p) for p in sorted((out / "runs").iterdir())]
    assert sorted(r.meta.task_id for r in runs) == sorted(e.task.id for e in entries)
    assert all(r.result is not None for r in runs)
    hung = next(r for r in runs if r.meta.task_id == hang)
    assert (
        hung.result is not None and hung.result.status == "error" and "timed out" in (hung.result.error or "")
    )
    on_disk = read_summary(out)
    assert on_disk is not None and len(on_disk.tasks) == 12
    assert 0 < on_disk.env_utilisation <= 1 and on_disk.sessions[0].envs == 3
    assert osworld_results(out) == {t.task_id: "1.0" for t in solved}
    assert not list(out.parent.glob("**/.*.tmp"))


def test_batch_refuses_a_used_output_folder_without_resume(tmp_path: Path) -> None:
    entries = load_tasks([write_suite(tmp_path / "suite", 2)]).entries
    run = tmp_path / "out" / "runs" / "20250101T000000Z-batch-os-aaaaaa"
    run.mkdir(parents=True)
    (run / "run.json").write_text(
        json.dumps({"run_id": run.name, "task_id": entries[0].task.id, "domain": "os"})
    )
    slot = EnvSlot("env-1", LocalProvider().create, AgentMaker(REPLAY), tmp_path, SlotConfig())
    with pytest.raises(StoreError, match="already holds runs") as caught:
        Batch(entries, tmp_path / "out", [slot]).pending()
    assert "--resume" in (caught.value.hint or "")
    # With resume, the interrupted run (no result) is run again, and so is every other task.
    assert len(Batch(entries, tmp_path / "out", [slot], resume=True).pending()) == 2


def cli(*args: str, **kwargs: object) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "osw_studio", "eval", "run", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,  # type: ignore[call-overload]
    )


def test_cli_scores_the_small_suite_with_replay_on_two_envs(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = cli("tasks/test_small.json", "--agent", "replay", "--envs", "2", "--out", str(out))
    stdout, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 0, stderr
    summary = json.loads((out / "summary.json").read_text())
    index = json.loads((ROOT / "tasks" / "test_small.json").read_text())
    expected = sorted((d, t) for d, ids in index.items() for t in ids)
    assert sorted((t["domain"], t["task_id"]) for t in summary["tasks"]) == expected
    assert all(t["score"] == 1.0 and t["error"] is None and t["time"] > 0 for t in summary["tasks"])
    assert summary["sessions"][0]["envs"] == 2 and 0 < summary["env_utilisation"] <= 1
    assert "env utilisation" in stdout and "total" in stdout
    assert f"{len(expected)}/{len(expected)}" in stderr  # the progress line reached the end

    stats = subprocess.run(
        [sys.executable, "-m", "osw_studio", "eval", "stats", str(out), "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    total = json.loads(stats.stdout)["total"]
    assert {k: total[k] for k in ("name", "tasks", "successes", "score", "errors", "rate", "kinds")} == {
        "name": "total",
        "tasks": len(expected),
        "successes": len(expected),
        "score": float(len(expected)),
        "errors": 0,
        "rate": 100.0,
        "kinds": {"solved": len(expected) - 1, "infeasible": 1},  # screen-resolution-8k is infeasible
    }


def scored_runs(out: Path) -> dict[str, list[str]]:
    """Task id -> run ids with a score, from the run stores on disk."""
    found: dict[str, list[str]] = {}
    for path in sorted((out / "runs").iterdir()):
        if not is_run_folder(path):  # a run the batch is creating (or a kill cut short) has no run.json yet
            continue
        run = RunStore(path)
        if run.result is not None and run.result.score is not None:
            found.setdefault(run.meta.task_id, []).append(run.run_id)
    return found


def test_kill_9_mid_suite_then_resume_finishes_without_redoing(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", 6)
    out = tmp_path / "out"
    proc = cli(str(suite), "--agent", "replay", "--envs", "2", "--out", str(out))
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if (out / "runs").is_dir() and len(scored_runs(out)) >= 2:
                break
            time.sleep(0.1)
        assert proc.poll() is None, "the suite ended before it could be killed"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    before = scored_runs(out)
    assert 2 <= len(before) < 6

    resumed = cli(str(suite), "--agent", "replay", "--envs", "2", "--out", str(out), "--resume")
    stdout, stderr = resumed.communicate(timeout=180)
    assert resumed.returncode == 0, stderr
    assert f"resuming: {len(before)} of 6 tasks already scored" in stdout
    after = scored_runs(out)
    assert len(after) == 6
    for task_id, run_ids in before.items():
        assert after[task_id] == run_ids  # finished tasks were not run again
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["tasks"]) == 6 and all(t["score"] == 1.0 for t in summary["tasks"])
    assert len(summary["sessions"]) == 2 and summary["sessions"][1]["tasks_run"] == 6 - len(before)
    assert len(osworld_results(out)) == 6
