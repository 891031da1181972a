"""The run store: what the writer leaves on disk and what the reader makes of it, crashes included."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from osw_studio.core.actions import Click
from osw_studio.core.errors import StoreError
from osw_studio.core.step import StepRecord
from osw_studio.core.task import Task
from osw_studio.runner.store import RunStoreWriter
from osw_studio.trajectory.store import RunStore, iter_runs
from tests.fakes.runs import SyntheticRun, tiny_png, write_run

TASK = Task.model_validate({"id": "abc-123", "instruction": "Open a terminal", "evaluator": {"func": "x"}})


def test_finished_run_reads_back_everything(tmp_path: Path) -> None:
    path = write_run(tmp_path / "runs", SyntheticRun("t-1", steps=4, edited=(2,), human=(3,)))
    run = RunStore(path)
    assert run.meta.task_id == "t-1" and run.meta.domain == "os" and run.meta.model == "test-model"
    assert run.meta.versions["osw_studio"]
    assert run.meta.finished_at is not None and run.meta.finished_at >= run.meta.started_at
    steps = list(run.iter_steps())
    assert [s.index for s in steps] == [1, 2, 3, 4]
    assert [s.source for s in steps] == ["agent", "agent", "human", "agent"]
    assert steps[1].verdict == "edited" and steps[1].proposed == [Click(x=1, y=1)]
    assert run.result is not None and run.result.score == 1.0
    assert run.status == "finished" and not run.interrupted
    png = run.screenshot_path(steps[0])
    assert png is not None and png.name == "step_0001.png" and png.read_bytes()[:4] == b"\x89PNG"
    tree = run.accessibility_path(steps[0])
    assert tree is not None and tree.read_text() == "<desktop-frame/>"
    assert run.accessibility_path(steps[1]) is None
    assert run.final_screen_path() is not None
    assert run.count_steps() == 4


def test_run_ids_sort_by_start_and_name_the_task(tmp_path: Path) -> None:
    first = RunStoreWriter.create(tmp_path, TASK)
    first.close()
    second = RunStoreWriter.create(tmp_path, TASK)
    second.close()
    assert first.run_id != second.run_id
    stamp, short, suffix = first.run_id.split("-", 2)[0], "abc-123", first.run_id.rsplit("-", 1)[1]
    assert first.run_id == f"{stamp}-{short}-{suffix}" and stamp.endswith("Z") and len(suffix) == 6
    assert [r.run_id for r in iter_runs([tmp_path])] == sorted([first.run_id, second.run_id])


def test_settings_snapshot_has_no_secrets(tmp_path: Path) -> None:
    writer = RunStoreWriter.create(
        tmp_path,
        TASK,
        settings={"model_provider": {"api_key": "plain-value-1", "base_url": "http://127.0.0.1:1/v1"}},
        secrets=["my-known-secret-9"],
        note="key my-known-secret-9 and sk-abcdefghijklmnopqrstuv",
    )
    writer.write_step(StepRecord(index=1, response="use my-known-secret-9", executed=[Click(x=1, y=2)]))
    writer.close()
    text = "".join(p.read_text() for p in writer.path.rglob("*") if p.is_file())
    for secret in ("plain-value-1", "my-known-secret-9", "sk-abcdefghijklmnopqrstuv"):
        assert secret not in text
    assert "http://127.0.0.1:1/v1" in text


def test_missing_result_reads_as_interrupted(tmp_path: Path) -> None:
    path = write_run(tmp_path, SyntheticRun("t-2", steps=3, finished=False))
    run = RunStore(path)
    assert run.result is None
    assert run.status == "interrupted" and run.interrupted
    assert len(list(run.iter_steps())) == 3 and not run.torn


def test_torn_last_line_is_skipped_and_flags_the_run(tmp_path: Path) -> None:
    path = write_run(tmp_path, SyntheticRun("t-3", steps=3, finished=False))
    with open(path / "steps.jsonl", "ab") as f:
        f.write(b'{"index": 4, "source": "ag')
    run = RunStore(path)
    steps = list(run.iter_steps())
    assert [s.index for s in steps] == [1, 2, 3]
    assert run.torn and run.interrupted and run.status == "interrupted"


def test_damaged_middle_line_is_an_error_naming_the_line(tmp_path: Path) -> None:
    path = write_run(tmp_path, SyntheticRun("t-4", steps=3))
    lines = (path / "steps.jsonl").read_bytes().splitlines(keepends=True)
    (path / "steps.jsonl").write_bytes(lines[0] + b"garbage\n" + lines[2])
    with pytest.raises(StoreError, match="line 2 is not a valid step"):
        list(RunStore(path).iter_steps())


def test_iter_runs_finds_nested_runs_and_rejects_empty_paths(tmp_path: Path) -> None:
    a = write_run(tmp_path / "x" / "runs", SyntheticRun("a"))
    b = write_run(tmp_path / "y" / "deeper" / "runs", SyntheticRun("b"))
    assert [r.path for r in iter_runs([tmp_path])] == [a, b]
    assert [r.path for r in iter_runs([b, a.parent])] == [b, a]
    (tmp_path / "empty").mkdir()
    with pytest.raises(StoreError, match="no run folders"):
        list(iter_runs([tmp_path / "empty"]))
    with pytest.raises(StoreError, match="no such file"):
        list(iter_runs([tmp_path / "missing"]))
    with pytest.raises(StoreError, match="not a run folder"):
        RunStore(tmp_path)


def test_unwritable_place_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError) as info:
        RunStoreWriter.create(tmp_path / "file", TASK)
    assert "cannot create the run folder" in str(info.value) and info.value.hint


def test_closed_writer_refuses_steps(tmp_path: Path) -> None:
    writer = RunStoreWriter.create(tmp_path, TASK)
    writer.close()
    with pytest.raises(StoreError, match="closed"):
        writer.write_step(StepRecord(index=1))


def test_full_disk_never_leaves_a_torn_line(tmp_path: Path) -> None:
    # A real short write: the file size limit (RLIMIT_FSIZE) stops the append part-way, as a full disk does.
    script = textwrap.dedent(
        f"""
        import resource, signal, sys
        from pathlib import Path
        from osw_studio.core.errors import StoreError
        from osw_studio.core.step import StepRecord
        from osw_studio.core.task import Task
        from osw_studio.runner.store import RunStoreWriter
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        task = Task.model_validate({{"id": "t", "instruction": "i", "evaluator": {{"func": "x"}}}})
        w = RunStoreWriter.create(Path({str(tmp_path)!r}), task)
        w.write_step(StepRecord(index=1, response="short"))
        size = (w.path / "steps.jsonl").stat().st_size
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 300, size + 300))
        try:
            w.write_step(StepRecord(index=2, response="x" * 5000))
        except StoreError as exc:
            print("ERROR", exc)
        w.write_step(StepRecord(index=3, response="fits"))
        print(w.path)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    error_line, path_line = out.stdout.strip().splitlines()
    assert error_line.startswith("ERROR ") and "cannot append the step" in error_line
    assert "file size limit" in error_line
    run = RunStore(path_line)
    lines = (run.path / "steps.jsonl").read_bytes().splitlines(keepends=True)
    assert all(line.endswith(b"\n") for line in lines)
    assert [json.loads(line)["index"] for line in lines] == [1, 3]
    assert [s.index for s in run.iter_steps()] == [1, 3] and not run.torn


def test_jpeg_screens_keep_their_extension(tmp_path: Path) -> None:
    with RunStoreWriter.create(tmp_path, TASK, screen_size=(64, 40)) as writer:
        step = writer.write_step(StepRecord(index=1), b"\xff\xd8jpeg", image_format="jpeg")
        writer.write_step(StepRecord(index=2), tiny_png(4, 4))
    assert step.screenshot == "step_0001.jpg"
    assert sorted(p.name for p in (writer.path / "screens").iterdir()) == ["step_0001.jpg", "step_0002.png"]
