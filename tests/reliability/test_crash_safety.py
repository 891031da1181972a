"""Crash safety: ``kill -9`` at random points of real batch runs, then resume; a full disk.

The batch (``osw-studio eval run`` with the replay agent, on a real sandbox reached as a remote guest) is
killed with SIGKILL at a seeded random moment, again and again. After every kill each run store must read
back whole (no torn line, every step's screen on disk, results consistent) and ``summary.json`` must
parse; at the end ``--resume`` finishes the suite with every task scored exactly once.

The full-disk test writes a run store onto a small tmpfs (or, where mounting is not allowed, under
``RLIMIT_FSIZE``) until it is full: a clear StoreError, and every step written before it reads back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from osw_studio.core.errors import StoreError
from osw_studio.core.step import EpisodeResult, StepRecord
from osw_studio.core.task import Task
from osw_studio.envs.local import LocalEnv
from osw_studio.runner.store import RunStoreWriter
from osw_studio.trajectory.store import RunStore, iter_runs
from tests.batch.suite import write_suite
from tests.fakes.machine import fresh_env
from tests.reliability.conftest import SEED, Budget
from tests.runner.conftest import ROOT

pytestmark = [pytest.mark.xvfb]


async def start_batch(suite: Path, out: Path, sandbox: LocalEnv, home: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "osw_studio", "eval", "run", str(suite), "--agent", "replay"],
        *["--provider", "remote", sandbox.url, "--out", str(out), "--resume", "--recycle", "error"],
        cwd=ROOT,
        env=fresh_env(home, OSW_GUEST_TOKEN=sandbox.token),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def check_stores(out: Path) -> tuple[int, int]:
    """Read back every run store under ``out``; return (runs, steps). Fails on any damage."""
    runs = steps_seen = 0
    if not (out / "runs").is_dir() or not any((out / "runs").iterdir()):
        return 0, 0  # killed before the first run folder
    for run in iter_runs([out / "runs"]):
        runs += 1
        assert run.meta.task_id.startswith("batch-"), run
        steps = list(run.iter_steps())  # raises StoreError on a damaged line
        steps_seen += len(steps)
        assert not run.torn, f"{run}: torn last line"
        assert [s.index for s in steps] == list(range(1, len(steps) + 1)), run
        for step in steps:
            screen = run.screenshot_path(step)
            assert screen is not None and screen.read_bytes().startswith(b"\x89PNG"), (run, step.index)
        if run.result is not None:
            assert run.result.steps == len(steps), run
        else:
            assert run.status == "interrupted" and run.interrupted
    summary = out / "summary.json"
    if summary.exists():
        json.loads(summary.read_text())  # written atomically: never half a file
    return runs, steps_seen


@pytest.mark.timeout(900)
@pytest.mark.asyncio(loop_scope="module")
async def test_kill_9_at_random_points_then_every_store_reads_back_and_the_batch_resumes(
    sandbox: LocalEnv, tmp_path: Path, budget: Budget
) -> None:
    kills = budget.kill_episodes
    suite = write_suite(tmp_path / "suite", count=kills + 3)
    out = tmp_path / "out"
    rng = random.Random(SEED)
    progressed = steps_before = 0
    for _ in range(kills):
        child = await start_batch(suite, out, sandbox, tmp_path)
        # Import and connect take a second or two, a task about 1.5 s: this lands anywhere in the
        # start, a reset, a step being written, an evaluation or a summary being rewritten.
        await asyncio.sleep(rng.uniform(1.0, 5.0))
        if child.returncode is None:
            child.send_signal(signal.SIGKILL)
        await child.communicate()
        _, steps = check_stores(out)
        progressed += steps > steps_before
        steps_before = steps
    assert progressed >= kills // 2, "most kills landed before any step: raise the delays"
    interrupted = [run for run in iter_runs([out / "runs"]) if run.result is None]
    assert interrupted, "no kill landed inside an episode"

    child = await start_batch(suite, out, sandbox, tmp_path)
    output, _ = await asyncio.wait_for(child.communicate(), 300)
    assert child.returncode == 0, output.decode()[-2000:]
    check_stores(out)
    summary = json.loads((out / "summary.json").read_text())
    scored = [t for t in summary["tasks"] if t.get("score") is not None]
    assert len(scored) == kills + 3 == len({(t["domain"], t["task_id"]) for t in scored})
    assert all(t["score"] == 1.0 for t in scored), [t for t in scored if t["score"] != 1.0]


TASK = Task.model_validate(
    {"id": "disk-full", "instruction": "Fill the disk.", "config": [], "evaluator": {"func": "infeasible"}}
)


def fill_store(root: Path) -> tuple[Path, int, StoreError]:
    """Write steps with 20 KB screens until the store fails; return the run, steps written, the error."""
    writer = RunStoreWriter.create(root, TASK, model="m")
    screen = b"\x89PNG\r\n\x1a\n" + random.Random(SEED).randbytes(20_000)
    written = 0
    try:
        for index in range(1, 10_000):
            step = StepRecord(index=index, response="x" * 2000, thought=f"step {index}")
            writer.write_step(step, screen)
            written += 1
    except StoreError as exc:
        error = exc
    else:
        pytest.fail("the disk never filled up")
    result = EpisodeResult(
        success=False, score=0.0, steps=written, status="error", error=str(error), task_id=TASK.id
    )
    with contextlib.suppress(StoreError):  # result.json may not fit either: the run reads as interrupted
        writer.finish(result)
    writer.close()
    return writer.path, written, error


def check_full_store(path: Path, written: int, error: StoreError) -> None:
    text = str(error)
    assert "No space left on device" in text or "File too large" in text, text
    assert "free some disk space" in text or "file size limit" in text, text
    run = RunStore(path)
    steps = list(run.iter_steps())
    assert [s.index for s in steps] == list(range(1, written + 1))
    assert not run.torn
    assert (path / "steps.jsonl").read_bytes().endswith(b"\n") or written == 0


@pytest.fixture
def small_disk(tmp_path: Path) -> Path | None:
    """A 1 MiB tmpfs, or None where mounting is not permitted."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True, check=False
    )
    if done.returncode != 0:
        yield None
        return
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.timeout(60)
def test_a_full_disk_gives_a_clear_error_and_no_corrupt_jsonl(
    small_disk: Path | None, tmp_path: Path
) -> None:
    if small_disk is not None:
        path, written, error = fill_store(small_disk)
        assert written > 3
        check_full_store(path, written, error)
        return
    # No mount permission: the same through a file size limit, in a child process.
    code = (
        "import resource, sys; from pathlib import Path;"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000));"
        "from tests.reliability.test_crash_safety import fill_store;"
        "path, written, error = fill_store(Path(sys.argv[1]));"
        "print(path); print(written); print(error)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, capture_output=True, text=True, check=True
    )
    path, written, message = done.stdout.splitlines()[:3]
    check_full_store(Path(path), int(written), StoreError(message))
