"""Writing tasks: templates for a new task, duplicates, reference solutions, saving into a task folder.

A task is saved as ``<folder>/<domain>/<id>.json``, OSWorld's layout. With an index file (OSWorld's
``{"domain": ["id", ...]}``) the id is listed under its domain (and taken out of any other), so the
index stays valid for OSWorld's runner and for ``osw-studio tasks validate``.

A recorded reference solution lives in the task file under the extra key ``solution`` (OSWorld ignores
keys it does not know, so the file stays a valid OSWorld task). The screenshot each step acted on is a
PNG in the folder ``<id>.solution/`` beside the task file (``step_0001.png``, ...), named in the step's
``screenshot`` relative to the task file; the task loader skips it, and a task folder stays
self-contained when copied.

Examples:
    >>> data = new_task("command", task_id="say-hi")
    >>> data["id"], data["evaluator"]["func"]
    ('say-hi', 'exact_match')
    >>> copy = duplicate_task(data, "say-hi-2")
    >>> copy["id"], data["id"]
    ('say-hi-2', 'say-hi')
    >>> screenshot_name("say-hi", 1)
    'say-hi.solution/step_0001.png'
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
import uuid
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

from osw_studio.core import paths
from osw_studio.core.actions import Done, dump_actions
from osw_studio.core.errors import TaskError
from osw_studio.core.task import Task
from osw_studio.tasks.demonstration import DemoStep
from osw_studio.tasks.load import index_examples_dir, is_index, parse_task, read_json

SOLUTION_DIR_SUFFIX = ".solution"
"""The folder beside a task file that holds its solution's screenshots: ``<id>.solution/``."""

_ID = paths.NAME  # the path policy's plain name: ids and domains name files and folders

_COMMAND_EVALUATOR: dict[str, Any] = {
    "func": "exact_match",
    "result": {"type": "vm_command_line", "command": 'cat "$HOME/Desktop/result.txt"', "shell": True},
    "expected": {"type": "rule", "rules": {"expected": "done\n"}},
}

TEMPLATES: dict[str, dict[str, Any]] = {
    "command": {
        "instruction": "Describe what the person (or agent) should do.",
        "snapshot": "os",
        "source": "osw-studio",
        "config": [
            {
                "type": "execute",
                "parameters": {
                    "command": 'mkdir -p "$HOME/Desktop" && rm -f "$HOME/Desktop/result.txt"',
                    "shell": True,
                },
            },
            {"type": "launch", "parameters": {"command": ["xterm", "-title", "Terminal"]}},
            {"type": "sleep", "parameters": {"seconds": 1}},
        ],
        "trajectory": "trajectories/",
        "related_apps": ["os", "terminal"],
        "evaluator": _COMMAND_EVALUATOR,
    },
    "file": {
        "instruction": "Describe the change the person (or agent) should make to the file.",
        "snapshot": "os",
        "source": "osw-studio",
        "config": [
            {
                "type": "upload_file",
                "parameters": {"files": [{"local_path": "assets/input.txt", "path": "/tmp/input.txt"}]},
            },
            {"type": "open", "parameters": {"path": "/tmp/input.txt"}},
        ],
        "trajectory": "trajectories/",
        "related_apps": [],
        "evaluator": {
            "func": "compare_text_file",
            "result": {"type": "vm_file", "path": "/tmp/input.txt", "dest": "input.txt"},
            "expected": {"type": "local_file", "path": "assets/expected.txt"},
        },
    },
    "infeasible": {
        "instruction": "Ask for something this desktop cannot do; the right answer is FAIL.",
        "snapshot": "os",
        "source": "osw-studio",
        "config": [],
        "trajectory": "trajectories/",
        "related_apps": ["os"],
        "evaluator": {"func": "infeasible"},
    },
}
"""Starting points for a new task, by name: a terminal task checked by a command's output, a file task
checked against an expected file, and an infeasible task (answered with FAIL)."""


def new_task(template: str = "command", *, task_id: str | None = None) -> dict[str, Any]:
    """A new task's JSON data from a template, with a fresh id (a UUID, as OSWorld's) unless given.

    Raises:
        TaskError: If there is no such template.

    >>> sorted(new_task("infeasible"))[:3]
    ['config', 'evaluator', 'id']
    """
    try:
        base = TEMPLATES[template]
    except KeyError:
        raise TaskError(
            f"no task template {template!r}", hint=f"choose one of: {', '.join(TEMPLATES)}"
        ) from None
    return {"id": task_id or str(uuid.uuid4()), **copy.deepcopy(base)}


def duplicate_task(data: Mapping[str, Any], task_id: str | None = None) -> dict[str, Any]:
    """A copy of a task's data under a new id (``<id>-copy`` by default).

    The solution's actions are kept; its screenshots are not (they belong to the original's folder).

    >>> d = duplicate_task({"id": "a", "solution": [{"actions": [], "screenshot": "a.solution/s.png"}]})
    >>> d["id"], d["solution"]
    ('a-copy', [{'actions': []}])
    """
    out = copy.deepcopy(dict(data))
    out["id"] = task_id or f"{data.get('id', 'task')}-copy"
    for step in out.get("solution") or []:
        if isinstance(step, dict):
            step.pop("screenshot", None)
    return out


def screenshot_name(task_id: str, index: int) -> str:
    """Where step ``index`` (1-based) of a task's solution keeps its screenshot, relative to the task file."""
    return f"{task_id}{SOLUTION_DIR_SUFFIX}/step_{index:04d}.png"


