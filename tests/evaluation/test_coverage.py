"""`osw-studio eval coverage` on OSWorld's 369 tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osw_studio.cli import main


def test_coverage_of_the_osworld_tasks_is_at_least_90_percent(
    osworld_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "coverage", str(osworld_dir / "examples"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    total = report["total"]
    assert total["tasks"] == 369
    assert total["covered"] / total["tasks"] >= 0.90
    assert sum(d["tasks"] for d in report["domains"]) == 369
    # Google Drive and login steps need credentials: never covered.
    assert total["missing"]["setup googledrive"] == 8 and total["missing"]["setup login"] == 8
    assert all(
        "setup googledrive" in names
        for tid, names in report["uncovered"].items()
        if tid.startswith("4e9f0faf")
    )


def test_coverage_table(osworld_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "coverage", str(osworld_dir / "test_small.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:4] == ["domain", "tasks", "covered", "%"]
    total = next(line.split() for line in lines if line.startswith("all "))
    assert total[1] == "39"


def test_coverage_of_an_empty_folder_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "coverage", str(tmp_path)]) == 2
    assert "no task files found" in capsys.readouterr().err
