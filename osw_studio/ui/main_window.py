"""The main window: docks for tasks, the viewer, the step inspector, the timeline, runs and results.

It composes the views and gives each job to its module: the live run (and past runs opened for browsing)
to :class:`~osw_studio.ui.run_view.RunView`, Run › Evaluate suite… to
:class:`~osw_studio.ui.suite_view.SuiteView`, the actions, toolbar and menus to
:mod:`osw_studio.ui.window_actions`. The window itself keeps the layout (saved with QSettings and restored
on the next launch), the viewer's pop-out, and the File and Tasks menus' windows and dialogs.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QSettings, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QShortcut
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow, QWidget

from osw_studio import __version__
from osw_studio.core.errors import OswError, TaskError
from osw_studio.core.step import EpisodeResult
from osw_studio.runner.summary import RUNS_DIR
from osw_studio.tasks import TaskLibrary, load_tasks
from osw_studio.tasks.library import task_sources
from osw_studio.trajectory.store import RunStore
from osw_studio.ui.errors import ErrorReporter
from osw_studio.ui.results_view import ResultsView
from osw_studio.ui.review_window import ReviewWindow
from osw_studio.ui.run_history import RunHistory, list_runs
from osw_studio.ui.run_view import RunView
from osw_studio.ui.services import Services
from osw_studio.ui.settings_dialog import SettingsDialog
from osw_studio.ui.status import RunStatusBar
from osw_studio.ui.step_inspector import StepInspector
from osw_studio.ui.suite_view import SuiteView
from osw_studio.ui.task_browser import TaskBrowser
from osw_studio.ui.timeline import Timeline
from osw_studio.ui.viewer import ViewerWindow, VmViewer
from osw_studio.ui.wall import Wall, WallTile
from osw_studio.ui.window_actions import build_actions, update_actions

if TYPE_CHECKING:
    from osw_studio.ui.authoring import AuthoringWindow
    from osw_studio.ui.export_dialog import ExportDialog
    from osw_studio.ui.instruction_box import InstructionBox
    from osw_studio.ui.profile_switcher import ProfileSwitcher

log = logging.getLogger(__name__)

LAYOUT_VERSION = 4
"""Bumped when the docks change, so an older saved layout is not forced onto new docks."""

DOCK_AREAS = {
    "tasks": Qt.DockWidgetArea.LeftDockWidgetArea,
    "history": Qt.DockWidgetArea.LeftDockWidgetArea,
    "inspector": Qt.DockWidgetArea.RightDockWidgetArea,
    "results": Qt.DockWidgetArea.RightDockWidgetArea,
    "timeline": Qt.DockWidgetArea.BottomDockWidgetArea,
}
"""Where each dock of a new window is (View › Reset layout puts them back there)."""


def layout_fits(saved_screen: object, screen: tuple[int, int]) -> bool:
    """Whether a layout saved on ``saved_screen`` (``"WxH"``, or nothing) may be restored on ``screen``.

    >>> layout_fits("1920x1080", (2560, 1440)), layout_fits("2560x1440", (1920, 1080))
    (True, False)
    >>> layout_fits(None, (1920, 1080)), layout_fits("junk", (1920, 1080))
    (False, False)
    """
    if not isinstance(saved_screen, str):
        return False  # saved before the screen was recorded: an older version's layout
    width, _, height = saved_screen.partition("x")
    if not (width.isdigit() and height.isdigit()):
        return False
    return int(width) <= screen[0] and int(height) <= screen[1]


MIN_WINDOW = (1280, 720)
"""The smallest window everything fits in (a laptop screen)."""

DOCK_MIN_WIDTH = 220
"""The narrowest a side dock gets; the viewer keeps the rest."""


def result_word(result: EpisodeResult | None) -> str:
    """How the task list names a run's result: ``passed``, ``passed with help``, ``failed``, ``stopped``..."""
    if result is None:
        return "interrupted"
    if result.status in ("finished", "failed"):
        if result.success:
            return "passed with help" if result.assisted else "passed"
        return "failed"
    return result.status


