"""`osw-studio eval coverage` says, per metric and getter name, whether it is differential-tested."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osw_studio.cli import main
from osw_studio.evaluation.parity import DIFFERENTIAL_TESTED
from osw_studio.evaluation.registry import GETTERS, METRICS


def test_every_listed_name_is_implemented() -> None:
    registered = {f"metric {n}" for n in METRICS.names()} | {f"getter {n}" for n in GETTERS.names()}
    unknown = DIFFERENTIAL_TESTED - registered
    assert not unknown, sorted(unknown)


def test_coverage_json_lists_each_name_with_its_parity(
    osworld_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "coverage", str(osworld_dir / "examples"), "--json"]) == 0
    names = {f"{n['kind']} {n['name']}": n for n in json.loads(capsys.readouterr().out)["names"]}
    table = names["metric compare_table"]
    assert table["tasks"] >= 50 and table["implemented"] and table["differential_tested"]
    assert names["getter vm_file"]["implemented"] and names["getter vm_file"]["differential_tested"]
    assert names["getter vm_wallpaper"]["implemented"] and names["getter vm_wallpaper"]["differential_tested"]
    assert all(n["implemented"] for key, n in names.items() if n["differential_tested"])
    # Every name OSWorld's tasks use that we implement is compared with OSWorld's own; the names shown
    # as not differential-tested are the ones not implemented (Google Drive, logins...).
    untested = [n for n in names.values() if not n["differential_tested"]]
    assert untested and not any(n["implemented"] for n in untested)
    # Sorted by how many tasks use a name, most first.
    counts = [n["tasks"] for n in names.values()]
    assert counts == sorted(counts, reverse=True)


def test_coverage_table_shows_the_parity_column(
    osworld_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "coverage", str(osworld_dir / "examples")]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("name "))
    assert "differential-tested against OSWorld" in header
    row = next(line for line in out.splitlines() if line.startswith("metric compare_table "))
    assert row.split()[-2:] == ["yes", "yes"]
    assert "differential-tested" in out.splitlines()[-1]
    assert main(["eval", "coverage", str(osworld_dir / "examples"), "--no-names"]) == 0
    assert "differential-tested" not in capsys.readouterr().out


def test_a_name_with_control_codes_is_shown_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = {
        "id": "t1",
        "instruction": "x",
        "evaluator": {"func": "evil\x1b[2Jname", "result": {"type": "vm_file", "path": "/a", "dest": "a"}},
    }
    (tmp_path / "t1.json").write_text(json.dumps(task), encoding="utf-8")
    assert main(["eval", "coverage", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b[2J" in out


def test_coverage_says_how_the_ocr_metric_can_differ(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = {
        "id": "t1",
        "instruction": "x",
        "evaluator": {
            "func": "compare_image_text",
            "result": {"type": "vm_file", "path": "/home/user/Desktop/ls.png", "dest": "ls.png"},
            "expected": {"type": "rule", "rules": {"type": "text", "text": "ls"}},
        },
    }
    (tmp_path / "t1.json").write_text(json.dumps(task), encoding="utf-8")
    assert main(["eval", "coverage", str(tmp_path), "--json"]) == 0
    names = {f"{n['kind']} {n['name']}": n for n in json.loads(capsys.readouterr().out)["names"]}
    assert "Tesseract" in names["metric compare_image_text"]["differs"]
    assert names["getter vm_file"]["differs"] == ""
    assert main(["eval", "coverage", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(
        line.strip().startswith("metric compare_image_text can differ from OSWorld: reads") for line in lines
    )
    assert "differential-tested" in lines[-1]
