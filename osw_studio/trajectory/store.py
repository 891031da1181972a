"""The run store reader: one episode's record, read lazily and tolerantly.

A run whose ``result.json`` is missing, or whose last ``steps.jsonl`` line is torn (the process died while
writing it), reads as ``interrupted``; every whole line before it reads back. A run store may come from
elsewhere: its files are read only inside its folder (a symlink that leads out reads as a missing file),
and folders of runs are walked without following symlinks. Steps stream one line at a
time, so reading a long run costs the memory of one step. The layout is in
:mod:`osw_studio.trajectory.layout`; the writer is :class:`osw_studio.runner.store.RunStoreWriter`.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from osw_studio.core.errors import StoreError
from osw_studio.core.paths import contained
from osw_studio.core.step import EpisodeResult, StepRecord
from osw_studio.trajectory.layout import FINAL_SCREEN, RESULT_JSON, RUN_JSON, SCREENS, STEPS_JSONL, RunMeta

Prepare = Callable[[dict[str, Any]], dict[str, Any]]
"""Turns a step line's JSON object into the data its :class:`StepRecord` is validated from."""


def is_run_folder(path: Path) -> bool:
    """Whether ``path`` is a run folder (it has a ``run.json``)."""
    return (path / RUN_JSON).is_file()


def _problem(exc: OSError | ValidationError) -> str:
    """One line saying what is wrong with a file (the first problem pydantic found, without its URL)."""
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    more = len(exc.errors()) - 1
    return f"{where + ': ' if where else ''}{first['msg']}" + (f" (and {more} more)" if more else "")


MAX_STEP_INDEX = 1_000_000_000
"""The largest step index a run can hold; a line beyond it is damage (it would overflow the formats)."""


def _read_regular(file: Path) -> bytes:
    """The bytes of ``file``, refused with an OSError if it is not a regular file (a FIFO would hang)."""
    fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(file))
        return f.read()


def _inside(folder: Path, name: str) -> Path | None:
    """``folder/name`` when it is a file that stays inside ``folder`` (symlinks resolved), else None."""
    path = contained(folder, name)
    return path if path is not None and path.is_file() else None


