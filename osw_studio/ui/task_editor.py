"""The task editor: a form, setup and evaluator tables with the registries' names, and the raw JSON.

The task's JSON data is the one truth: the form and the tables write into it, the JSON tab shows it,
and text typed in the JSON tab is read back into the form and tables as soon as it parses. Every change
is validated with the task loader, so a problem is named by its JSON path (``$.config[1].parameters``)
while the person types. Saving goes through :func:`osw_studio.tasks.authoring.save_task`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from osw_studio.core.errors import OswError
from osw_studio.core.task import SETUP_STEP_TYPES, Task
from osw_studio.evaluation.registry import GETTERS, METRICS
from osw_studio.tasks.authoring import dumps_task, duplicate_task, new_task, save_task
from osw_studio.tasks.load import parse_task

NO_GETTER = "(none)"


W = TypeVar("W", bound=QWidget)


def named(widget: W, name: str) -> W:
    """Give a widget an object name (tests and style sheets find it by that name)."""
    widget.setObjectName(name)
    return widget


def _one_line(value: Any) -> str:
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _read_cell(text: str, where: str) -> Any:
    """A table cell's JSON (empty is ``None``); raises OswError naming the cell."""
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise OswError(f"not valid JSON: {exc.msg} at column {exc.colno}", where=where) from None


class _Table(QTableWidget):
    """A table whose rows are edited in place; emits ``edited`` after any cell or combo box changes."""

    edited = Signal()

    def __init__(self, headers: list[str], parent: QWidget | None = None) -> None:
        super().__init__(0, len(headers), parent)
        self.setHorizontalHeaderLabels(headers)
        self.horizontalHeader().setStretchLastSection(True)
        self.verticalHeader().setVisible(True)
        self.itemChanged.connect(lambda _item: self.edited.emit())

    def combo(self, names: list[str], value: str) -> QComboBox:
        box = QComboBox()
        box.setEditable(True)  # names not (yet) registered can still be typed; validation says so
        box.addItems(names)
        box.setCurrentText(value)
        box.currentTextChanged.connect(lambda _t: self.edited.emit())
        return box

    def text(self, row: int, column: int) -> str:
        widget = self.cellWidget(row, column)
        if isinstance(widget, QComboBox):
            return widget.currentText()
        item = self.item(row, column)
        return item.text() if item is not None else ""

    def move_row(self, step: int) -> int | None:
        row = self.currentRow()
        if row < 0 or not 0 <= row + step < self.rowCount():
            return None
        return row


class StepTable(QWidget):
    """Setup (or postconfig) steps: a type chosen from the known types, and its parameters as JSON.

    Signals:
        edited(): A step was added, removed, moved or changed.
    """

    edited = Signal()

    def __init__(self, label: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = label
        self.table = _Table(["type", "parameters (JSON)"], self)
        self.table.setObjectName(f"{label}Steps")
        self.table.edited.connect(self.edited)
        buttons = QHBoxLayout()
        for text, slot in (("Add", self.add_step), ("Remove", self.remove_step)):
            button = QPushButton(text)
            button.clicked.connect(slot)
            buttons.addWidget(button)
        for text, step in (("Up", -1), ("Down", 1)):
            button = QPushButton(text)
            button.clicked.connect(lambda _c=False, s=step: self.move_step(s))
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table)
        layout.addLayout(buttons)

    def set_steps(self, steps: list[Any]) -> None:
        """Show these steps (raw JSON data)."""
        self.table.blockSignals(True)
        self.table.setRowCount(0)
        for step in steps:
            self._append(step if isinstance(step, dict) else {})
        self.table.blockSignals(False)

    def _append(self, step: Mapping[str, Any]) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        combo = self.table.combo(list(SETUP_STEP_TYPES), str(step.get("type", "")))
        combo.blockSignals(self.table.signalsBlocked())
        self.table.setCellWidget(row, 0, combo)
        combo.blockSignals(False)
        rest = {k: v for k, v in step.items() if k not in ("type", "parameters")}
        params = step.get("parameters", {})
        item = QTableWidgetItem(_one_line(params))
        item.setData(Qt.ItemDataRole.UserRole, rest)  # keys beside type and parameters survive edits
        self.table.setItem(row, 1, item)

    def steps(self) -> list[dict[str, Any]]:
        """The steps as JSON data.

        Raises:
            OswError: If a parameters cell is not JSON (naming the step).
        """
        out = []
        for row in range(self.table.rowCount()):
            item = self.table.item(row, 1)
            rest = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
            step: dict[str, Any] = {"type": self.table.text(row, 0)}
            params = _read_cell(self.table.text(row, 1), f"$.{self.label}[{row}].parameters")
            if params is not None:
                step["parameters"] = params
            step.update(rest or {})
            out.append(step)
        return out

    def add_step(self) -> None:
        """Append a step (a one-second sleep, ready to be changed)."""
        self._append({"type": "sleep", "parameters": {"seconds": 1}})
        self.table.setCurrentCell(self.table.rowCount() - 1, 1)
        self.edited.emit()

    def remove_step(self) -> None:
        """Remove the selected step."""
        row = self.table.currentRow()
        if row >= 0:
            self.table.removeRow(row)
            self.edited.emit()

    def move_step(self, step: int) -> None:
        """Move the selected step up (-1) or down (1)."""
        row = self.table.move_row(step)
        if row is None:
            return
        steps = self.steps()
        steps.insert(row + step, steps.pop(row))
        self.set_steps(steps)
        self.table.setCurrentCell(row + step, 1)
        self.edited.emit()


