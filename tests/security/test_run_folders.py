"""Hostile run folders and results folders: link schemes, FIFOs, two runs on one ``--out``."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from osw_studio.cli import main
from osw_studio.core.errors import OswError, StoreError
from osw_studio.core.review import ReviewEvent
from osw_studio.runner.out_lock import LOCK_NAME, OutLock
from osw_studio.trajectory.export import export_runs
from osw_studio.trajectory.review import REVIEW_JSONL, ReviewLog
from tests.fakes.runs import SyntheticRun, write_run

pytestmark = pytest.mark.timeout(30)


def test_a_run_folder_named_like_a_url_is_never_a_live_link(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    first = write_run(runs, SyntheticRun("t1", steps=2))
    hostile = first.rename(runs / "javascript:alert(document.domain)")
    second = write_run(runs, SyntheticRun("t2", steps=2))
    second.rename(runs / "https:evil.example")
    export_runs([runs], "html", tmp_path / "out")
    index = (tmp_path / "out" / "index.html").read_text()
    assert 'href="javascript:' not in index and 'href="https:' not in index
    assert 'href="./javascript%3Aalert%28document.domain%29.html"' in index
    assert (tmp_path / "out" / f"{hostile.name}.html").is_file()  # the link names the real file


def test_review_of_a_run_whose_review_log_is_a_fifo_refuses_it_at_once(tmp_path: Path) -> None:
    run = write_run(tmp_path, SyntheticRun("t1", steps=2))
    os.mkfifo(run / REVIEW_JSONL)
    done: list[object] = []

    def read() -> None:
        try:
            ReviewLog(run).events()
        except StoreError as exc:
            done.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(5)
    assert not reader.is_alive(), "reading a FIFO named review.jsonl hangs"
    assert done and "not a regular file" in str(done[0])
    with pytest.raises(StoreError, match=r"cannot write the review|not a regular file"):
        ReviewLog(run).append(ReviewEvent(reviewer="ann", step=1, label="correct"))


def test_review_show_on_a_fifo_ends_with_an_error_not_a_hang(tmp_path: Path) -> None:
    run = write_run(tmp_path, SyntheticRun("t1", steps=2))
    os.mkfifo(run / REVIEW_JSONL)
    code = [sys.executable, "-c", "import sys; from osw_studio.cli import main; sys.exit(main(sys.argv[1:]))"]
    done = subprocess.run([*code, "review", "show", str(run)], capture_output=True, text=True, timeout=20)
    assert done.returncode != 0
    assert "not a regular file" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_second_run_on_a_locked_out_folder_cannot_start(tmp_path: Path) -> None:
    with OutLock(tmp_path):
        holder = (tmp_path / LOCK_NAME).read_text().strip()
        with pytest.raises(OswError, match=f"another run \\(PID {holder}\\)"):
            # A second process, as a second `eval run` would be.
            child = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    "import sys; from pathlib import Path; from osw_studio.runner.out_lock import OutLock\n"
                    "try:\n    OutLock(Path(sys.argv[1])).__enter__()\n"
                    "except Exception as e:\n    print(e); sys.exit(3)",
                    str(tmp_path),
                ],
                capture_output=True,
                text=True,
                timeout=20,
            )
            assert child.returncode == 3
            raise OswError(child.stdout.strip())
    assert not (tmp_path / LOCK_NAME).exists()


def test_a_lock_left_by_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / LOCK_NAME).write_text(f"{dead.pid}\n")
    with OutLock(tmp_path):
        assert (tmp_path / LOCK_NAME).read_text() == f"{os.getpid()}\n"
    (tmp_path / LOCK_NAME).write_text("garbage")
    with OutLock(tmp_path):
        pass


def test_eval_run_on_a_held_out_folder_stops_before_any_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    suite = Path(__file__).resolve().parents[2] / "tasks"
    with OutLock(out):
        code = main(["eval", "run", str(suite / "test_small.json"), "--agent", "replay", "--out", str(out)])
    assert code != 0
    err = capsys.readouterr().err
    assert "another run" in err and "Traceback" not in err
    assert not (out / "summary.json").exists()
