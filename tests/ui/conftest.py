"""UI tests run headless (Qt's offscreen platform) on a qasync loop, so async tests drive real widgets.

Tests that drive the real main window over the bundled tasks open it with :func:`open_window`; those that
script a model give it :func:`model_settings` for the :func:`model_server` they queue replies on.
"""

from __future__ import annotations

import asyncio
import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported anywhere in these tests

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

import pytest
import pytestqt.plugin
import qasync
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from osw_studio.agent.base import Agent
from osw_studio.agent.registry import make_agent
from osw_studio.settings import ResolvedProfile, Settings
from osw_studio.tasks import TaskEntry, TaskLibrary
from osw_studio.tasks.library import BUNDLED_TASKS
from osw_studio.ui.main_window import MainWindow
from osw_studio.ui.services import Services
from tests.fakes.openai_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]

MODELS = ("scripted", "ui-tars")
"""The models :func:`model_server` answers for."""


_LOOPS: list[qasync.QEventLoop] = []


def _qt_loop() -> qasync.QEventLoop:
    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app, already_running=False)
    # Every test's loop is kept until the process ends. A closed qasync loop leaves its Qt timers
    # registered until they fire (a cancelled asyncio timeout's among them, for minutes); were the loop
    # freed by the garbage collector in a worker thread, Qt could not unregister them there, and the next
    # one to fire would crash the process (a segfault in QTimerInfoList::activateTimers).
    _LOOPS.append(loop)
    return loop


def _process_events_on_the_loop() -> None:
    """pytest-qt's event processing between a test's phases, with the test's qasync loop as the running one.

    pytest-qt processes Qt's events after each test's call and before and after its teardown, outside
    any ``run_until_complete``. A qasync loop's callbacks (a socket turning readable, a cancellation)
    then step asyncio tasks with no running loop, which the app never does (its loop runs for the
    window's whole life): a live frame stream's httpx read raised "no running event loop" there and its
    task ended in error at the window's shutdown. Here they run as they would in the app.
    """
    app = QApplication.instance()
    if app is None:
        return
    loop = _LOOPS[-1] if _LOOPS else None
    if loop is None or loop.is_closed() or asyncio.events._get_running_loop() is not None:
        app.processEvents()
        return
    asyncio.events._set_running_loop(loop)
    try:
        app.processEvents()
    finally:
        asyncio.events._set_running_loop(None)


pytestqt.plugin._process_events = _process_events_on_the_loop


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> Mapping[str, Callable[[], object]]:
    """Async UI tests run on a Qt event loop (qasync), as the app does."""
    return {"qt": _qt_loop}


@pytest.fixture(autouse=True)
def no_unanswered_questions(monkeypatch: pytest.MonkeyPatch) -> None:
    """A modal question the test did not answer fails it at once: it would wait for a person forever
    (pytest-timeout's signal cannot end Qt's modal loop). A test that expects one patches it itself."""

    def question(_parent: object, title: str, text: str, *_args: object) -> QMessageBox.StandardButton:
        raise AssertionError(f"the window asked a question no one answers: {title}: {text}")

    monkeypatch.setattr(QMessageBox, "question", question)


@pytest.fixture
def qsettings(tmp_path: Path) -> Iterator[QSettings]:
    """A QSettings file of the test's own (the window layout is saved there)."""
    settings = QSettings(str(tmp_path / "layout.ini"), QSettings.Format.IniFormat)
    yield settings
    settings.sync()


@pytest.fixture
def model_server() -> Iterator[FakeOpenAIServer]:
    """A scripted OpenAI-compatible server on loopback (queue the replies the model gives)."""
    with FakeOpenAIServer(models=list(MODELS)) as server:
        yield server


def model_settings(server: FakeOpenAIServer, model: str = "scripted", **sections: Any) -> Settings:
    """Settings whose model is ``model`` at ``server``, with a 1280x720 guest; ``sections`` add to them."""
    evaluation = {"screen_resolution": "1280x720", **sections.pop("evaluation", {})}
    return Settings.model_validate(
        {
            "model_provider": {"base_url": server.base_url, "model": model, "max_retries": 0},
            "evaluation": evaluation,
            **sections,
        }
    )


def _keyed_agent(profile: ResolvedProfile, entry: TaskEntry) -> Agent:
    return make_agent(profile, task=entry.task, api_key="test-key")


class OpenWindow(Protocol):
    """Opens the main window over the bundled tasks (see :func:`open_window`)."""

    def __call__(self, settings: Settings, *, keyed: bool = True) -> Awaitable[MainWindow]: ...


@pytest.fixture
async def open_window(qtbot: QtBot, tmp_path: Path, qsettings: QSettings) -> AsyncIterator[OpenWindow]:
    """Open the real main window over the bundled tasks with ``settings``, shown and active.

    Runs go to the test's folder; with ``keyed`` the agent gets a test key (no keyring is asked). Each
    window opened is shut down at the end of the test, as the app does once its window closes: its run
    stopped, its sandboxes and env closed.
    """
    windows: list[MainWindow] = []

    async def open(settings: Settings, *, keyed: bool = True) -> MainWindow:
        factory = (
            (lambda profile, entry: make_agent(profile, task=entry.task, api_key="test-key"))
            if keyed
            else None
        )
        services = Services(settings, tmp_path / "runs", agent_factory=factory)
        window = MainWindow(TaskLibrary.from_paths([BUNDLED_TASKS]), services, qsettings=qsettings)
        windows.append(window)  # not given to qtbot: it would close the window before the shutdown below
        window.show()
        window.activateWindow()
        qtbot.waitExposed(window)
        return window

    try:
        yield open
    finally:
        for window in windows:
            try:
                await window.shutdown()
            finally:
                window.close()
                window.deleteLater()
        current = asyncio.current_task()
        left = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
        assert not left, f"tasks left running after the windows' shutdown: {left}"