METRIC_HEADERS = ["func", "result getter", "result args", "expected getter", "expected args", "options"]


def evaluator_rows(evaluator: Mapping[str, Any]) -> list[dict[str, Any]]:
    """OSWorld's evaluator (single ``func`` or parallel lists) as one row per metric.

    >>> rows = evaluator_rows({"func": ["a", "b"], "result": [{"type": "r"}, None],
    ...                        "options": [{}, {"x": 1}]})
    >>> rows[0]
    {'func': 'a', 'result': {'type': 'r'}, 'expected': None, 'options': {}}
    >>> rows[1]
    {'func': 'b', 'result': None, 'expected': None, 'options': {'x': 1}}
    """
    func = evaluator.get("func", "")
    funcs = func if isinstance(func, list) else [func]

    def part(name: str, i: int) -> Any:
        value = evaluator.get(name)
        if isinstance(func, list):
            return value[i] if isinstance(value, list) and i < len(value) else None
        return value

    return [
        {
            "func": f,
            "result": part("result", i),
            "expected": part("expected", i),
            "options": part("options", i),
        }
        for i, f in enumerate(funcs)
    ]


def evaluator_from_rows(rows: list[dict[str, Any]], conj: str, listed: bool) -> dict[str, Any]:
    """The evaluator's keys for these rows: scalars for one metric (unless ``listed``), else lists.

    >>> evaluator_from_rows([{"func": "exact_match", "result": {"type": "r"}, "expected": None,
    ...                       "options": None}], "", False)
    {'func': 'exact_match', 'result': {'type': 'r'}}
    """
    if len(rows) == 1 and not listed:
        row = rows[0]
        out: dict[str, Any] = {"func": row["func"]}
        out.update({k: row[k] for k in ("result", "expected", "options") if row[k] is not None})
        return out
    out = {"func": [r["func"] for r in rows]}
    if conj:
        out["conj"] = conj
    for key in ("result", "expected", "options"):
        if any(r[key] is not None for r in rows):
            out[key] = [r[key] for r in rows]
    return out


