"""The desktop app's composition root: QApplication, the qasync event loop, settings, services, window.

``osw-studio`` with no sub-command lands here (:func:`main`). The asyncio loop *is* the Qt main thread
(qasync), so envs, the model client and the episode run on it without threads; views never block it.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import logging.handlers
import os
import sys
import time
from pathlib import Path

import platformdirs

from osw_studio import __version__
from osw_studio.core.errors import OswError
from osw_studio.core.exit_codes import ExitCode
from osw_studio.core.terminal import VisibleFormatter
from osw_studio.settings import Settings, load_settings
from osw_studio.tasks import TaskLibrary
from osw_studio.tasks.library import task_sources

log = logging.getLogger("osw_studio")

APP_NAME = "osw-studio"


def log_file() -> Path:
    """Where the app writes its log."""
    return Path(platformdirs.user_log_dir(APP_NAME)) / "osw-studio.log"


def runs_dir(settings: Settings) -> Path:
    """Where run stores go: ``evaluation.output_dir`` or the platform data dir's ``runs/``."""
    if settings.evaluation.output_dir:
        return Path(settings.evaluation.output_dir).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME)) / "runs"


def task_paths(settings: Settings) -> list[Path]:
    """The task sources the browser shows: the bundled suite and the settings' ``task_suite``."""
    return task_sources(settings.evaluation.task_suite)


def _setup_logging() -> Path:
    path = log_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=5_000_000, backupCount=3, encoding="utf-8")
    # Records quote task files, model replies and guest answers: their control characters are escaped.
    handler.setFormatter(VisibleFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return path


def _exit_after_ms() -> int | None:
    """``OSW_STUDIO_EXIT_AFTER_MS``: close the window that many milliseconds after it opens."""
    value = os.environ.get("OSW_STUDIO_EXIT_AFTER_MS", "").strip()
    if not value:
        return None
    if not value.isdigit():
        log.warning("OSW_STUDIO_EXIT_AFTER_MS=%r is not a whole number of milliseconds; ignored", value)
        return None
    return int(value)


def main(args: argparse.Namespace) -> int:
    """Open the main window and run until it closes; the exit code."""
    started = time.perf_counter()
    import qasync
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QMessageBox

    from osw_studio.ui.errors import ErrorReporter, error_text, install_excepthook
    from osw_studio.ui.icons import app_icon
    from osw_studio.ui.main_window import MainWindow
    from osw_studio.ui.services import Services

    logfile = _setup_logging()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName(APP_NAME)
    app.setApplicationDisplayName("OSW Studio")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("osw-studio")  # ties windows to packaging/linux/osw-studio.desktop
    app.setWindowIcon(app_icon())
    try:
        settings = load_settings(getattr(args, "config", None))
    except OswError as exc:
        title, body = error_text(exc)
        QMessageBox.critical(None, title, body)
        print(f"error: {exc}", file=sys.stderr)
        return ExitCode.ERROR
    library = TaskLibrary.from_paths(task_paths(settings))
    for error in library.errors[:20]:
        log.warning("task not loaded: %s", error)

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    services = Services(settings, runs_dir(settings))
    window = MainWindow(library, services)
    reporter = ErrorReporter(window, logfile)
    window.reporter = reporter
    install_excepthook(reporter, loop)
    window.show()
    log.info("window shown %.0f ms after start", (time.perf_counter() - started) * 1000)
    for notice in settings.notices:
        window.status.showMessage(notice, 15000)

    closed = asyncio.Event()
    # The loop must outlive the last window: shutdown (stopping runs, sandboxes, the env) runs on it, so
    # the app ends when the main window has closed and shutdown is done, not when Qt sees no window.
    app.setQuitOnLastWindowClosed(False)
    window.closed.connect(closed.set)
    app.aboutToQuit.connect(closed.set)
    exit_after = _exit_after_ms()
    if exit_after is not None:  # packaging smoke tests: open the window, then close it like a person
        QTimer.singleShot(exit_after, window.close)

    async def prepare_env() -> None:
        window.status.set_env(services.env_description() + " · starting…")
        try:
            env = await services.ensure_env()
        except OswError as exc:
            reporter.report(exc)
            window.status.set_env(services.env_description())
            return
        window.status.set_env(services.env_description() + " · ready")
        await window.run_view.show_idle_env(env)

    async def run() -> None:
        prepare = None
        if os.environ.get("OSW_STUDIO_NO_ENV") != "1":  # set by screenshots and benches: window only
            prepare = asyncio.ensure_future(prepare_env())
        await closed.wait()
        if prepare is not None:
            prepare.cancel()
        await window.shutdown()

    with loop:
        loop.run_until_complete(run())
    return ExitCode.OK
