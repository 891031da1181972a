"""Help › About: the versions of OSW Studio, Qt, PySide6 and Python, and the platform.

The same lines can be copied as text for a bug report. Hook it into a window with
``help_menu.addAction(about_action(window))``.
"""

from __future__ import annotations

import platform
import sys

import PySide6
from PySide6.QtCore import Qt, qVersion
from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from osw_studio import __version__
from osw_studio.ui.icons import app_icon

SUMMARY = "Watch, steer, evaluate and learn from computer-use agents on OSWorld-style desktops."


def build_kind() -> str:
    """How this copy of OSW Studio was installed: a frozen bundle or a Python package."""
    return "PyInstaller bundle" if getattr(sys, "frozen", False) else "Python package"


def version_rows() -> list[tuple[str, str]]:
    """(label, value) pairs: the app, Qt, PySide6, Python, the platform and the build."""
    return [
        ("OSW Studio", __version__),
        ("Qt", qVersion()),
        ("PySide6", PySide6.__version__),
        ("Python", f"{platform.python_version()} ({platform.python_implementation()})"),
        ("Platform", f"{platform.platform()} · {QGuiApplication.platformName() or 'no display'}"),
        ("Build", build_kind()),
    ]


def versions_text(rows: list[tuple[str, str]]) -> str:
    r"""The rows as plain text, one ``label: value`` per line, for a bug report.

    >>> versions_text([("OSW Studio", "1.2.3"), ("Qt", "6.8.0")])
    'OSW Studio: 1.2.3\nQt: 6.8.0'
    """
    return "\n".join(f"{label}: {value}" for label, value in rows)


class AboutDialog(QDialog):
    """The About box: icon, name, summary and a table of versions with a *Copy versions* button.

    Args:
        parent: The window it belongs to.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("aboutDialog")
        self.setWindowTitle("About OSW Studio")
        self.setWindowIcon(app_icon())
        self.rows = version_rows()

        self.icon = QLabel()
        self.icon.setPixmap(app_icon().pixmap(96, 96))
        self.icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        title = QLabel(f"<h2>OSW Studio {__version__}</h2><p>{SUMMARY}</p><p>Apache License 2.0</p>")
        title.setWordWrap(True)
        header = QHBoxLayout()
        header.addWidget(self.icon)
        header.addWidget(title, 1)

        form = QFormLayout()
        self.values: dict[str, QLabel] = {}
        for label, value in self.rows:
            field = QLabel(value)
            field.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            form.addRow(f"{label}:", field)
            self.values[label] = field

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy_button = buttons.addButton("Copy versions", QDialogButtonBox.ButtonRole.ActionRole)
        self.copy_button.setToolTip("Copy these versions to the clipboard, for a bug report")
        self.copy_button.clicked.connect(self.copy_versions)
        buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addLayout(header)
        layout.addLayout(form)
        layout.addWidget(buttons)

    def copy_versions(self) -> None:
        """Put the versions on the clipboard as text."""
        QGuiApplication.clipboard().setText(versions_text(self.rows))


def show_about(parent: QWidget | None = None) -> AboutDialog:
    """Open the About box (window-modal, without a nested event loop) and return it."""
    dialog = AboutDialog(parent)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()  # not exec(): a nested event loop would stall the asyncio loop
    return dialog


def about_action(parent: QWidget) -> QAction:
    """A *Help › About OSW Studio* action that opens the About box over ``parent``."""
    action = QAction(app_icon(), "&About OSW Studio", parent)
    action.setMenuRole(QAction.MenuRole.AboutRole)
    action.setObjectName("aboutAction")
    action.triggered.connect(lambda: show_about(parent))
    return action