def solution_data(
    steps: Sequence[DemoStep], task_id: str, *, screens: bool = True, end: str | None = "done"
) -> tuple[list[dict[str, Any]], dict[str, Hashable]]:
    """A recorded demonstration as the task's ``solution`` list, and which frame each screenshot shows.

    Args:
        steps: The reduced demonstration.
        task_id: The task's id (names the screenshot folder).
        screens: Name a screenshot for each step that saw a frame.
        end: Append a final step with ``done`` (or ``fail``) unless the demonstration ended with one;
            ``None`` appends nothing.

    Returns:
        The JSON data for ``solution``, and ``{screenshot name: frame}`` for the files to write.

    >>> from osw_studio.core.actions import Typing
    >>> data, files = solution_data([DemoStep([Typing(text="hi")], frame=7)], "t")
    >>> data[0]
    {'actions': [{'kind': 'typing', 'text': 'hi'}], 'screenshot': 't.solution/step_0001.png'}
    >>> data[1]
    {'actions': [{'kind': 'done'}]}
    >>> files
    {'t.solution/step_0001.png': 7}
    """
    data: list[dict[str, Any]] = []
    files: dict[str, Hashable] = {}
    for index, step in enumerate(steps, 1):
        item: dict[str, Any] = {"actions": dump_actions(step.actions)}
        if screens and step.frame is not None:
            name = screenshot_name(task_id, index)
            item["screenshot"] = name
            files[name] = step.frame
        data.append(item)
    last = steps[-1].actions[-1] if steps and steps[-1].actions else None
    if end is not None and not (last is not None and last.is_terminal):
        data.append({"actions": [{"kind": end}] if end == "fail" else dump_actions([Done()])})
    return data, files


def check_id(task_id: str) -> None:
    """Refuse ids that cannot be a file name.

    Raises:
        TaskError: If the id is empty, has a path separator or starts with a dot.

    >>> check_id("1f2e-ab_c.d")
    >>> check_id("../x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    osw_studio.core.errors.TaskError: $.id: the id '../x' cannot name a task file (use letters, ...)
    """
    if not _ID.fullmatch(task_id):
        raise TaskError(
            f"the id {task_id!r} cannot name a task file",
            where="$.id",
            hint="use letters, digits, '.', '_' and '-', starting with a letter or digit",
        )


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def dumps_task(data: Mapping[str, Any]) -> str:
    """A task as the text of its file: 2-space indented JSON, Unicode kept, a final newline.

    >>> print(dumps_task({"id": "é"}), end="")
    {
      "id": "é"
    }
    """
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def add_to_index(index: Mapping[str, list[str]], domain: str, task_id: str) -> dict[str, list[str]]:
    """The index with ``task_id`` listed once, under ``domain`` (taken out of any other domain).

    >>> add_to_index({"os": ["a", "b"], "gimp": []}, "gimp", "a")
    {'os': ['b'], 'gimp': ['a']}
    >>> add_to_index({"os": ["a"]}, "os", "a")
    {'os': ['a']}
    """
    out = {d: [i for i in ids if i != task_id or d == domain] for d, ids in index.items()}
    listed = out.setdefault(domain, [])
    if task_id not in listed:
        listed.append(task_id)
    return out


def save_task(
    data: Mapping[str, Any],
    folder: str | Path,
    domain: str,
    *,
    index: str | Path | None = None,
    files: Mapping[str, bytes] | None = None,
) -> Path:
    """Validate a task and write it to ``<folder>/<domain>/<id>.json``, with its files and index entry.

    Args:
        data: The task's JSON data.
        folder: The task folder (with an OSWorld index, the folder its tasks are in: ``examples/``).
        domain: The task's domain (its sub-folder).
        index: An index file to list the task in (created when missing).
        files: Files to write beside the task, by name relative to the task file (the solution's
            screenshots); screenshots of an earlier recording that the task no longer names are removed.

    Returns:
        The task file.

    Raises:
        TaskError: If the task is not valid (naming the JSON path), its id or domain cannot be a file
            name, the index is not an index, or the index's tasks live elsewhere.
    """
    task: Task = parse_task(dict(data), "the task")
    check_id(task.id)
    if not _ID.fullmatch(domain):
        raise TaskError(
            f"the domain {domain!r} cannot name a folder", hint="use letters, digits, '.', '_', '-'"
        )
    folder = Path(folder)
    index_path = Path(index) if index is not None else None
    listing: dict[str, list[str]] = {}
    if index_path is not None:
        if index_path.exists():
            existing = read_json(index_path)
            if not is_index(existing):
                raise TaskError('not an index file ({"domain": ["id", ...]})', where=str(index_path))
            listing = existing
        if index_examples_dir(index_path).resolve() != folder.resolve():
            raise TaskError(
                f"the index lists tasks in {index_examples_dir(index_path)}, not in {folder}",
                where=str(index_path),
                hint="save into the index's folder, or choose another index",
            )
    path = folder / domain / f"{task.id}.json"
    named = {step.screenshot for step in task.solution or [] if step.screenshot}
    for name, content in (files or {}).items():
        target = (path.parent / name).resolve()
        if path.parent.resolve() not in target.parents:
            raise TaskError(f"the file {name!r} would land outside the task's folder", where=str(path))
        _write_atomic(target, content)
    shots = path.parent / f"{task.id}{SOLUTION_DIR_SUFFIX}"
    if shots.is_dir():
        for old in shots.glob("step_*.png"):
            if f"{shots.name}/{old.name}" not in named:
                old.unlink()
    _write_atomic(path, dumps_task(data).encode("utf-8"))
    if index_path is not None:
        listing = add_to_index(listing, domain, task.id)
        _write_atomic(index_path, dumps_task(listing).encode("utf-8"))
    return path
