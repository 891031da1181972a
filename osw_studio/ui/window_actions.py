"""The main window's actions, toolbar and menus, kept out of the window (napari's ``qactions`` pattern).

:func:`build_actions` makes every action with its shortcut and puts them in the toolbar and the menus;
the window keeps the actions as attributes. The run controls call the window's
:class:`~osw_studio.ui.run_view.RunView`, the suite's its :class:`~osw_studio.ui.suite_view.SuiteView`;
:func:`update_actions` enables each action by the state of both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QLabel, QToolBar

from osw_studio.ui.about import about_action
from osw_studio.ui.icons import ActionIcon, action_icon
from osw_studio.ui.instruction_box import InstructionBox
from osw_studio.ui.profile_switcher import ProfileSwitcher
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
    """Make the window's actions, its toolbar and its menus (they call the window and its views)."""
    run, suite = window.run_view, window.suite_view

    def stop() -> None:  # Shift+F5 stops the run, or the suite (a suite task in focus: that task alone)
        focused = run.focused is not None and run.running
        run.stop()
        if not focused:
            suite.stop()

    window.run_action = _action(
        window, "Run", "F5", run.run_or_resume, "Run the selected task, or resume", "run"
    )
    window.pause_action = _action(
        window, "Pause", "Space", run.toggle_pause, "Pause or resume between phases", "pause"
    )
    window.pause_action.setCheckable(True)
    window.step_action = _action(window, "Step", "F10", run.step_once, "Run one step, then pause", "step")
    window.stop_action = _action(window, "Stop", "Shift+F5", stop, "Stop the run", "stop")
    window.approve_action = _action(
        window, "Approve", "Return", window.inspector.approve, "Approve the proposal", "approve"
    )
    window.takeover_action = _action(
        window, "Take over", TAKEOVER_KEY, run.toggle_takeover, "Act yourself", "takeover"
    )
    window.takeover_action.setCheckable(True)
    window.settings_action = _action(
        window, "Settings", "Ctrl+,", window.open_settings, "Edit the settings", "settings"
    )
    window.idle_shortcuts = [
        _idle_shortcut(window, window.pause_action, "Space pauses a run"),
        _idle_shortcut(window, window.step_action, "F10 runs one step of a run"),
    ]
    toolbar = QToolBar("Run")
    toolbar.setObjectName("runToolbar")
    toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    for action in (window.run_action, window.pause_action, window.step_action, window.stop_action):
        toolbar.addAction(action)
    toolbar.addSeparator()
    toolbar.addWidget(QLabel(" Mode "))
    toolbar.addWidget(run.mode)
    toolbar.addAction(window.approve_action)
    toolbar.addAction(window.takeover_action)
    toolbar.addSeparator()
    window.switcher = ProfileSwitcher(window.services.settings)
    window.switcher.switched.connect(lambda text: window.status.showMessage(text, 8000))
    toolbar.addWidget(window.switcher)
    toolbar.addAction(window.settings_action)
    window.addToolBar(toolbar)
    instruction_bar = QToolBar("Instruction")
    instruction_bar.setObjectName("instructionToolbar")
    window.instruction_box = InstructionBox(window)
    instruction_bar.addWidget(window.instruction_box)
    window.addToolBarBreak()
    window.addToolBar(instruction_bar)
    file_menu = window.menuBar().addMenu("&File")
    window.open_tasks_action = file_menu.addAction("Open tasks folder…", window.open_tasks_folder)
    window.open_tasks_action.setToolTip("List a folder's tasks beside those listed (remembered)")
    window.close_tasks_action = file_menu.addAction("Close opened tasks folders", window.close_tasks_folders)
    window.open_results_action = file_menu.addAction("Open results folder…", window.pick_results_folder)
    window.export_action = file_menu.addAction("Export runs…", window.open_export)
    window.export_action.setShortcut(QKeySequence("Ctrl+E"))
    file_menu.addSeparator()
    window.quit_action = file_menu.addAction("Quit", window.quit)
    window.quit_action.setShortcut(QKeySequence("Ctrl+Q"))  # the platform's Quit key may be unset
    # Ctrl+Q quits from the authoring window too, not only when this window is active
    window.quit_action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
    run_menu = window.menuBar().addMenu("&Run")
    window.retry_action = run_menu.addAction("Retry model call", run.retry_model_call)
    window.retry_action.setShortcut(QKeySequence("Ctrl+R"))
    window.retry_action.setToolTip("Call the model again for the step whose call failed")
    window.suite_action = run_menu.addAction("Evaluate suite…", suite.open_dialog)
    window.stop_suite_action = run_menu.addAction("Stop suite", suite.stop)
    view_menu = window.menuBar().addMenu("&View")
    window.pop_out_action = view_menu.addAction("Pop out viewer", window.toggle_pop_out)
    window.pop_out_action.setCheckable(True)
    window.pop_out_action.setShortcut(QKeySequence("Ctrl+Shift+P"))
    window.viewer.pop_out_requested.connect(window.toggle_pop_out)
    window.reset_layout_action = view_menu.addAction("Reset layout", window.reset_layout)
    view_menu.addSeparator()
    for dock in window.docks.values():
        view_menu.addAction(dock.toggleViewAction())
    tasks_menu = window.menuBar().addMenu("&Tasks")
    tasks_menu.addAction("Author a task…", window.open_authoring)
    help_menu = window.menuBar().addMenu("&Help")
    window.shortcuts_action = help_menu.addAction("Keyboard shortcuts", lambda: _show_shortcuts(window))
    window.shortcuts_action.setShortcut(QKeySequence("Ctrl+/"))
    window.about_action = about_action(window)
    help_menu.addAction(window.about_action)


def _show_shortcuts(window: MainWindow) -> None:
    from osw_studio.ui.shortcuts import ShortcutsDialog

    dialog = ShortcutsDialog(window)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()


def _idle_shortcut(window: MainWindow, action: QAction, what: str) -> QShortcut:
    """The key of ``action`` while the action does not apply: it says why in the status bar, not nothing."""

    def say() -> None:
        why = "a suite is running" if window.suite_view.running else "no run is active"
        window.status.showMessage(f"{what}, but {why}: select a task and press F5 to start one.", 6000)

    shortcut = QShortcut(action.shortcut(), window, say)
    shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
    return shortcut


def update_actions(window: MainWindow) -> None:
    """Enable the window's actions by what the run and the suite are doing."""
    run, suite = window.run_view, window.suite_view
    c = run.controller
    running = c is not None and c.running
    paused = running and c is not None and c.episode.paused
    suite_on = suite.running
    window.run_action.setEnabled(not suite_on and not run.starting and (not running or paused))
    window.pause_action.setEnabled(running)
    window.pause_action.setChecked(bool(paused))
    window.step_action.setEnabled(running)
    window.stop_action.setEnabled(running or suite_on)
    window.suite_action.setEnabled(not suite_on and not running and not run.starting)
    window.stop_suite_action.setEnabled(suite_on)
    window.retry_action.setEnabled(running and c is not None and c.episode.model_error is not None)
    window.takeover_action.setEnabled(running)
    window.takeover_action.setChecked(running and c is not None and c.episode.in_takeover)
    window.approve_action.setEnabled(running and c is not None and c.episode.proposal is not None)
    for shortcut, action in zip(
        window.idle_shortcuts, (window.pause_action, window.step_action), strict=True
    ):
        shortcut.setEnabled(not action.isEnabled())  # one of the two has the key at a time
