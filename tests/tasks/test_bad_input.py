"""Malformed task files get one clear line naming the file and JSON path, exit 1, and no traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osw_studio.cli import main
from osw_studio.core.errors import TaskError
from osw_studio.tasks.load import iter_tasks, load_task

GOOD: dict[str, Any] = {
    "id": "t-1",
    "instruction": "Create a file",
    "config": [
        {"type": "execute", "parameters": {"command": ["touch", "/tmp/x"], "shell": False}},
        {"type": "sleep", "parameters": {"seconds": 1}},
    ],
    "evaluator": {"func": "exact_match", "result": {"type": "vm_command_line"}, "expected": {"type": "rule"}},
}


def write(tmp_path: Path, data: Any, name: str = "task.json") -> Path:
    path = tmp_path / name
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(json.dumps(data), encoding="utf-8")
    return path


def variant(**changes: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(GOOD))
    for key, value in changes.items():
        if value is None:
            data.pop(key)
        else:
            data[key] = value
    return data


CASES = [
    ("not-json", b'{"id": "x", ', "not valid JSON: Expecting property name enclosed in double quotes", None),
    ("not-utf8", b'{"id": "\xff\xfe"}', "not UTF-8 text", None),
    ("wrong-type", variant(instruction=5), "Input should be a valid string", "$.instruction"),
    ("missing-id", variant(id=None), "required field is missing", "$.id"),
    ("missing-instruction", variant(instruction=None), "required field is missing", "$.instruction"),
    (
        "unknown-step",
        variant(config=[{"type": "teleport", "parameters": {}}]),
        "unknown setup step type 'teleport'",
        "$.config[0]",
    ),
    (
        "bad-step-params",
        variant(config=[{"type": "sleep", "parameters": {"seconds": "soon"}}]),
        "Input should be a valid",
        "$.config[0].parameters.seconds",
    ),
    (
        "download-without-path",
        variant(config=[{"type": "download", "parameters": {"files": [{"url": "http://x"}]}}]),
        "required field is missing",
        "$.config[0].parameters.files[0].path",
    ),
    ("not-an-object", [1, 2], "a task must be a JSON object, not list", "$"),
    (
        "bad-conj-lists",
        variant(evaluator={"func": ["a", "b"], "conj": "and", "result": [{"type": "rule"}]}),
        "result has 1 entries but func has 2",
        "$.evaluator",
    ),
]


@pytest.mark.parametrize(("name", "data", "message", "path"), CASES, ids=[c[0] for c in CASES])
def test_bad_file_gives_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, data: Any, message: str, path: str | None
) -> None:
    file = write(tmp_path, data)
    code = main(["tasks", "validate", str(file)])
    out, err = capsys.readouterr()
    lines = out.strip().splitlines()
    assert code == 1
    assert lines[-1] == "0 valid, 1 invalid"
    assert len(lines) == 2
    assert lines[0].startswith(f"{file}: ")
    if path is not None:
        assert lines[0].startswith(f"{file}: {path}: ")
    assert message in lines[0]
    assert "Traceback" not in out + err


def test_huge_file_is_refused_before_parsing(tmp_path: Path) -> None:
    file = tmp_path / "huge.json"
    file.write_text('{"id": "x", "instruction": "' + "a" * 10_000_000 + '"}')
    with pytest.raises(TaskError, match=r"file is 10\.0 MB; task files are at most 4 MB"):
        load_task(file)


def test_cli_process_shows_no_traceback(tmp_path: Path) -> None:
    good = write(tmp_path, GOOD, "good.json")
    bad = write(tmp_path, b"\x00\x01 nonsense", "bad.json")
    proc = subprocess.run(
        [sys.executable, "-m", "osw_studio", "tasks", "validate", str(good), str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        f"{bad}: not valid JSON: Expecting value at line 1, column 1",
        "1 valid, 1 invalid",
    ]
    assert "Traceback" not in proc.stderr


def test_missing_path_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["tasks", "validate", str(tmp_path / "nope.json")])
    out = capsys.readouterr().out
    assert code == 1
    assert "nope.json: cannot read the file: No such file or directory" in out


def test_index_with_missing_task_names_the_entry(tmp_path: Path) -> None:
    (tmp_path / "examples" / "os").mkdir(parents=True)
    write(tmp_path / "examples" / "os", GOOD, "t-1.json")
    index = write(tmp_path, {"os": ["t-1", "t-2"]}, "test_all.json")
    items = list(iter_tasks(index))
    assert len(items) == 2
    assert not isinstance(items[0], TaskError)
    assert isinstance(items[1], TaskError)
    assert str(items[1]).startswith(f"{index}: $.os[1]: task file ")


def test_folder_skips_index_and_assets(tmp_path: Path) -> None:
    (tmp_path / "os").mkdir()
    (tmp_path / "assets").mkdir()
    write(tmp_path / "os", GOOD, "t-1.json")
    write(tmp_path / "assets", {"not": "a task"}, "data.json")
    write(tmp_path, {"os": ["t-1"]}, "test_all.json")
    items = list(iter_tasks(tmp_path))
    assert len(items) == 1
    assert not isinstance(items[0], TaskError)
    assert items[0].domain == "os"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(data=json_values)
def test_fuzz_arbitrary_json_only_raises_task_error(
    tmp_path_factory: pytest.TempPathFactory, data: Any
) -> None:
    file = tmp_path_factory.mktemp("fuzz") / "t.json"
    file.write_text(json.dumps(data))
    try:
        load_task(file)
    except TaskError as exc:
        assert str(exc).startswith(str(file))


task_like = st.fixed_dictionaries(
    {
        "id": st.one_of(st.text(max_size=5), st.integers(), st.none()),
        "instruction": st.one_of(st.text(max_size=5), st.none(), st.lists(st.text())),
        "config": st.lists(
            st.fixed_dictionaries(
                {
                    "type": st.sampled_from(["download", "launch", "execute", "sleep", "open", "nope", 3]),
                    "parameters": st.dictionaries(
                        st.sampled_from(["files", "command", "seconds", "path", "shell"]),
                        json_values,
                        max_size=3,
                    ),
                }
            ),
            max_size=3,
        ),
        "evaluator": st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {"func": st.one_of(st.text(max_size=4), st.lists(st.text(max_size=4), max_size=3))}
            ),
        ),
    }
)


@settings(max_examples=300, deadline=None)
@given(data=task_like)
def test_fuzz_task_shaped_json(tmp_path_factory: pytest.TempPathFactory, data: dict[str, Any]) -> None:
    file = tmp_path_factory.mktemp("fuzz") / "t.json"
    file.write_text(json.dumps(data))
    try:
        entry = load_task(file)
    except TaskError as exc:
        assert str(exc).startswith(f"{file}: $")
    else:
        assert entry.task.dump() == data


@settings(max_examples=200, deadline=None)
@given(raw=st.binary(max_size=200))
def test_fuzz_raw_bytes(tmp_path_factory: pytest.TempPathFactory, raw: bytes) -> None:
    file = tmp_path_factory.mktemp("fuzz") / "t.json"
    file.write_bytes(raw)
    try:
        load_task(file)
    except TaskError as exc:
        assert str(exc).startswith(str(file))
