"""The task library: loaded tasks by domain and id, with text search and filters."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from psygnal import Signal

from osw_studio.core.errors import TaskError
from osw_studio.tasks.load import LoadReport, TaskEntry, load_tasks

BUNDLED_TASKS = Path(__file__).resolve().parents[2] / "tasks"
"""The sandbox task suite shipped beside the package (a source checkout, or the packaged app's folder)."""


def task_sources(task_suite: str | None) -> list[Path]:
    """What the app's task list loads: the bundled suite, and ``task_suite`` (the settings') if set.

    Examples:
        >>> task_sources("~/suite")[-1] == Path.home() / "suite"
        True
    """
    paths = [BUNDLED_TASKS] if BUNDLED_TASKS.is_dir() else []
    if task_suite:
        paths.append(Path(task_suite).expanduser())
    return paths


class TaskLibrary:
    """Tasks loaded from some paths, by domain and id.

    Signals:
        changed: Emitted after the library was (re)loaded.

    Examples:
        >>> lib = TaskLibrary()
        >>> len(lib), lib.domains
        (0, [])
    """

    changed = Signal()

    def __init__(self, entries: Iterable[TaskEntry] = ()) -> None:
        self._entries: dict[str, TaskEntry] = {}
        self.errors: list[TaskError] = []
        self._set(entries)

    @classmethod
    def from_paths(cls, paths: Iterable[str | Path]) -> TaskLibrary:
        """Load a library from task files, folders or index files (errors kept in ``errors``)."""
        lib = cls()
        lib.load(paths)
        return lib

    def load(self, paths: Iterable[str | Path]) -> LoadReport:
        """Replace the library's content with the tasks under ``paths``."""
        report = load_tasks(paths)
        self._set(report.entries)
        self.errors = report.errors
        self.changed.emit()
        return report

    def _set(self, entries: Iterable[TaskEntry]) -> None:
        self._entries = {}
        for entry in entries:
            self._entries.setdefault(entry.task.id, entry)

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[TaskEntry]:
        return iter(self._entries.values())

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._entries

    @property
    def domains(self) -> list[str]:
        """The domains present, sorted."""
        return sorted({e.domain for e in self._entries.values()})

    def get(self, task_id: str) -> TaskEntry:
        """The task with this id.

        Raises:
            TaskError: If no loaded task has this id (the message suggests close ids).
        """
        try:
            return self._entries[task_id]
        except KeyError:
            close = [i for i in self._entries if i.startswith(task_id[:8])][:3]
            hint = f"did you mean {', '.join(close)}?" if close else "see `osw-studio tasks list`"
            raise TaskError(f"no task with id {task_id!r}", hint=hint) from None

    def by_domain(self, domain: str) -> list[TaskEntry]:
        """The tasks of one domain, in load order."""
        return [e for e in self._entries.values() if e.domain == domain]

    def search(
        self,
        text: str = "",
        *,
        domain: str | None = None,
        app: str | None = None,
        has_solution: bool | None = None,
    ) -> list[TaskEntry]:
        """Tasks whose id, instruction or apps contain every word of ``text``, filtered.

        Args:
            text: Words to look for (case-insensitive).
            domain: Keep only this domain.
            app: Keep only tasks whose ``related_apps`` include this app.
            has_solution: Keep only tasks with (True) or without (False) a reference solution.
        """
        words = text.lower().split()
        found = []
        for entry in self._entries.values():
            task = entry.task
            if domain is not None and entry.domain != domain:
                continue
            if app is not None and app not in task.related_apps:
                continue
            if has_solution is not None and bool(task.solution) != has_solution:
                continue
            haystack = " ".join([task.id, task.instruction, entry.domain, *task.related_apps]).lower()
            if all(w in haystack for w in words):
                found.append(entry)
        return found
