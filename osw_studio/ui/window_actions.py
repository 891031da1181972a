"""The main window's actions, toolbar and menus, kept out of the window (napari's ``qactions`` pattern).

:func:`build_actions` makes every action with its shortcut and puts them in the toolbar and the menus;
the window keeps the actions as attributes and enables them by its state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QComboBox, QLabel, QToolBar

from osw_studio.ui.about import about_action
from osw_studio.ui.icons import ActionIcon, action_icon
from osw_studio.ui.viewer import TAKEOVER_KEY

if TYPE_CHECKING:
    from osw_studio.ui.main_window import MainWindow


def _action(
    window: MainWindow, text: str, shortcut: QKeySequence | str, slot: object, tip: str, icon: ActionIcon
) -> QAction:
    action = QAction(action_icon(icon), text, window)
    action.setShortcut(QKeySequence(shortcut))
    action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    action.setToolTip(f"{tip} ({QKeySequence(shortcut).toString()})")
    action.triggered.connect(slot)
    window.addAction(action)
    return action


def build_actions(window: MainWindow) -> None:
    """Make the window's actions, its toolbar and its menus (they call the window's methods)."""
    window.run_action = _action(
        window, "Run", "F5", window.run_or_resume, "Run the selected task, or resume", "run"
    )
    window.pause_action = _action(
        window, "Pause", "Space", window.toggle_pause, "Pause or resume between phases", "pause"
    )
    window.pause_action.setCheckable(True)
    window.step_action = _action(window, "Step", "F10", window.step_once, "Run one step, then pause", "step")
    window.stop_action = _action(window, "Stop", "Shift+F5", window.stop, "Stop the run", "stop")
    window.approve_action = _action(
        window, "Approve", "Return", window.inspector.approve, "Approve the proposal", "approve"
    )
    window.takeover_action = _action(
        window, "Take over", TAKEOVER_KEY, window.toggle_takeover, "Act yourself", "takeover"
    )
    window.takeover_action.setCheckable(True)
    window.settings_action = _action(
        window, "Settings", "Ctrl+,", window.open_settings, "Edit the settings", "settings"
    )
    window.mode = QComboBox()
    window.mode.setObjectName("mode")
    window.mode.addItems(["auto", "approve"])
    window.mode.setToolTip("auto: actions run as proposed; approve: each waits for you")
    window.mode.currentTextChanged.connect(window._on_mode_changed)
    toolbar = QToolBar("Run")
    toolbar.setObjectName("runToolbar")
    toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    for action in (window.run_action, window.pause_action, window.step_action, window.stop_action):
        toolbar.addAction(action)
    toolbar.addSeparator()
    toolbar.addWidget(QLabel(" Mode "))
    toolbar.addWidget(window.mode)
    toolbar.addAction(window.approve_action)
    toolbar.addAction(window.takeover_action)
    toolbar.addSeparator()
    toolbar.addAction(window.settings_action)
    window.addToolBar(toolbar)
    file_menu = window.menuBar().addMenu("&File")
    window.open_tasks_action = file_menu.addAction("Open tasks folder…", window.open_tasks_folder)
    window.open_results_action = file_menu.addAction("Open results folder…", window.pick_results_folder)
    window.export_action = file_menu.addAction("Export runs…", window.open_export)
    window.export_action.setShortcut(QKeySequence("Ctrl+E"))
    file_menu.addSeparator()
    window.quit_action = file_menu.addAction("Quit", window.quit)
    window.quit_action.setShortcut(QKeySequence("Ctrl+Q"))  # the platform's Quit key may be unset
    # Ctrl+Q quits from the authoring window too, not only when this window is active
    window.quit_action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
    run_menu = window.menuBar().addMenu("&Run")
    window.retry_action = run_menu.addAction("Retry model call", window.retry_model_call)
    window.retry_action.setShortcut(QKeySequence("Ctrl+R"))
    window.retry_action.setToolTip("Call the model again for the step whose call failed")
    window.suite_action = run_menu.addAction("Evaluate suite…", window.open_suite_dialog)
    window.stop_suite_action = run_menu.addAction("Stop suite", window.stop_suite)
    view_menu = window.menuBar().addMenu("&View")
    window.pop_out_action = view_menu.addAction("Pop out viewer", window.toggle_pop_out)
    window.pop_out_action.setCheckable(True)
    window.pop_out_action.setShortcut(QKeySequence("Ctrl+Shift+P"))
    window.viewer.pop_out_requested.connect(window.toggle_pop_out)
    view_menu.addSeparator()
    for dock in window.docks.values():
        view_menu.addAction(dock.toggleViewAction())
    tasks_menu = window.menuBar().addMenu("&Tasks")
    tasks_menu.addAction("Author a task…", window.open_authoring)
    help_menu = window.menuBar().addMenu("&Help")
    window.about_action = about_action(window)
    help_menu.addAction(window.about_action)