SCORED = ("passed", "passed with help", "failed")


def last_results(runs_dir: Path, suites: Sequence[Path] = ()) -> dict[str, str]:
    """The result of each task id in the runs folder and the suites' runs folders.

    Each task's newest scored run counts, else its newest run: a later stopped or interrupted run does
    not hide an earlier pass.
    """
    found: dict[str, str] = {}
    runs = [run for root in (runs_dir, *suites) for run in list_runs(root)]
    for run in sorted(runs, key=lambda run: run.run_id):  # oldest first, so newer runs overwrite
        try:
            result = run.result
            task_id = run.meta.task_id
        except OswError:
            continue
        word = result_word(result)
        if word in SCORED or found.get(task_id) not in SCORED:
            found[task_id] = word
    return found


TASK_FOLDERS_KEY = "tasks/folders"
"""The QSettings key of the folders File › Open tasks folder… added (kept across restarts)."""

SUITES_KEY = "history/suites"
"""The QSettings key of the suites' runs folders Run history lists (kept across restarts)."""


def suite_runs_folders(suites_dir: Path, remembered: object) -> list[Path]:
    """The runs folders of suites evaluated before: the remembered ones and those under ``suites_dir``.

    Folders that are gone are left out; each folder once, in the order found.
    """
    found: list[Path] = []
    names = (
        [remembered] if isinstance(remembered, str) else remembered if isinstance(remembered, list) else []
    )
    for name in names:
        if isinstance(name, str) and name:
            found.append(Path(name))
    if suites_dir.is_dir():
        found += sorted(p / RUNS_DIR for p in suites_dir.iterdir() if (p / RUNS_DIR).is_dir())
    unique = dict.fromkeys(p for p in found if p.is_dir())
    return list(unique)


