"""``osw-studio export`` as a person runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osw_studio.cli import main
from tests.trajectory.conftest import KNOWN_SECRET, RUNS


def test_export_prints_progress_and_a_summary(
    runs_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SERVICE_API_KEY", KNOWN_SECRET)
    code = main(
        ["export", str(runs_dir), "--format", "sft-messages", "--out", str(tmp_path), "--domain", "chrome"]
    )
    out, err = capsys.readouterr()
    assert code == 0
    assert f"3 of {len(RUNS)} runs exported as sft-messages" in out and "3 filtered out" in out
    assert f"[{'#' * 30}] {len(RUNS)}/{len(RUNS)} runs" in err
    text = (tmp_path / "data.jsonl").read_text()
    assert KNOWN_SECRET not in text  # taken from the environment variable's name
    assert {json.loads(line)["domain"] for line in text.splitlines()} == {"chrome"}


def test_export_user_errors_are_one_line(
    runs_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", str(tmp_path / "nope"), "-f", "html", "-o", str(tmp_path / "o")]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    assert (
        main(["export", str(runs_dir), "-f", "html", "-o", str(tmp_path / "o"), "--since", "last week"]) == 2
    )
    assert "not a date" in capsys.readouterr().err
    code = main(
        ["export", str(runs_dir), "-f", "sft-messages", "-o", str(tmp_path / "o"), "--scrub-typed", "(["]
    )
    assert code == 2 and "bad pattern to scrub typed text (--scrub-typed)" in capsys.readouterr().err
