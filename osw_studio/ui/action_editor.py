"""An editable list of actions, as a table (one row per action) or as JSON, kept in sync.

Edits are validated against the core action models; an invalid edit is reported in place with the row
and the field to fix, never applied half-way.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QAbstractItemDelegate,
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QPlainTextEdit,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QWidget,
)

from osw_studio.core.actions import ACTION_KINDS, Action, dump_actions, parse_actions
from osw_studio.core.errors import ActionParseError

TABLE, JSON_TAB = 0, 1

_Hint = QAbstractItemDelegate.EndEditHint
_SUBMITTING = (_Hint.EditNextItem, _Hint.EditPreviousItem, _Hint.SubmitModelCache)
"""How a cell editor closes on Tab, Shift+Tab and Enter: the person finished the edit."""


class ActionTable(QTableWidget):
    """The table of actions; a cell edit finished with Enter or Tab emits ``submitted``.

    Signals:
        submitted(): A cell edit ended with Enter, Tab or Shift+Tab (its text already committed).
    """

    submitted = Signal()

    def closeEditor(self, editor: QWidget, hint: QAbstractItemDelegate.EndEditHint) -> None:  # noqa: D102 (Qt override)
        super().closeEditor(editor, hint)
        if hint in _SUBMITTING:
            self.submitted.emit()


def actions_to_json(actions: list[Action]) -> str:
    """Actions as the pretty JSON shown in the editor.

    >>> from osw_studio.core.actions import Click
    >>> print(actions_to_json([Click(x=1, y=2)]))
    [
      {"kind": "click", "x": 1, "y": 2}
    ]
    """
    if not actions:
        return "[]"
    lines = ",\n".join("  " + json.dumps(a, ensure_ascii=False) for a in dump_actions(actions))
    return f"[\n{lines}\n]"


def json_to_actions(text: str) -> list[Action]:
    """Parse the editor's JSON into actions.

    Raises:
        ActionParseError: Saying which action and field are wrong and what the kinds are.

    >>> json_to_actions('[{"kind": "typing", "text": "hi"}]')
    [Typing(kind='typing', text='hi')]
    >>> json_to_actions('[{"kind": "clik"}]')
    Traceback (most recent call last):
    ...
    osw_studio.core.errors.ActionParseError: action 1: unknown kind 'clik' (kinds: move_to, click, ...)
    """
    try:
        data = json.loads(text or "[]")
    except json.JSONDecodeError as exc:
        raise ActionParseError(
            f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
            hint='write a list of actions like [{"kind": "click", "x": 10, "y": 20}]',
        ) from None
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise ActionParseError("the actions must be a JSON list", hint="wrap them in [ ]")
    for n, item in enumerate(data, start=1):
        kind = item.get("kind") if isinstance(item, dict) else None
        if kind not in ACTION_KINDS:
            raise ActionParseError(
                f"unknown kind {kind!r}", where=f"action {n}", hint="kinds: move_to, click, ..."
            )
    try:
        return parse_actions(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = [p for p in first["loc"] if not (isinstance(p, str) and p in ACTION_KINDS)]
        which = str(loc[0] + 1) if loc and isinstance(loc[0], int) else "?"
        field = ".".join(str(p) for p in loc[1:]) or "value"
        raise ActionParseError(
            f"{field}: {first['msg']}", where=f"action {which}", hint="fix it, then Approve"
        ) from None


class ActionEditor(QTabWidget):
    """Shows a list of actions; editable when :meth:`set_editable` says so.

    Signals:
        edited(): The person changed the actions.
        submitted(): The person finished a cell edit with Enter or Tab (the edit is to run).
    """

    edited = Signal()
    submitted = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.table = ActionTable(0, 2)
        self.table.setObjectName("actionTable")
        self.table.submitted.connect(self.submitted)
        self.table.setHorizontalHeaderLabels(["kind", "arguments (JSON)"])
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.verticalHeader().setVisible(True)
        self.json = QPlainTextEdit()
        self.json.setObjectName("actionJson")
        self.addTab(self.table, "Table")
        self.addTab(self.json, "JSON")
        self._actions: list[Action] = []
        self._loading = False
        self.table.itemChanged.connect(self._on_table_changed)
        self.json.textChanged.connect(self._on_json_changed)
        self.currentChanged.connect(self._on_tab_changed)
        self.set_editable(False)

    def set_actions(self, actions: list[Action]) -> None:
        """Show ``actions`` (discarding any edit)."""
        self._actions = list(actions)
        self._loading = True
        self.table.setRowCount(len(actions))
        for row, data in enumerate(dump_actions(actions)):
            kind = data.pop("kind")
            self.table.setItem(row, 0, QTableWidgetItem(kind))
            self.table.setItem(row, 1, QTableWidgetItem(json.dumps(data, ensure_ascii=False)))
        self.json.setPlainText(actions_to_json(actions))
        self._loading = False

    def set_editable(self, on: bool) -> None:
        """Allow edits (``on``) or show read-only."""
        triggers = (
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
            | QAbstractItemView.EditTrigger.AnyKeyPressed
            if on
            else QAbstractItemView.EditTrigger.NoEditTriggers
        )
        self.table.setEditTriggers(triggers)
        self.json.setReadOnly(not on)

    @property
    def original(self) -> list[Action]:
        """The actions last set with :meth:`set_actions`."""
        return list(self._actions)

    def commit_pending(self) -> None:
        """Finish a cell edit still open in the table: its text becomes the cell's (as Enter or Tab would).

        Whatever ends an edit (the Approve shortcut's Enter, a button, a tab switch) reads the actions
        only after this, so a change typed into a cell is never lost because its editor was still open.
        """
        if self.table.state() != QAbstractItemView.State.EditingState:
            return
        focused = QApplication.focusWidget()
        editors = [focused] if focused is not None and self.table.isAncestorOf(focused) else []
        editors += [
            w for w in self.table.viewport().findChildren(QWidget) if w.isVisible() and w not in editors
        ]
        for editor in editors[:1]:
            self.table.commitData(editor)
            self.table.closeEditor(editor, QAbstractItemDelegate.EndEditHint.NoHint)

    def current_actions(self) -> list[Action]:
        """The actions as edited now (a cell edit still open is committed first).

        Raises:
            ActionParseError: If the edit is not a valid list of actions.
        """
        self.commit_pending()
        if self.currentIndex() == JSON_TAB:
            return json_to_actions(self.json.toPlainText())
        return json_to_actions(json.dumps(self._table_data()))

    def is_modified(self) -> bool:
        """Whether the person changed the actions (an invalid edit counts as changed)."""
        try:
            return self.current_actions() != self._actions
        except ActionParseError:
            return True

    def _table_data(self) -> list[dict[str, Any]]:
        rows = []
        for row in range(self.table.rowCount()):
            kind_item, args_item = self.table.item(row, 0), self.table.item(row, 1)
            kind = kind_item.text().strip() if kind_item else ""
            try:
                args = json.loads(args_item.text()) if args_item and args_item.text().strip() else {}
            except json.JSONDecodeError as exc:
                raise ActionParseError(
                    f"arguments are not valid JSON ({exc.msg})",
                    where=f"action {row + 1}",
                    hint='write them like {"x": 10, "y": 20}',
                ) from None
            if not isinstance(args, dict):
                raise ActionParseError("arguments must be a JSON object", where=f"action {row + 1}")
            rows.append({"kind": kind, **args})
        return rows

    def _on_table_changed(self, _item: QTableWidgetItem) -> None:
        if not self._loading:
            self.edited.emit()

    def _on_json_changed(self) -> None:
        if not self._loading and not self.json.isReadOnly():
            self.edited.emit()

    def _on_tab_changed(self, index: int) -> None:
        # carry a valid edit over to the other tab; an invalid one stays where it was made
        self.commit_pending()
        source = JSON_TAB if index == TABLE else TABLE
        try:
            if source == JSON_TAB:
                actions = json_to_actions(self.json.toPlainText())
            else:
                actions = json_to_actions(json.dumps(self._table_data()))
        except ActionParseError:
            return
        keep = self._actions
        self.set_actions(actions)
        self._actions = keep
