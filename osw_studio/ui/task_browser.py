"""The task browser: tasks by domain, text search, filters, and the chosen task's details."""

from __future__ import annotations

import json
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QLabel,
    QLineEdit,
    QSplitter,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from osw_studio.tasks import TaskEntry, TaskLibrary

ANY = "any"
ResultLookup = Callable[[str], str | None]
"""Returns the last result of a task id (``passed``, ``failed``, ``error``...) or None if never run."""


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _params(step: dict[str, object]) -> str:
    return json.dumps(step.get("parameters", {}), ensure_ascii=False)[:300]


def task_file_label(entry: TaskEntry) -> str:
    """Where a task's file is, relative to its task root (the folder of domain folders), named by it.

    Absolute paths say little and differ per machine; the root's name and the rest identify the file.

    >>> from pathlib import Path
    >>> from osw_studio.core.task import Task
    >>> task = Task.model_validate({"id": "t", "instruction": "i", "evaluator": {"func": "infeasible"}})
    >>> task_file_label(TaskEntry(task, Path("/home/me/osw/tasks/os/t.json"), "os"))
    'tasks/os/t.json'
    >>> task_file_label(TaskEntry(task, Path("/data/t.json"), "misc"))
    'data/t.json'
    """
    path = entry.path
    root = path.parent.parent if path.parent.name == entry.domain else path.parent
    return path.relative_to(root.parent).as_posix() if root.name else path.name


def task_details_html(entry: TaskEntry, last_result: str | None = None) -> str:
    """The details pane of one task: instruction, setup steps, evaluator, related apps."""
    task = entry.task
    steps = "".join(
        f"<li><b>{_html(step.type)}</b> <code>{_html(_params(step.model_dump(mode='json')))}</code></li>"
        for step in task.config
    )
    evaluator = json.dumps(task.evaluator.model_dump(mode="json", exclude_none=True), indent=1)
    solution = f"{len(task.solution)} steps" if task.solution else "none"
    apps = ", ".join(task.related_apps) or "–"
    result = last_result or "never run"
    return (
        f"<h3>{_html(task.instruction)}</h3>"
        f"<p><b>id</b> {_html(task.id)}<br><b>domain</b> {_html(entry.domain)}<br>"
        f"<b>apps</b> {_html(apps)}<br><b>reference solution</b> {solution}<br>"
        f"<b>last result</b> {_html(result)}<br><b>file</b> {_html(task_file_label(entry))}</p>"
        f"<h4>Setup ({len(task.config)} steps)</h4><ol>{steps or '<i>none</i>'}</ol>"
        f"<h4>Evaluator</h4><pre>{_html(evaluator[:4000])}</pre>"
    )


