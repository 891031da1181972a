"""Task templates, duplicates, recorded solutions and saving into a task folder with its index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osw_studio.cli import main
from osw_studio.core.actions import Click, Typing
from osw_studio.core.errors import TaskError
from osw_studio.tasks.authoring import (
    TEMPLATES,
    duplicate_task,
    new_task,
    save_task,
    solution_data,
)
from osw_studio.tasks.demonstration import DemoStep
from osw_studio.tasks.load import load_task, load_tasks, parse_task


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_every_template_is_a_valid_task_with_a_fresh_id(name: str) -> None:
    a, b = new_task(name), new_task(name)
    assert parse_task(a).id != parse_task(b).id
    a["config"].append({"type": "sleep", "parameters": {"seconds": 1}})
    assert new_task(name)["config"] != a["config"]  # templates are copied, not shared


def test_an_unknown_template_says_which_exist() -> None:
    with pytest.raises(TaskError, match="command"):
        new_task("nope")


def test_duplicate_gets_a_new_id_and_drops_the_originals_screenshots() -> None:
    data = new_task("command", task_id="orig")
    data["solution"] = [{"actions": [{"kind": "done"}], "screenshot": "orig.solution/step_0001.png"}]
    copy = duplicate_task(data, "copy")
    assert copy["id"] == "copy" and copy["solution"] == [{"actions": [{"kind": "done"}]}]
    assert data["solution"][0]["screenshot"] == "orig.solution/step_0001.png"  # original untouched


def test_solution_data_ends_with_done_unless_already_terminal() -> None:
    steps = [DemoStep([Click(x=1, y=2)], frame="a"), DemoStep([Typing(text="x")], frame=None)]
    data, files = solution_data(steps, "t")
    assert [s.get("screenshot") for s in data] == ["t.solution/step_0001.png", None, None]
    assert data[-1] == {"actions": [{"kind": "done"}]}
    assert files == {"t.solution/step_0001.png": "a"}
    failing, _ = solution_data(steps, "t", end="fail", screens=False)
    assert failing[-1] == {"actions": [{"kind": "fail"}]} and "screenshot" not in failing[0]
    assert solution_data([], "t", end=None) == ([], {})


def recorded(task_id: str) -> dict[str, object]:
    data = new_task("command", task_id=task_id)
    steps = [DemoStep([Click(x=5, y=5)], frame=1), DemoStep([Typing(text="echo done\n")], frame=2)]
    data["solution"], _ = solution_data(steps, task_id)
    return data


def test_save_writes_the_task_its_screenshots_and_a_valid_index(tmp_path: Path) -> None:
    index = tmp_path / "test_all.json"
    files = {"t1.solution/step_0001.png": b"png1", "t1.solution/step_0002.png": b"png2"}
    path = save_task(recorded("t1"), tmp_path, "os", index=index, files=files)
    assert path == tmp_path / "os" / "t1.json"
    assert (tmp_path / "os" / "t1.solution" / "step_0002.png").read_bytes() == b"png2"
    assert json.loads(index.read_text()) == {"os": ["t1"]}
    entry = load_task(path)
    assert entry.task.solution is not None
    shot = entry.task.solution[0].screenshot
    assert shot is not None and (path.parent / shot).read_bytes() == b"png1"
    report = load_tasks([index])
    assert [e.task.id for e in report.entries] == ["t1"] and not report.errors
    assert main(["tasks", "validate", str(index)]) == 0


def test_save_keeps_other_index_entries_and_moves_a_task_between_domains(tmp_path: Path) -> None:
    index = tmp_path / "test_all.json"
    save_task(new_task("command", task_id="a"), tmp_path, "os", index=index)
    save_task(new_task("command", task_id="b"), tmp_path, "os", index=index)
    save_task(new_task("command", task_id="b"), tmp_path, "vs_code", index=index)
    assert json.loads(index.read_text()) == {"os": ["a"], "vs_code": ["b"]}
    assert main(["tasks", "validate", str(index)]) == 0


def test_resaving_a_new_recording_removes_screenshots_it_no_longer_names(tmp_path: Path) -> None:
    files = {f"t.solution/step_000{i}.png": b"x" for i in (1, 2, 3)}
    data = recorded("t")
    save_task(data, tmp_path, "os", files=files)
    data["solution"] = data["solution"][:1]  # type: ignore[index]
    save_task(data, tmp_path, "os", files={"t.solution/step_0001.png": b"y"})
    assert sorted(p.name for p in (tmp_path / "os" / "t.solution").iterdir()) == ["step_0001.png"]


def test_save_into_an_osworld_layout_keeps_the_index_valid(tmp_path: Path) -> None:
    (tmp_path / "examples" / "os").mkdir(parents=True)
    index = tmp_path / "evaluation_examples_test.json"
    index.write_text(json.dumps({"os": []}))
    path = save_task(new_task("infeasible", task_id="new-one"), tmp_path / "examples", "os", index=index)
    assert path == tmp_path / "examples" / "os" / "new-one.json"
    assert main(["tasks", "validate", str(index)]) == 0


def test_an_osworld_task_duplicated_and_saved_loads_back_equal(tmp_path: Path, osworld_dir: Path) -> None:
    source = next((osworld_dir / "examples" / "os").glob("*.json"))
    original = json.loads(source.read_text())
    copy = duplicate_task(original, "dup")
    path = save_task(copy, tmp_path, "os")
    assert {**load_task(path).task.dump(), "id": original["id"]} == original


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"id": "../escape"}, "is not a plain name"),
        ({"evaluator": {}}, "$.evaluator.func"),
        ({"config": [{"type": "teleport"}]}, "unknown setup step type 'teleport'"),
    ],
)
def test_save_refuses_bad_tasks_naming_the_problem(
    tmp_path: Path, change: dict[str, object], message: str
) -> None:
    data = {**new_task("command", task_id="ok"), **change}
    with pytest.raises(TaskError) as caught:
        save_task(data, tmp_path, "os")
    assert message in str(caught.value)
    assert not list(tmp_path.rglob("*.json"))


def test_save_refuses_a_file_that_is_not_an_index_or_lists_tasks_elsewhere(tmp_path: Path) -> None:
    bogus = tmp_path / "index.json"
    bogus.write_text(json.dumps({"id": "x", "instruction": "y"}))
    with pytest.raises(TaskError, match="not an index"):
        save_task(new_task(task_id="t"), tmp_path, "os", index=bogus)
    elsewhere = tmp_path / "other" / "index.json"
    with pytest.raises(TaskError, match="lists tasks in"):
        save_task(new_task(task_id="t"), tmp_path, "os", index=elsewhere)


def test_save_refuses_a_screenshot_outside_the_task_folder(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match="outside"):
        save_task(new_task(task_id="t"), tmp_path / "tasks", "os", files={"../../evil.png": b"x"})
    assert not (tmp_path / "evil.png").exists()
