"""The loader accepts every OSWorld task, losslessly, and the index files load as suites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osw_studio.cli import main
from osw_studio.tasks import TaskLibrary, load_task, load_tasks


def test_all_369_validate_from_the_cli(osworld_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["tasks", "validate", str(osworld_dir / "examples")])
    out = capsys.readouterr().out
    assert out.strip().splitlines()[-1] == "369 valid, 0 invalid"
    assert code == 0


def test_round_trip_is_lossless_for_all_369(osworld_dir: Path) -> None:
    files = sorted((osworld_dir / "examples").glob("*/*.json"))
    assert len(files) == 369
    for file in files:
        original = json.loads(file.read_text(encoding="utf-8"))
        dumped = load_task(file).task.dump()
        # Compare as JSON text so that 2 vs 2.0 or "true" vs true would show.
        assert json.dumps(dumped, sort_keys=True) == json.dumps(original, sort_keys=True), file.name
        assert load_task(file).task == type(load_task(file).task).model_validate(dumped)


@pytest.mark.parametrize(
    ("index", "count"),
    [
        ("test_all.json", 369),
        ("test_nogdrive.json", 361),
        ("test_small.json", 39),
        ("test_infeasible.json", 28),
    ],
)
def test_index_files_load_as_suites(osworld_dir: Path, index: str, count: int) -> None:
    report = load_tasks([osworld_dir / index])
    assert report.errors == []
    assert len(report.entries) == count
    listed = json.loads((osworld_dir / index).read_text())
    assert {e.domain for e in report.entries} == set(listed)


def test_library_lookup_and_search(osworld_dir: Path) -> None:
    lib = TaskLibrary.from_paths([osworld_dir / "test_all.json"])
    assert len(lib) == 369
    assert lib.domains == sorted(json.loads((osworld_dir / "test_all.json").read_text()))
    entry = lib.get("23393935-50c7-4a86-aeea-2b78fd089c5c")
    assert entry.domain == "os"
    assert "photos" in entry.task.instruction
    found = lib.search("recursively jpg", domain="os")
    assert [e.task.id for e in found] == ["23393935-50c7-4a86-aeea-2b78fd089c5c"]
    vlc = lib.search(app="vlc")
    assert vlc
    assert all("vlc" in e.task.related_apps for e in vlc)
    assert {e.task.id for e in lib.by_domain("vlc") if "vlc" in e.task.related_apps} <= {
        e.task.id for e in vlc
    }
    assert lib.search(has_solution=True) == []
    infeasible = [e for e in lib if e.task.infeasible]
    assert len(infeasible) >= 28


def test_tasks_list_json(osworld_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["tasks", "list", str(osworld_dir / "test_small.json"), "--domain", "os", "--json"])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0
    assert len(rows) == len(json.loads((osworld_dir / "test_small.json").read_text())["os"])
    assert {r["domain"] for r in rows} == {"os"}