class TaskBrowser(QWidget):
    """Browse a :class:`TaskLibrary`; reloads itself when the library's ``changed`` fires.

    Args:
        library: The tasks to show.
        last_result: Looks up a task's last result (for the filter and the details).

    Signals:
        task_selected(object): The chosen :class:`TaskEntry` (None when the selection is cleared).
        task_activated(object): A task was double-clicked or Enter was pressed on it (run it).
    """

    task_selected = Signal(object)
    task_activated = Signal(object)

    def __init__(
        self, library: TaskLibrary, last_result: ResultLookup | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.library = library
        self._last_result = last_result or (lambda _id: None)
        self.search = QLineEdit(placeholderText="Search tasks (id, instruction, app)…")
        self.search.setClearButtonEnabled(True)
        self.domain_filter = QComboBox()
        self.app_filter = QComboBox()
        self.solution_filter = QComboBox()
        self.solution_filter.addItems([ANY, "with solution", "without solution"])
        self.result_filter = QComboBox()
        self.result_filter.addItems([ANY, "never run", "passed", "passed with help", "failed", "error"])
        for combo, tip in (
            (self.domain_filter, "Domain"),
            (self.app_filter, "Related app"),
            (self.solution_filter, "Reference solution"),
            (self.result_filter, "Last result"),
        ):
            combo.setToolTip(tip)
            combo.currentIndexChanged.connect(self.refresh)
        self.search.textChanged.connect(self.refresh)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Task", "Apps", "Last"])
        self.tree.setColumnWidth(0, 300)
        self.tree.setUniformRowHeights(True)
        self.tree.currentItemChanged.connect(self._on_current)
        self.tree.itemActivated.connect(self._on_activated)
        self.details = QTextBrowser()
        self.details.setObjectName("taskDetails")
        filters = QGridLayout()  # each filter named beside it, two a row so a narrow dock fits them
        for n, (text, combo) in enumerate(
            (
                ("Domain", self.domain_filter),
                ("App", self.app_filter),
                ("Solution", self.solution_filter),
                ("Last", self.result_filter),
            )
        ):
            label = QLabel(text)
            label.setBuddy(combo)
            filters.addWidget(label, n // 2, (n % 2) * 2)
            filters.addWidget(combo, n // 2, (n % 2) * 2 + 1)
            filters.setColumnStretch((n % 2) * 2 + 1, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.tree)
        split.addWidget(self.details)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.search)
        layout.addLayout(filters)
        layout.addWidget(split, 1)
        library.changed.connect(self._on_library_changed)
        self._on_library_changed()

    # --- model -> view ------------------------------------------------------------------------------

    def _on_library_changed(self) -> None:
        for combo, values in (
            (self.domain_filter, self.library.domains),
            (self.app_filter, sorted({a for e in self.library for a in e.task.related_apps})),
        ):
            current = combo.currentText()
            combo.blockSignals(True)
            combo.clear()
            combo.addItems([ANY, *values])
            combo.setCurrentText(current if current in values else ANY)
            combo.blockSignals(False)
        self.refresh()

    def _selected(self, combo: QComboBox) -> str | None:
        text = combo.currentText()
        return None if text in ("", ANY) else text

    def visible_entries(self) -> list[TaskEntry]:
        """The tasks the search and filters let through, in library order."""
        solution = {"with solution": True, "without solution": False}.get(self.solution_filter.currentText())
        found = self.library.search(
            self.search.text(),
            domain=self._selected(self.domain_filter),
            app=self._selected(self.app_filter),
            has_solution=solution,
        )
        wanted = self._selected(self.result_filter)
        if wanted is None:
            return found
        return [e for e in found if (self._last_result(e.task.id) or "never run") == wanted]

    def reset_filters(self) -> None:
        """Clear the search and set every filter to any (new tasks are then all shown)."""
        for combo in (self.domain_filter, self.app_filter, self.solution_filter, self.result_filter):
            combo.blockSignals(True)
            combo.setCurrentIndex(0)
            combo.blockSignals(False)
        self.search.blockSignals(True)
        self.search.clear()
        self.search.blockSignals(False)
        self.refresh()

    def refresh(self) -> None:
        """Rebuild the tree from the library, the search text and the filters."""
        current = self.current_entry()
        self.tree.setUpdatesEnabled(False)
        self.tree.clear()
        groups: dict[str, QTreeWidgetItem] = {}
        entries = self.visible_entries()
        reselect: QTreeWidgetItem | None = None
        for entry in entries:
            group = groups.get(entry.domain)
            if group is None:
                group = QTreeWidgetItem(self.tree, [entry.domain])
                group.setFirstColumnSpanned(False)
                font = group.font(0)
                font.setBold(True)
                group.setFont(0, font)
                groups[entry.domain] = group
            label = entry.task.instruction.splitlines()[0] if entry.task.instruction else entry.task.id
            item = QTreeWidgetItem(
                group,
                [label, ", ".join(entry.task.related_apps), self._last_result(entry.task.id) or ""],
            )
            item.setToolTip(0, f"{entry.task.id}\n{entry.task.instruction}")
            item.setData(0, Qt.ItemDataRole.UserRole, entry.task.id)
            if current is not None and entry.task.id == current.task.id:
                reselect = item
        for domain, group in groups.items():
            group.setText(0, f"{domain} ({group.childCount()})")
        expand = len(entries) <= 200 or bool(self.search.text())
        for group in groups.values():
            group.setExpanded(expand)
        self.tree.setUpdatesEnabled(True)
        if reselect is not None:
            self.tree.setCurrentItem(reselect)

    def current_entry(self) -> TaskEntry | None:
        """The task selected in the tree, if any."""
        item = self.tree.currentItem()
        task_id = item.data(0, Qt.ItemDataRole.UserRole) if item is not None else None
        return self.library.get(task_id) if task_id and task_id in self.library else None

    def select_task(self, task_id: str) -> bool:
        """Select a task by id (clearing filters that hide it); False if the library lacks it."""
        if task_id not in self.library:
            return False
        for _ in range(2):
            for item in self._task_items():
                if item.data(0, Qt.ItemDataRole.UserRole) == task_id:
                    parent = item.parent()
                    if parent is not None:
                        parent.setExpanded(True)
                    self.tree.setCurrentItem(item)
                    return True
            self.search.clear()
            for combo in (self.domain_filter, self.app_filter, self.solution_filter, self.result_filter):
                combo.setCurrentIndex(0)
        return False

    def _task_items(self) -> list[QTreeWidgetItem]:
        root = self.tree.invisibleRootItem()
        groups = [root.child(g) for g in range(root.childCount())]
        return [c for g in groups if g is not None for i in range(g.childCount()) if (c := g.child(i))]

    # --- view -> signals ----------------------------------------------------------------------------

    def _on_current(self, item: QTreeWidgetItem | None, _previous: QTreeWidgetItem | None) -> None:
        entry = self.current_entry()
        if entry is None:
            self.details.setHtml("<p><i>Pick a task to see its instruction, setup and evaluator.</i></p>")
        else:
            self.details.setHtml(task_details_html(entry, self._last_result(entry.task.id)))
        self.task_selected.emit(entry)

    def _on_activated(self, item: QTreeWidgetItem, _column: int) -> None:
        entry = self.current_entry()
        if entry is not None:
            self.task_activated.emit(entry)
