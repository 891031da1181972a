"""Help › Keyboard shortcuts: every key the window's actions answer to, read from the actions themselves."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QMainWindow,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)


def shortcut_rows(window: QMainWindow) -> list[tuple[str, str]]:
    """``(what, key)`` for each action of ``window`` (its own and its menus') that has a shortcut."""
    actions: list[QAction] = list(window.findChildren(QAction))
    rows: dict[str, str] = {}
    for action in actions:
        key = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        what = action.text().replace("&", "")
        if key and what and what not in rows:
            rows[what] = key
    return sorted(rows.items(), key=lambda row: row[0].lower())


class ShortcutsDialog(QDialog):
    """A table of the window's keyboard shortcuts."""

    def __init__(self, window: QMainWindow, parent: QWidget | None = None) -> None:
        super().__init__(parent or window)
        self.setWindowTitle("Keyboard shortcuts")
        rows = shortcut_rows(window)
        self.table = QTableWidget(len(rows), 2)
        self.table.setObjectName("shortcutsTable")
        self.table.setHorizontalHeaderLabels(["Action", "Key"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for r, (what, key) in enumerate(rows):
            self.table.setItem(r, 0, QTableWidgetItem(what))
            self.table.setItem(r, 1, QTableWidgetItem(key))
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(420, 480)
