"""``osw-studio eval stats``: OSWorld-style per-domain rates and groups, from our results and OSWorld's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osw_studio.cli import main
from osw_studio.runner.summary import BatchSummary, TaskOutcome, write_summary

SCORES_A = {
    "libreoffice_calc": [1.0, 0.0],
    "libreoffice_writer": [1.0],
    "chrome": [0.5, 1.0, 0.0, 0.0],
    "gimp": [1.0],
    "os": [1.0, 1.0],
}


def our_results(folder: Path) -> None:
    tasks = [
        TaskOutcome(
            task_id=f"{domain}-{i}",
            domain=domain,
            score=score,
            success=score >= 1.0,
            status="finished" if score >= 1.0 else "failed",
        )
        for domain, scores in SCORES_A.items()
        for i, score in enumerate(scores)
    ]
    tasks.append(TaskOutcome(task_id="vlc-0", domain="vlc", status="error", error="the guest went away"))
    tasks.append(TaskOutcome(task_id="vlc-1", domain="vlc", status="interrupted"))
    folder.mkdir()
    write_summary(folder, BatchSummary(model="model-a", tasks=tasks))


def osworld_results(folder: Path) -> None:
    """OSWorld's own layout, as its run.py writes it (one unreadable result.txt counts 0, as there)."""
    base = folder / "pyautogui" / "screenshot" / "model-b"
    for domain, task_id, text in [
        ("libreoffice_calc", "t1", "1.0"),
        ("libreoffice_calc", "t2", "1"),
        ("os", "t3", "0.0"),
        ("os", "t4", "oops"),
    ]:
        (base / domain / task_id).mkdir(parents=True)
        (base / domain / task_id / "result.txt").write_text(text + "\n")


def test_stats_table_with_domains_groups_and_total(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    our_results(tmp_path / "a")
    assert main(["eval", "stats", str(tmp_path / "a")]) == 0
    table = capsys.readouterr().out.split("\n\n")[0]  # the accounting of each folder follows the table
    lines = {line.split()[0]: line.split()[1:] for line in table.splitlines()[1:] if line[0] != "-"}
    assert lines["domain"] == ["tasks", "succ", "rate"]
    assert lines["chrome"] == ["4", "1", "37.5%"]  # OSWorld's rate: the sum of scores over tasks
    assert lines["vlc"] == ["1", "0", "0.0%"]  # the error counts as 0; the interrupted task not at all
    assert lines["Office"] == ["3", "2", "66.7%"]
    assert lines["Daily"] == ["5", "1", "30.0%"]
    assert lines["Professional"] == ["1", "1", "100.0%"]
    assert lines["total"] == ["11", "6", "59.1%"]


def test_stats_compare_with_an_osworld_results_folder_as_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    our_results(tmp_path / "a")
    osworld_results(tmp_path / "b")
    assert main(["eval", "stats", str(tmp_path / "a"), "--compare", str(tmp_path / "b"), "--json"]) == 0
    a, b = json.loads(capsys.readouterr().out)["folders"]
    assert a["label"] == "model-a" and a["total"]["errors"] == 1
    assert {row["name"]: (row["tasks"], row["rate"]) for row in b["domains"]} == {
        "libreoffice_calc": (2, 100.0),
        "os": (2, 0.0),
    }
    assert [g["name"] for g in b["groups"]] == ["Office"]

    assert main(["eval", "stats", str(tmp_path / "a"), "--compare", str(tmp_path / "b")]) == 0
    table = capsys.readouterr().out.split("\n\n")[0].splitlines()
    assert table[0].split() == ["model-a", "b"]
    assert table[-1].split() == ["total", "11", "6", "59.1%", "4", "2", "50.0%"]


def test_stats_of_a_folder_without_results_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "stats", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no results found" in err and "eval run" in err
