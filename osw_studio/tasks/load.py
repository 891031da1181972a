"""Load OSWorld task files: one file, a folder tree, or an index file.

An index file is OSWorld's ``{"domain": ["task-id", ...]}`` next to an ``examples/`` folder that holds
``examples/<domain>/<task-id>.json``. Every problem becomes a :class:`~osw_studio.core.errors.TaskError`
whose ``where`` is ``file: $.json.path``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from osw_studio.core import paths
from osw_studio.core.errors import TaskError
from osw_studio.core.limits import JSON_DEPTH, LimitExceeded, loads_bounded
from osw_studio.core.task import (
    DownloadStep,
    ExecuteStep,
    Task,
    UploadFileStep,
    VerifiedExecuteStep,
)

MAX_TASK_BYTES = 4 * 1024 * 1024
"""Task files are a few kilobytes; anything past this is refused before it is parsed."""

SKIPPED_DIRS = frozenset({"assets", "__pycache__", ".git"})
"""Folders inside a task tree that hold no task files."""


@dataclass(frozen=True)
class TaskEntry:
    """A loaded task and where it came from.

    Attributes:
        task: The task.
        path: The task file.
        domain: The task's domain: its folder's name, or the key of the index that listed it.
    """

    task: Task
    path: Path
    domain: str


@dataclass
class LoadReport:
    """Everything found under some paths: the tasks that loaded and the errors of those that did not."""

    entries: list[TaskEntry] = field(default_factory=list)
    errors: list[TaskError] = field(default_factory=list)


def json_path(loc: Iterable[int | str], data: Any) -> str:
    """Turn a pydantic error location into a JSON path into ``data``.

    Pydantic puts union tags and type names into locations; they are left out by walking ``data``.

    >>> data = {"config": [{"type": "download", "parameters": {}}]}
    >>> json_path(("config", 0, "download", "parameters", "files"), data)
    '$.config[0].parameters.files'
    """
    path = "$"
    node: Any = data
    for part in loc:
        if isinstance(node, list) and isinstance(part, int):
            path += f"[{part}]"
            node = node[part] if 0 <= part < len(node) else None
        elif isinstance(node, dict) and isinstance(part, str) and part in node:
            path += f".{part}"
            node = node[part]
        elif isinstance(node, dict) and isinstance(part, str) and not _is_tag(part, node):
            path += f".{part}"  # a missing key: name it, then stop descending
            node = None
        # else: a union tag or type name that is not part of the document
    return path


def _is_tag(part: str, node: dict[str, Any]) -> bool:
    return node.get("type") == part or part in {"str", "list[str]", "bool", "int", "float"}


def _describe(error: ValidationError, data: Any, source: str) -> TaskError:
    first = error.errors()[0]
    where = f"{source}: {json_path(first['loc'], data)}"
    message = first["msg"]
    if first["type"] == "union_tag_invalid":
        found = first.get("input", {}).get("type") if isinstance(first.get("input"), dict) else None
        message = f"unknown setup step type {found!r}"
    elif first["type"] == "missing":
        message = "required field is missing"
    more = len(error.errors()) - 1
    if more:
        message += f" (and {more} more problem{'s' if more > 1 else ''})"
    return TaskError(message, where=where)


def read_json(path: Path) -> Any:
    """Read a JSON file with the size, encoding and syntax checks every task file gets.

    Raises:
        TaskError: If the file is missing, too large, not UTF-8 or not JSON.
    """
    try:
        size = path.stat().st_size
        if size > MAX_TASK_BYTES:
            raise TaskError(
                f"file is {size / 1e6:.1f} MB; task files are at most {MAX_TASK_BYTES // 2**20} MB",
                where=str(path),
            )
        raw = path.read_bytes()
    except OSError as exc:
        raise TaskError(f"cannot read the file: {exc.strerror or exc}", where=str(path)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TaskError(f"not UTF-8 text (byte {exc.start})", where=str(path)) from None
    try:
        return loads_bounded(text, where="the task file")
    except LimitExceeded:
        raise TaskError(
            f"not valid JSON: nested more than {JSON_DEPTH} levels deep", where=str(path)
        ) from None
    except json.JSONDecodeError as exc:
        raise TaskError(
            f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}", where=str(path)
        ) from None


def parse_task(data: Any, source: str = "<task>") -> Task:
    """Validate task data already read from JSON, host paths included (:func:`path_problems`).

    Raises:
        TaskError: Naming the JSON path of the first problem.
    """
    if not isinstance(data, dict):
        raise TaskError(f"a task must be a JSON object, not {type(data).__name__}", where=f"{source}: $")
    try:
        task = Task.model_validate(data)
    except ValidationError as exc:
        raise _describe(exc, data, source) from None
    except RecursionError:
        raise TaskError("nested too deeply", where=f"{source}: $") from None
    problems = path_problems(task)
    if problems:
        where, message = problems[0]
        more = len(problems) - 1
        if more:
            message += f" (and {more} more problem{'s' if more > 1 else ''})"
        raise TaskError(
            message,
            where=f"{source}: {where}",
            hint="task files may name host files only inside their own folder",
        )
    return task


def path_problems(task: Task) -> list[tuple[str, str]]:
    """Every host path and name in ``task`` the path policy refuses, as ``(JSON path, why)``.

    Host paths are the task id (a folder name), ``download`` URLs and ``upload_file`` local paths that
    are not ``http(s)://`` (read on the host), command ``stdout``/``stderr`` files, getters' ``dest``,
    ``cache_file`` paths (written or read in the task's cache folder) and ``cloud_file`` paths (read on
    the host unless ``http(s)://``). Paths inside the guest are not judged. See
    :mod:`osw_studio.core.paths`.

    >>> task = Task.model_validate({"id": "t", "instruction": "x", "evaluator": {"func": "exact_match",
    ...     "result": {"type": "vm_file", "path": "/home/user/a", "dest": "../../.bashrc"}}})
    >>> path_problems(task)
    [('$.evaluator.result.dest', "'../../.bashrc' leaves the folder it must be written in")]
    """
    found: list[tuple[str, str]] = []

    def judge(where: str, problem: str | None) -> None:
        if problem is not None:
            found.append((where, problem))

    judge("$.id", paths.name_problem(task.id))
    for label, steps in (("$.config", task.config), ("$.evaluator.postconfig", task.evaluator.postconfig)):
        for i, step in enumerate(steps):
            at = f"{label}[{i}].parameters"
            if isinstance(step, DownloadStep):
                for j, entry in enumerate(step.parameters.files):
                    judge(f"{at}.files[{j}].url", paths.source_problem(entry.url))
            elif isinstance(step, UploadFileStep):
                for j, upload in enumerate(step.parameters.files):
                    text = upload.local_path
                    problem = paths.source_problem(text)
                    judge(f"{at}.files[{j}].local_path", problem or _no_url(text))
            elif isinstance(step, ExecuteStep | VerifiedExecuteStep):
                for key in ("stdout", "stderr"):
                    name = getattr(step.parameters, key)
                    if name is not None:
                        judge(f"{at}.{key}", paths.dest_problem(name))
    for role in ("result", "expected"):
        value = getattr(task.evaluator, role)
        specs = list(enumerate(value)) if isinstance(value, list) else [(None, value)]
        for k, spec in specs:
            if spec is None:
                continue
            at = f"$.evaluator.{role}" + ("" if k is None else f"[{k}]")
            args = spec.args
            for key, judge_one in _GETTER_PATHS.get(spec.type, {"dest": paths.dest_problem}).items():
                if key not in args:
                    continue
                items = args[key]
                listed = isinstance(items, list)
                for m, item in enumerate(items if listed else [items]):
                    where = f"{at}.{key}" + (f"[{m}]" if listed else "")
                    judge(where, judge_one(item) if isinstance(item, str) else "must be a string")
    return found


def _no_url(text: str) -> str | None:
    return "a local_path is a file in the task's folder, not a URL" if paths.is_network_url(text) else None


_GETTER_PATHS: dict[str, dict[str, Callable[[str], str | None]]] = {
    "cloud_file": {"path": paths.source_problem, "dest": paths.dest_problem},
    "cache_file": {"path": paths.dest_problem},
}
"""Getter arguments that name host files, by getter type; every other getter's ``dest`` is a host file."""


def load_task(path: str | Path, domain: str | None = None) -> TaskEntry:
    """Load one task file.

    Args:
        path: The task's JSON file.
        domain: Its domain; by default the name of the folder it is in.

    Raises:
        TaskError: If the file cannot be read or is not a valid task.
    """
    path = Path(path)
    task = parse_task(read_json(path), str(path))
    return TaskEntry(task=task, path=path, domain=domain or path.parent.name)


def is_index(data: Any) -> bool:
    """Whether ``data`` looks like an OSWorld index: ``{"domain": ["id", ...]}``.

    >>> is_index({"os": ["a", "b"]}), is_index({"id": "x", "instruction": "y"})
    (True, False)
    """
    return (
        isinstance(data, dict)
        and bool(data)
        and "id" not in data
        and all(isinstance(v, list) and all(isinstance(i, str) for i in v) for v in data.values())
    )


def index_examples_dir(index_path: Path) -> Path:
    """Where an index's task files are: ``examples/`` beside it, or the index's own folder."""
    beside = index_path.parent / "examples"
    return beside if beside.is_dir() else index_path.parent


def _iter_index(path: Path, data: dict[str, list[str]]) -> Iterator[TaskEntry | TaskError]:
    root = index_examples_dir(path)
    for domain, ids in data.items():
        if paths.name_problem(domain) is not None:
            yield TaskError(f"the domain {paths.name_problem(domain)}", where=f"{path}: $.{domain}")
            continue
        for i, task_id in enumerate(ids):
            if paths.name_problem(task_id) is not None:
                yield TaskError(f"the id {paths.name_problem(task_id)}", where=f"{path}: $.{domain}[{i}]")
                continue
            file = root / domain / f"{task_id}.json"
            if not file.is_file():
                yield TaskError(f"task file {file} does not exist", where=f"{path}: $.{domain}[{i}]")
                continue
            try:
                entry = load_task(file, domain)
            except TaskError as exc:
                yield exc
                continue
            if entry.task.id != task_id:
                yield TaskError(f"the file's id is {entry.task.id!r}, not {task_id!r}", where=f"{file}: $.id")
                continue
            yield entry


def _iter_folder(root: Path) -> Iterator[TaskEntry | TaskError]:
    for file in sorted(root.rglob("*.json")):
        rel = file.relative_to(root)
        if any(part in SKIPPED_DIRS or part.startswith(".") for part in rel.parts[:-1]):
            continue
        try:
            data = read_json(file)
        except TaskError as exc:
            yield exc
            continue
        if is_index(data):
            continue
        try:
            task = parse_task(data, str(file))
        except TaskError as exc:
            yield exc
            continue
        domain = rel.parts[0] if len(rel.parts) > 1 else file.parent.name
        yield TaskEntry(task=task, path=file, domain=domain)


def iter_tasks(path: str | Path) -> Iterator[TaskEntry | TaskError]:
    """Yield every task (or the error that stopped it loading) under ``path``.

    ``path`` is a task file, a folder tree of task files (index files inside are skipped), or an index.
    """
    path = Path(path)
    if path.is_dir():
        yield from _iter_folder(path)
        return
    try:
        data = read_json(path)
    except TaskError as exc:
        yield exc
        return
    if is_index(data):
        yield from _iter_index(path, data)
        return
    try:
        yield TaskEntry(task=parse_task(data, str(path)), path=path, domain=path.parent.name)
    except TaskError as exc:
        yield exc


def load_tasks(paths: Iterable[str | Path]) -> LoadReport:
    """Load every task under ``paths``, collecting errors instead of stopping at the first."""
    report = LoadReport()
    for path in paths:
        for item in iter_tasks(path):
            if isinstance(item, TaskError):
                report.errors.append(item)
            else:
                report.entries.append(item)
    return report