class EvaluatorEditor(QWidget):
    """The evaluator: metrics (func, getters, options) with the registries' names offered, conj, postconfig.

    Signals:
        edited(): Anything changed.
    """

    edited = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.metric_names = ["infeasible", *sorted(METRICS.names())]
        self.getter_names = [NO_GETTER, *sorted(GETTERS.names())]
        self.conj = QComboBox()
        self.conj.addItems(["", "and", "or"])
        self.conj.setObjectName("evaluatorConj")
        self.conj.currentTextChanged.connect(lambda _t: self.edited.emit())
        self.metrics = _Table(METRIC_HEADERS, self)
        self.metrics.setObjectName("evaluatorMetrics")
        self.metrics.edited.connect(self.edited)
        self.postconfig = StepTable("postconfig", self)
        self.postconfig.edited.connect(self.edited)
        self._listed = False
        self._extra: dict[str, Any] = {}
        buttons = QHBoxLayout()
        add, remove = QPushButton("Add metric"), QPushButton("Remove metric")
        add.clicked.connect(self.add_metric)
        remove.clicked.connect(self.remove_metric)
        buttons.addWidget(QLabel("conj"))
        buttons.addWidget(self.conj)
        buttons.addStretch(1)
        buttons.addWidget(add)
        buttons.addWidget(remove)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Metrics (each scores result against expected)"))
        layout.addWidget(self.metrics, 2)
        layout.addLayout(buttons)
        layout.addWidget(QLabel("postconfig (runs before the getters)"))
        layout.addWidget(self.postconfig, 1)

    def set_evaluator(self, evaluator: Mapping[str, Any]) -> None:
        """Show this evaluator (raw JSON data)."""
        self._listed = isinstance(evaluator.get("func"), list)
        known = {"func", "conj", "result", "expected", "options", "postconfig"}
        self._extra = {k: v for k, v in evaluator.items() if k not in known}
        self.blockSignals(True)
        self.conj.setCurrentText(str(evaluator.get("conj") or ""))
        self.metrics.blockSignals(True)
        self.metrics.setRowCount(0)
        for row in evaluator_rows(evaluator):
            self._append(row)
        self.metrics.blockSignals(False)
        post = evaluator.get("postconfig")
        self.postconfig.set_steps(post if isinstance(post, list) else [])
        self.blockSignals(False)

    def _append(self, row: Mapping[str, Any]) -> None:
        table = self.metrics
        i = table.rowCount()
        table.insertRow(i)
        blocked = table.signalsBlocked()
        cells: list[QWidget | str] = [table.combo(self.metric_names, str(row.get("func") or ""))]
        for role in ("result", "expected"):
            spec = row.get(role)
            spec = spec if isinstance(spec, dict) else {}
            cells.append(table.combo(self.getter_names, str(spec.get("type") or NO_GETTER)))
            args = {k: v for k, v in spec.items() if k != "type"}
            cells.append(_one_line(args) if spec else "")
        cells.append(_one_line(row.get("options")))
        for column, cell in enumerate(cells):
            if isinstance(cell, QWidget):
                cell.blockSignals(blocked)
                table.setCellWidget(i, column, cell)
                cell.blockSignals(False)
            else:
                table.setItem(i, column, QTableWidgetItem(cell))

    def evaluator(self) -> dict[str, Any]:
        """The evaluator as JSON data.

        Raises:
            OswError: If a cell is not JSON (naming it).
        """
        rows = []
        table = self.metrics
        for i in range(table.rowCount()):
            row: dict[str, Any] = {"func": table.text(i, 0)}
            for role, column in (("result", 1), ("expected", 3)):
                getter = table.text(i, column).strip()
                args = _read_cell(table.text(i, column + 1), f"$.evaluator.{role}[{i}]") or {}
                row[role] = {"type": getter, **args} if getter and getter != NO_GETTER else None
            row["options"] = _read_cell(table.text(i, 5), f"$.evaluator.options[{i}]")
            rows.append(row)
        out: dict[str, Any] = {"func": ""}
        if rows:
            out = evaluator_from_rows(rows, self.conj.currentText(), self._listed)
        post = self.postconfig.steps()
        if post:
            out["postconfig"] = post
        return {**out, **self._extra}

    def add_metric(self) -> None:
        """Add a metric (the evaluator becomes OSWorld's list form)."""
        self._listed = True
        self._append({"func": "exact_match", "result": None, "expected": None, "options": None})
        self.edited.emit()

    def remove_metric(self) -> None:
        """Remove the selected metric."""
        row = self.metrics.currentRow()
        if row >= 0 and self.metrics.rowCount() > 1:
            self.metrics.removeRow(row)
            self.edited.emit()