class MainWindow(QMainWindow):
    """OSW Studio's window.

    Signals:
        closed(): The window closed (the app then shuts down its runs, sandboxes and env).

    Args:
        library: The tasks to offer.
        services: The env and episode factory.
        qsettings: Where the window layout is kept (default: the platform's QSettings for the app).
        reporter: Shows errors as messages (default: dialogs on this window).
    """

    closed = Signal()

    # made by :func:`osw_studio.ui.window_actions.build_actions`
    run_action: QAction
    pause_action: QAction
    step_action: QAction
    stop_action: QAction
    approve_action: QAction
    takeover_action: QAction
    settings_action: QAction
    open_tasks_action: QAction
    close_tasks_action: QAction
    open_results_action: QAction
    export_action: QAction
    quit_action: QAction
    retry_action: QAction
    suite_action: QAction
    stop_suite_action: QAction
    pop_out_action: QAction
    reset_layout_action: QAction
    about_action: QAction
    shortcuts_action: QAction
    idle_shortcuts: list[QShortcut]
    switcher: ProfileSwitcher
    instruction_box: InstructionBox

    def __init__(
        self,
        library: TaskLibrary,
        services: Services,
        *,
        qsettings: QSettings | None = None,
        reporter: ErrorReporter | None = None,
    ) -> None:
        super().__init__()
        self.setWindowTitle(f"OSW Studio {__version__}")
        self.setObjectName("mainWindow")
        self.resize(1600, 960)
        self.setDockNestingEnabled(True)
        self.library = library
        self.services = services
        self.qsettings = qsettings or QSettings("osw-studio", "osw-studio")
        self._reporter = reporter or ErrorReporter(self)
        suites = suite_runs_folders(services.runs_dir.parent / "suites", self.qsettings.value(SUITES_KEY))
        self._results = last_results(services.runs_dir, suites)
        self._review_windows: list[QWidget] = []
        self._task_suite = services.settings.evaluation.task_suite
        remembered = self.qsettings.value(TASK_FOLDERS_KEY)
        names = remembered if isinstance(remembered, list) else [remembered] if remembered else []
        self.opened_folders: list[Path] = [Path(n) for n in names if isinstance(n, str) and Path(n).exists()]
        """Folders File › Open tasks folder… added, listed beside the bundled tasks and the suite."""
        if self.opened_folders:
            library.load(self._task_sources())
        self.authoring: AuthoringWindow | None = None
        self._viewer_window: ViewerWindow | None = None

        self.tasks = TaskBrowser(library, self._results.get)
        self.viewer = VmViewer()
        self.inspector = StepInspector()
        self.timeline = Timeline()
        self.history = RunHistory(services.runs_dir)
        if suites:  # a suite's runs stay in Run history after a restart
            self.history.add_suites(suites)
        self.history.suites_changed.connect(self._on_suites_changed)
        self.results = ResultsView()
        self.status = RunStatusBar()
        self.setStatusBar(self.status)
        self.run_view = RunView(
            services,
            self._reporter,
            tasks=self.tasks,
            viewer=self.viewer,
            inspector=self.inspector,
            timeline=self.timeline,
            status=self.status,
            parent=self,
        )
        self.mode = self.run_view.mode
        self.suite_view = SuiteView(
            services,
            self._reporter,
            status=self.status,
            results=self.results,
            history=self.history,
            parent=self,
        )
        # a single run and a suite share the env: one waits for the other
        self.run_view.busy_elsewhere = lambda: self.suite_view.running
        self.suite_view.busy_elsewhere = lambda: self.run_view.busy
        self.status.set_env(services.env_description())
        self.status.set_model(services.settings.resolve_profile().model)

        # The viewer is the central widget: it takes whatever space the docks leave, so a maximised
        # window shows the guest large; the task list, the inspector and the rest are narrow docks.
        self.setCentralWidget(self.viewer)
        self.docks: dict[str, QDockWidget] = {}
        area = Qt.DockWidgetArea
        self._dock("tasks", "Tasks", self.tasks, area.LeftDockWidgetArea)
        self._dock("history", "Run history", self.history, area.LeftDockWidgetArea)
        self._dock("inspector", "Step inspector", self.inspector, area.RightDockWidgetArea)
        self._dock("results", "Results", self.results, area.RightDockWidgetArea)
        self._dock("timeline", "Timeline", self.timeline, area.BottomDockWidgetArea)
        self.wall = Wall()  # every env of a running suite, live (shown when a suite starts)
        self._dock("wall", "Wall", self.wall, area.BottomDockWidgetArea)
        self.docks["wall"].hide()
        self.wall.tile_clicked.connect(self._focus_tile)
        self.wall.close_focus.connect(self._close_focus)
        for name in ("tasks", "history", "inspector", "results"):
            self.docks[name].widget().setMinimumWidth(DOCK_MIN_WIDTH)
        self._state_before_pop_out: QByteArray | None = None
        self.arrange_docks()

        build_actions(self)
        self.run_view.controls_changed.connect(self._update_actions)
        self.run_view.run_finished.connect(self._on_run_finished)
        self.suite_view.controls_changed.connect(self._update_actions)
        self.suite_view.controls_changed.connect(self._follow_suite_on_wall)
        self.suite_view.results_changed.connect(self.show_results)
        self.suite_view.results_changed.connect(lambda _folder: self._reload_last_results())
        self.history.run_opened.connect(self.run_view.open_run)
        self.history.review_requested.connect(self.review_run)
        self.results.run_opened.connect(self._on_result_opened)
        self.results.folder_changed.connect(lambda folder: self.qsettings.setValue("results/folder", folder))
        services.settings.changed.connect(self._on_settings_changed)
        self._update_actions()
        self.restore_layout()
        self._restore_results_folder()
        count = len(library)
        self.status.showMessage(f"{count} tasks in {len(library.domains)} domains. Pick one and press F5.")

    @property
    def reporter(self) -> ErrorReporter:
        """Shows errors as messages (the app replaces it with one that also names the log file)."""
        return self._reporter

    @reporter.setter
    def reporter(self, reporter: ErrorReporter) -> None:
        self._reporter = self.run_view.reporter = self.suite_view.reporter = reporter

    def _follow_suite_on_wall(self) -> None:
        """A suite started: the Wall shows its envs; it ended: the tiles stay, their streams stop."""
        run = self.suite_view.run if self.suite_view.running else None
        if run is not None and run is not self.wall.run:
            dock = self.docks["wall"]
            if not dock.isFloating() and not dock.isVisible():  # the wall takes the timeline's place
                self.tabifyDockWidget(self.docks["timeline"], dock)
            dock.show()
            dock.raise_()
            self.resizeDocks([dock], [360], Qt.Orientation.Vertical)
        self.wall.follow(run)

    def _focus_tile(self, tile: WallTile) -> None:
        """A wall tile was clicked: its task in the main viewer and inspector, steered alone."""
        if tile.episode is None or (self.run_view.busy and self.run_view.focused is None):
            return
        self.wall.set_focused(tile)
        self.run_view.focus_later(tile.episode)

    def _close_focus(self) -> None:
        """Close focus: back to the wall; the task goes on in its suite."""
        self.wall.set_focused(None)
        self.run_view.focus_later(None)
        self.docks["wall"].raise_()

    # --- layout -------------------------------------------------------------------------------------

    def _dock(self, name: str, title: str, widget: QWidget, where: Qt.DockWidgetArea) -> None:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock_{name}")
        dock.setWidget(widget)
        self.addDockWidget(where, dock)
        self.docks[name] = dock

    def arrange_docks(self) -> None:
        """Put every dock where a new window has it: tasks and history left, inspector and results right."""
        for name, where in DOCK_AREAS.items():
            dock = self.docks[name]
            dock.setFloating(False)
            self.addDockWidget(where, dock)
            dock.show()
        self.tabifyDockWidget(self.docks["tasks"], self.docks["history"])
        self.docks["tasks"].raise_()
        self.tabifyDockWidget(self.docks["inspector"], self.docks["results"])
        self.docks["inspector"].raise_()
        self.resizeDocks(
            [self.docks["tasks"], self.docks["inspector"]], [300, 340], Qt.Orientation.Horizontal
        )

    def reset_layout(self) -> None:
        """View › Reset layout: the docks as a new window has them, the viewer back in this window."""
        if self._viewer_window is not None:
            self._viewer_window.close()
        self._state_before_pop_out = None
        self.arrange_docks()
        self.status.showMessage("Layout reset: the docks are where a new window has them.", 5000)

    def restore_layout(self) -> None:
        """Restore the window geometry and dock layout saved at the last close, when they fit.

        A layout saved by an older version (another ``LAYOUT_VERSION``) or on a larger screen than this
        one is not restored: the window keeps the layout a new window has.
        """
        geometry = self.qsettings.value("window/geometry")
        state = self.qsettings.value("window/state")
        if not layout_fits(self.qsettings.value("window/screen"), self._screen_size()):
            log.info("the saved window layout is for a larger screen: not restored")
            return
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        if isinstance(state, QByteArray) and not self.restoreState(state, LAYOUT_VERSION):
            log.info("the saved dock layout is of another version: not restored")

    def save_layout(self) -> None:
        """Save the window geometry and dock layout (as they were before a pop-out, while one is open)."""
        self.qsettings.setValue("window/geometry", self.saveGeometry())
        state = self._state_before_pop_out or self.saveState(LAYOUT_VERSION)
        self.qsettings.setValue("window/state", state)
        width, height = self._screen_size()
        self.qsettings.setValue("window/screen", f"{width}x{height}")
        self.qsettings.sync()

    def _screen_size(self) -> tuple[int, int]:
        screen = self.screen()
        size = screen.availableGeometry().size() if screen is not None else None
        return (size.width(), size.height()) if size is not None else (0, 0)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: D102 (Qt override)
        self.save_layout()
        self.run_view.stop()
        self.suite_view.stop()
        if self.authoring is not None:
            self.authoring.close()  # the app ends with its main window; shutdown stops the sandbox
        if self._viewer_window is not None:
            self._viewer_window.close()
        super().closeEvent(event)
        self.closed.emit()

    def quit(self) -> None:
        """File › Quit (Ctrl+Q, from any of the app's windows): close every window; the app then ends."""
        self.close()

    @property
    def viewer_popped_out(self) -> bool:
        """Whether the viewer is in a window of its own."""
        return self._viewer_window is not None

    def toggle_pop_out(self) -> None:
        """View › Pop out viewer: move the viewer into a window of its own, or back into this one."""
        if self._viewer_window is None:
            # the docks grow into the space the viewer leaves; they give it back when it returns
            self._state_before_pop_out = self.saveState(LAYOUT_VERSION)
            self.takeCentralWidget()  # keeps the viewer alive (setCentralWidget would delete it)
            placeholder = QLabel("The viewer is in its own window; close it to bring the viewer back.")
            placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
            self.setCentralWidget(placeholder)
            window = ViewerWindow(self.viewer)
            window.addAction(self.quit_action)
            window.closed.connect(self._on_viewer_window_closed)
            self._viewer_window = window
            window.show()
        else:
            self._viewer_window.close()
        self.pop_out_action.setChecked(self._viewer_window is not None)

    def _on_viewer_window_closed(self) -> None:
        window, self._viewer_window = self._viewer_window, None
        if window is None:
            return
        self.viewer.setParent(None)
        self.setCentralWidget(self.viewer)
        self.viewer.show()
        state, self._state_before_pop_out = self._state_before_pop_out, None
        if state is not None:
            self.restoreState(state, LAYOUT_VERSION)
        window.deleteLater()
        self.pop_out_action.setChecked(False)

    def open_authoring(self) -> QMainWindow:
        """Open the task-authoring window (editor, sandbox setup, demonstration, checks)."""
        from osw_studio.ui.authoring import AuthoringWindow

        if self.authoring is None:
            self.authoring = AuthoringWindow(log_file=self.reporter.log_file)
            self.authoring.place()
            self.authoring.addAction(self.quit_action)  # Ctrl+Q there quits the app, sandbox and all
        self.authoring.show()
        self.authoring.raise_()
        return self.authoring

    def _update_actions(self) -> None:
        update_actions(self)

    async def shutdown(self) -> None:
        """Stop the run and the suite, close the authoring window's sandbox, the live stream and the env."""
        await self.run_view.shutdown()
        await self.suite_view.shutdown()
        if self.authoring is not None:
            await self.authoring.shutdown()
        await self.services.aclose()

    def _on_suites_changed(self) -> None:
        self.qsettings.setValue(SUITES_KEY, [str(p) for p in self.history.suites])
        self._reload_last_results()

    def _reload_last_results(self) -> None:
        self._results.clear()
        self._results.update(last_results(self.services.runs_dir, self.history.suites))
        self.tasks.refresh()

    def _on_run_finished(self, result: EpisodeResult) -> None:
        word = result_word(result)
        if word in SCORED or self._results.get(result.task_id) not in SCORED:
            self._results[result.task_id] = word
        self.history.refresh()
        self.tasks.refresh()
        self._refresh_results()

    # --- browsing -----------------------------------------------------------------------------------

    def review_run(self, run: RunStore) -> ReviewWindow | None:
        """Open a review window on a past run (labels go to its review.jsonl); ``None`` if it cannot."""
        try:
            window = ReviewWindow(run, parent=self)
        except OswError as exc:
            self.reporter.report(exc)
            return None
        self._review_windows = [w for w in self._review_windows if w.isVisible()]
        self._review_windows.append(window)
        window.show()
        return window

    def open_tasks_folder(self, folder: Path | None = None) -> bool:
        """File › Open tasks folder…: list a folder's (or an index file's) tasks beside those listed.

        The folder is remembered for the next launch; the task list's filters are reset so its tasks
        show. A folder without a loadable task says so and the list keeps the tasks it had.
        """
        from PySide6.QtWidgets import QFileDialog

        if folder is None:
            name = QFileDialog.getExistingDirectory(self, "Tasks folder to open")
            if not name:
                return False
            folder = Path(name)
        if not load_tasks([folder]).entries:
            return self._load_tasks([folder], str(folder))  # says why, and keeps the list
        if folder not in self.opened_folders:
            self.opened_folders.append(folder)
        self._remember_opened_folders()
        self.tasks.reset_filters()
        return self._load_tasks(self._task_sources(), f"{folder} and the tasks listed before")

    def close_tasks_folders(self) -> None:
        """File › Close opened tasks folders: back to the bundled tasks and the settings' suite."""
        self.opened_folders = []
        self._remember_opened_folders()
        self._load_tasks(self._task_sources(), self._task_suite or "the bundled tasks")

    def _task_sources(self) -> list[Path]:
        return [*task_sources(self._task_suite), *self.opened_folders]

    def _remember_opened_folders(self) -> None:
        self.qsettings.setValue(TASK_FOLDERS_KEY, [str(p) for p in self.opened_folders])

    def _load_tasks(self, paths: list[Path], what: str) -> bool:
        """List the tasks under ``paths``; if none loads, say so and keep the tasks listed."""
        found = load_tasks(paths)
        if not found.entries:
            first = f" ({found.errors[0]})" if found.errors else ""
            self.reporter.report(
                TaskError(
                    "no task could be loaded" + first,
                    where=what,
                    hint="pick a folder of task JSON files",
                )
            )
            return False
        self.library.load(paths)
        self.tasks.refresh()
        skipped = f"; {len(found.errors)} file(s) skipped (see the log)" if found.errors else ""
        for error in found.errors[:20]:
            log.warning("task not loaded: %s", error)
        self.status.showMessage(f"{len(self.library)} tasks from {what}{skipped}")
        return True

    # --- results ------------------------------------------------------------------------------------

    def _restore_results_folder(self) -> None:
        saved = self.qsettings.value("results/folder")
        folder = Path(saved) if isinstance(saved, str) and saved else self.services.runs_dir
        if folder.is_dir():
            self.results.set_folder(folder)

    def pick_results_folder(self) -> None:
        """File > Open results folder…: show a batch's results (``eval run --out``, runs or OSWorld's)."""
        self.docks["results"].show()
        self.docks["results"].raise_()
        self.results.pick_folder()

    def show_results(self, folder: Path) -> None:
        """Show the results in ``folder`` in the Results dock."""
        self.docks["results"].show()
        self.docks["results"].raise_()
        self.results.set_folder(folder)

    def _on_result_opened(self, run: RunStore) -> None:
        if self.run_view.open_run(run):  # shown: the viewer and the timeline take over
            self.docks["inspector"].raise_()

    def open_export(self) -> ExportDialog:
        """File > Export runs…: the runs selected in Run history, or the runs folder, to a format."""
        from osw_studio.ui.export_dialog import ExportDialog

        dialog = ExportDialog(self.history.selected_runs(), self.services.runs_dir, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def _refresh_results(self) -> None:
        folder = self.results.folder
        if folder is None and self.services.runs_dir.is_dir():  # the first run made the runs folder
            self.results.set_folder(self.services.runs_dir)
        elif folder is not None and self.services.runs_dir.resolve().is_relative_to(folder.resolve()):
            self.results.refresh()

    # --- settings -----------------------------------------------------------------------------------

    def open_settings(self) -> SettingsDialog:
        """Open the settings dialog (non-modal, so the loop keeps running)."""
        dialog = SettingsDialog(self.services.settings, self)
        dialog.setModal(True)
        dialog.accepted.connect(lambda: self._take_session_key(dialog))
        dialog.open()
        return dialog

    def _take_session_key(self, dialog: SettingsDialog) -> None:
        if dialog.session_key:
            self.services.session_key = dialog.session_key
            self.status.showMessage(
                "No keyring: the model key is used for this session only (not stored).", 15000
            )

    def _on_settings_changed(self, field: str) -> None:
        suite = self.services.settings.evaluation.task_suite
        if field == "evaluation" and suite != self._task_suite:
            self._task_suite = suite
            self._load_tasks(self._task_sources(), suite or "the bundled tasks")
        try:
            self.status.set_model(self.services.settings.resolve_profile().model)
        except OswError as exc:
            self.status.showMessage(str(exc), 8000)
        self.status.set_env(self.services.env_description())