class RunStore:
    """One run folder, opened for reading.

    Args:
        path: The run folder (``runs/<run-id>/``).

    Raises:
        StoreError: If ``path`` is not a run folder or its ``run.json`` is unreadable.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not is_run_folder(self.path):
            raise StoreError(
                "not a run folder (no run.json)",
                where=str(self.path),
                hint="pass a run folder or a folder of runs",
            )
        self._torn_seen = False

    def file(self, name: str) -> Path:
        """The run's file ``name`` (``run.json``, ``steps.jsonl``, ...), kept inside the run folder.

        Raises:
            StoreError: If it is a symlink that leads out of the run folder.
        """
        path = self.path / name
        if path.is_symlink() and contained(self.path, name) is None:
            raise StoreError("a symlink that leads out of the run folder", where=str(path), hint="remove it")
        return path

    @property
    def torn(self) -> bool:
        """Whether the last line of ``steps.jsonl`` is torn: cut short, or invalid (seen by iter_steps)."""
        if self._torn_seen:
            return True
        try:
            with open(self.file(STEPS_JSONL), "rb") as f:
                f.seek(0, os.SEEK_END)
                if f.tell() == 0:
                    return False
                f.seek(-1, os.SEEK_END)
                return f.read(1) != b"\n"
        except (OSError, StoreError):
            return False

    @property
    def run_id(self) -> str:
        """The run folder's name."""
        return self.path.name

    @cached_property
    def meta(self) -> RunMeta:
        """What ``run.json`` holds.

        Raises:
            StoreError: If it is unreadable.
        """
        file = self.file(RUN_JSON)
        try:
            return RunMeta.model_validate_json(_read_regular(file))
        except (OSError, ValidationError) as exc:
            raise StoreError(f"unreadable run.json: {_problem(exc)}", where=str(file)) from exc

    @cached_property
    def result(self) -> EpisodeResult | None:
        """What ``result.json`` holds, or None when the run did not finish (it is interrupted).

        Raises:
            StoreError: If the file exists but is unreadable.
        """
        file = self.file(RESULT_JSON)
        if not file.is_file():
            if file.exists():  # a FIFO, a device or a folder in its place: damage, not "unfinished"
                raise StoreError("unreadable result.json: not a regular file", where=str(file))
            return None
        try:
            return EpisodeResult.model_validate_json(_read_regular(file))
        except (OSError, ValidationError) as exc:
            raise StoreError(f"unreadable result.json: {_problem(exc)}", where=str(file)) from exc

    @property
    def status(self) -> str:
        """``finished``, ``failed``, ``stopped``, ``error``, or ``interrupted`` when there is no result."""
        return self.result.status if self.result is not None else "interrupted"

    @property
    def interrupted(self) -> bool:
        """Whether the run ended without a result, or its last step line was torn."""
        return self.result is None or self.result.status == "interrupted" or self.torn

    def iter_steps(self, prepare: Prepare | None = None) -> Iterator[StepRecord]:
        """Stream the recorded steps in order.

        A torn last line (no newline at its end, or not valid JSON) is skipped and sets :attr:`torn`.

        Args:
            prepare: Changes each line's data before it is validated (an export scrubs it there, so a
                step is parsed and validated once).

        Raises:
            StoreError: If a line other than the last is not a valid step.
        """
        file = self.file(STEPS_JSONL)
        if not file.is_file():
            return
        self._torn_seen = False
        try:
            with open(file, "rb") as f:
                lineno = 0
                pending: bytes | None = None
                for line in f:
                    lineno += 1
                    if pending is not None:
                        yield self._parse(pending, lineno - 1, file, prepare)
                    pending = line
                if pending is not None:
                    if pending.endswith(b"\n"):
                        try:
                            yield self._parse(pending, lineno, file, prepare)
                            return
                        except StoreError:
                            pass
                    if pending.strip():
                        self._torn_seen = True
        except OSError as exc:
            raise StoreError(f"cannot read the steps: {exc}", where=str(file)) from exc

    @staticmethod
    def _parse(line: bytes, lineno: int, file: Path, prepare: Prepare | None = None) -> StepRecord:
        try:
            if prepare is None:
                step = StepRecord.model_validate_json(line)
                if step.index > MAX_STEP_INDEX:
                    raise ValueError(f"step index {step.index} is beyond any run (at most {MAX_STEP_INDEX})")
                return step
            # What json.loads does with bytes, without its encoding detection for the usual line (UTF-8
            # text that starts an object); anything else goes through that detection as before.
            utf8 = line[:1] == b"{" and line[1:2] != b"\x00"
            data = json.loads(line.decode("utf-8", "surrogatepass") if utf8 else line)
            if not isinstance(data, dict):
                raise ValueError("Input should be an object")
            step = StepRecord.model_validate(prepare(data))
            if step.index > MAX_STEP_INDEX:
                raise ValueError(f"step index {step.index} is beyond any run (at most {MAX_STEP_INDEX})")
            return step
        except ValidationError as exc:
            problem = exc.errors()[0]["msg"]
        except ValueError as exc:  # not JSON (json.JSONDecodeError and UnicodeDecodeError are ValueErrors)
            problem = str(exc) if str(exc).startswith("step index") else f"Invalid JSON: {exc}"
        except RecursionError:
            problem = "JSON nested too deeply"
        raise StoreError(
            f"line {lineno} is not a valid step: {problem}",
            where=f"{file}:{lineno}",
            hint="the run store was edited or damaged; remove the line to read the rest",
        )

    def count_steps(self) -> int:
        """The number of whole step lines, counted without parsing them."""
        file = self.file(STEPS_JSONL)
        if not file.is_file():
            return 0
        with open(file, "rb") as f:
            return sum(1 for line in f if line.endswith(b"\n"))

    def screenshot_path(self, step: StepRecord) -> Path | None:
        """The file of the screen ``step`` acted on, when it was saved and still exists."""
        return self._screen_file(step.screenshot)

    def accessibility_path(self, step: StepRecord) -> Path | None:
        """The file of ``step``'s accessibility tree, when it was saved and still exists."""
        return self._screen_file(step.accessibility_tree)

    def final_screen_path(self) -> Path | None:
        """The screen as it was when the episode ended, when saved."""
        for ext in ("png", "jpg"):
            path = _inside(self.path, f"{SCREENS}/{FINAL_SCREEN}.{ext}")
            if path is not None:
                return path
        return None

    def screen_file(self, name: str | None) -> Path | None:
        """The file ``name`` under ``screens/`` (a bare name: no other folder is reachable), if it exists."""
        return self._screen_file(name)

    def _screen_file(self, name: str | None) -> Path | None:
        if not name:
            return None
        return _inside(self.path, f"{SCREENS}/{Path(name).name}")

    def __repr__(self) -> str:
        return f"RunStore({str(self.path)!r})"


def iter_runs(paths: Iterable[str | Path]) -> Iterator[RunStore]:
    """Find run folders under ``paths``: each a run folder, a ``runs/`` folder, or any folder above them.

    Runs come in path order, and sorted by name (so by start time) within each path. Folders are listed
    lazily, so a huge tree is not held in memory.

    Raises:
        StoreError: If a path does not exist or holds no run.
    """
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise StoreError("no such file or folder", where=str(path), hint="pass run folders")
        found = False
        for run_path in _walk(path):
            found = True
            yield RunStore(run_path)
        if not found:
            raise StoreError("no run folders here", where=str(path), hint="pass run folders or runs/ folders")


def _walk(path: Path) -> Iterator[Path]:
    if is_run_folder(path):
        yield path
        return
    if not path.is_dir():
        return
    try:
        children = sorted(
            entry.name
            for entry in os.scandir(path)
            if entry.is_dir(follow_symlinks=False) and entry.name[0] != "."
        )
    except OSError as exc:
        raise StoreError(f"cannot list the folder: {exc.strerror}", where=str(path)) from exc
    for name in children:
        yield from _walk(path / name)