class TaskEditor(QWidget):
    """Edit one task: form, setup, evaluator and raw JSON, validated live.

    Attributes:
        path: The task's file once opened or saved (``None`` for a new task).

    Signals:
        changed(): The task's data changed.
        validated(str): After each change: ``""`` when the task is valid, else the problem.
    """

    changed = Signal()
    validated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path: Path | None = None
        self._data: dict[str, Any] = {}
        self._loading = False
        self._error = ""
        self.id_edit = named(QLineEdit(), "taskId")
        self.instruction_edit = named(QPlainTextEdit(), "taskInstruction")
        self.instruction_edit.setMaximumHeight(140)
        self.domain_edit = named(QLineEdit("os"), "taskDomain")
        self.apps_edit = named(QLineEdit(), "taskApps")
        self.apps_edit.setPlaceholderText("comma separated, e.g. os, terminal")
        form_page = QWidget()
        page = QVBoxLayout(form_page)
        form = QFormLayout()
        page.addLayout(form)
        page.addStretch(1)  # the fields stay together at the top, not spread over the page's height
        form.addRow("Id", self.id_edit)
        form.addRow("Instruction", self.instruction_edit)
        form.addRow("Domain", self.domain_edit)
        form.addRow("Related apps", self.apps_edit)
        self.setup = StepTable("config")
        self.evaluator = EvaluatorEditor()
        self.json_edit = named(QPlainTextEdit(), "taskJson")
        self.json_edit.setFont(QFont("monospace"))
        self.tabs = QTabWidget()
        self.tabs.addTab(form_page, "Task")
        self.tabs.addTab(self.setup, "Setup")
        self.tabs.addTab(self.evaluator, "Evaluator")
        self.tabs.addTab(self.json_edit, "JSON")
        self.status = named(QLabel(), "taskStatus")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.status)
        for edit in (self.id_edit, self.domain_edit, self.apps_edit):
            edit.textChanged.connect(self._on_form_edited)
        self.instruction_edit.textChanged.connect(self._on_form_edited)
        self.setup.edited.connect(self._on_form_edited)
        self.evaluator.edited.connect(self._on_form_edited)
        self.json_edit.textChanged.connect(self._on_json_edited)
        self.set_data(new_task("command"))

    # --- the data ---------------------------------------------------------------------------------

    @property
    def data(self) -> dict[str, Any]:
        """A copy of the task's JSON data as edited."""
        return copy.deepcopy(self._data)

    @property
    def domain(self) -> str:
        """The domain the task is saved under."""
        return self.domain_edit.text().strip()

    @property
    def error(self) -> str:
        """The current problem, ``""`` when the task is valid."""
        return self._error

    def task(self) -> Task:
        """The edited task.

        Raises:
            OswError: If it is not valid (naming the JSON path).
        """
        if self._error:
            raise OswError(self._error, hint="fix it in the editor first")
        return parse_task(self._data, "the task")

    def set_data(
        self, data: Mapping[str, Any], *, domain: str | None = None, path: Path | None = None
    ) -> None:
        """Edit this task data (from a file, a template or a duplicate)."""
        self.path = path
        if domain is not None:
            self.domain_edit.setText(domain)
        self._data = copy.deepcopy(dict(data))
        self._load_widgets(json_too=True)
        self._validate()

    def set_solution(self, solution: list[dict[str, Any]] | None) -> None:
        """Replace the reference solution (``None`` removes it)."""
        if solution is None:
            self._data.pop("solution", None)
        else:
            self._data["solution"] = solution
        self._load_widgets(json_too=True)
        self._validate()

    def new_from_template(self, template: str = "command") -> None:
        """Start a new task from a template (see :data:`osw_studio.tasks.authoring.TEMPLATES`)."""
        self.set_data(new_task(template))

    def duplicate(self) -> None:
        """Turn the task into a copy with a new id, not yet saved."""
        self.set_data(duplicate_task(self._data))

    def save(
        self,
        folder: Path | None = None,
        *,
        index: Path | None = None,
        files: Mapping[str, bytes] | None = None,
    ) -> Path:
        """Save into ``folder`` (default: the folder the task came from) and ``index``, if given.

        Raises:
            OswError: If the task is not valid or cannot be written.
        """
        self.task()
        if folder is None:
            if self.path is None:
                raise OswError("the task has no folder yet", hint="choose a task folder to save it in")
            folder = self.path.parent.parent
        self.path = save_task(self._data, folder, self.domain, index=index, files=files)
        self.status.setText(f"Saved to {self.path}")
        return self.path

    # --- syncing widgets and data -----------------------------------------------------------------

    def _load_widgets(self, *, json_too: bool) -> None:
        self._loading = True
        try:
            d = self._data
            self.id_edit.setText(str(d.get("id", "")))
            self.instruction_edit.setPlainText(str(d.get("instruction", "")))
            apps = d.get("related_apps")
            self.apps_edit.setText(", ".join(map(str, apps)) if isinstance(apps, list) else "")
            config = d.get("config")
            self.setup.set_steps(config if isinstance(config, list) else [])
            evaluator = d.get("evaluator")
            self.evaluator.set_evaluator(evaluator if isinstance(evaluator, dict) else {})
            if json_too:
                self.json_edit.setPlainText(dumps_task(d))
        finally:
            self._loading = False

    def _on_form_edited(self, *_args: object) -> None:
        if self._loading:
            return
        d = self._data
        d["id"] = self.id_edit.text()
        d["instruction"] = self.instruction_edit.toPlainText()
        d["related_apps"] = [a.strip() for a in self.apps_edit.text().split(",") if a.strip()]
        try:
            d["config"] = self.setup.steps()
            d["evaluator"] = self.evaluator.evaluator()
        except OswError as exc:
            self._show_error(str(exc))
            return
        self._loading = True
        try:
            self.json_edit.setPlainText(dumps_task(d))
        finally:
            self._loading = False
        self._validate()

    def _on_json_edited(self) -> None:
        if self._loading:
            return
        try:
            data = json.loads(self.json_edit.toPlainText())
        except json.JSONDecodeError as exc:
            self._show_error(f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}")
            return
        if not isinstance(data, dict):
            self._show_error(f"$: a task must be a JSON object, not {type(data).__name__}")
            return
        self._data = data
        self._load_widgets(json_too=False)
        self._validate()

    def _validate(self) -> None:
        try:
            parse_task(self._data, "task")
        except OswError as exc:
            self._show_error(str(exc).removeprefix("task: "))
            return
        self._error = ""
        self.status.setStyleSheet("color: #2e7d32;")
        self.status.setText("Valid task")
        self.validated.emit("")
        self.changed.emit()

    def _show_error(self, text: str) -> None:
        self._error = text
        self.status.setStyleSheet("color: #c62828;")
        self.status.setText(text)
        self.validated.emit(text)
        self.changed.emit()
