"""Help › About: the box shows the versions a bug report needs, and copies them as text."""

from __future__ import annotations

import platform

import PySide6
from PySide6.QtCore import qVersion
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMainWindow
from pytestqt.qtbot import QtBot

from osw_studio import __version__
from osw_studio.ui.about import AboutDialog, about_action


def test_about_shows_the_app_qt_pyside_python_and_platform(qtbot: QtBot) -> None:
    dialog = AboutDialog()
    qtbot.addWidget(dialog)
    dialog.show()

    shown = {label: field.text() for label, field in dialog.values.items()}
    assert shown["OSW Studio"] == __version__
    assert shown["Qt"] == qVersion()
    assert shown["PySide6"] == PySide6.__version__
    assert shown["Python"].startswith(platform.python_version())
    assert platform.system() in shown["Platform"]
    assert shown["Build"] == "Python package"
    assert not dialog.windowIcon().isNull()
    assert dialog.icon.pixmap().width() == 96


def test_copy_versions_puts_them_on_the_clipboard(qtbot: QtBot) -> None:
    dialog = AboutDialog()
    qtbot.addWidget(dialog)

    dialog.copy_button.click()

    text = QGuiApplication.clipboard().text()
    assert f"OSW Studio: {__version__}" in text.splitlines()
    assert f"Qt: {qVersion()}" in text.splitlines()


def test_about_action_opens_the_box_over_the_window(qtbot: QtBot) -> None:
    window = QMainWindow()
    qtbot.addWidget(window)
    action = about_action(window)
    window.menuBar().addMenu("&Help").addAction(action)

    action.trigger()

    dialog = window.findChild(AboutDialog, "aboutDialog")
    assert dialog is not None and dialog.isVisible()
    assert dialog.windowTitle() == "About OSW Studio"
    dialog.close()
