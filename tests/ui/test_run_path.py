"""The app's run path is the CLI's: F5 plans its episode with the run planner, the task's folder travels with
the task into the env's reset (so ``download`` steps find their files), and each run starts on a fresh
desktop unless the settings keep it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from osw_studio.envs.local import LocalEnv
from osw_studio.settings import Settings
from osw_studio.tasks import TaskLibrary
from osw_studio.trajectory.store import RunStore
from osw_studio.ui.main_window import MainWindow
from osw_studio.ui.services import Services
from tests.ui.waiting import until

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = TaskLibrary.from_paths([ROOT / "tasks"])

pytestmark = pytest.mark.xvfb


def replay_settings(screen: str = "1280x720", **environment: object) -> Settings:
    """Settings whose active profile replays each task's reference solution (no model, no key)."""
    return Settings.model_validate(
        {
            "evaluation": {"screen_resolution": screen, "max_steps": 10},
            "profiles": {"solution": {"agent": "replay"}},
            "active_profile": "solution",
            "environment": environment,
        }
    )


async def open_window(qtbot: QtBot, tmp_path: Path, qsettings: QSettings, settings: Settings) -> MainWindow:
    services = Services(settings, tmp_path / "runs")
    window = MainWindow(BUNDLED, services, qsettings=qsettings)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


@pytest.fixture
async def window(qtbot: QtBot, tmp_path: Path, qsettings: QSettings) -> AsyncIterator[MainWindow]:
    win = await open_window(qtbot, tmp_path, qsettings, replay_settings())
    try:
        yield win
    finally:
        await win.shutdown()


async def press_f5(window: MainWindow, task_id: str, seconds: float = 120) -> RunStore:
    """Select ``task_id`` in the task list, press F5 and wait for the run to end; its run store."""
    assert window.tasks.select_task(task_id)
    await until(lambda: window.run_action.isEnabled(), 30)
    window.run_action.trigger()
    await until(lambda: window.run_view.controller is not None and window.run_view.controller.running, 60)
    assert window.run_view.controller is not None
    result = await window.run_view.controller.wait()
    await until(lambda: window.run_action.isEnabled(), 10)
    assert result is not None
    run_dir = window.run_view.controller.episode.run_dir
    assert run_dir is not None
    return RunStore(run_dir)


async def test_f5_on_a_task_with_a_download_step_scores_one(window: MainWindow) -> None:
    entry = BUNDLED.get("count-error-lines")
    assert any(step.type == "download" for step in entry.task.config)
    store = await press_f5(window, "count-error-lines")
    result = store.result
    assert result is not None and result.score == 1.0, result
    assert "score 1.00" in window.status.currentMessage()
    item = window.tasks.tree.currentItem()
    assert item is not None and item.text(2) == "passed"  # the task list shows the result
    # the inspector shows the evaluator's verdict, metric by metric
    assert window.inspector.title.text() == "Run finished · score 1.00"
    assert "1. " in window.inspector.output.toPlainText()
    assert store.meta.agent == "replay" and store.meta.task_id == "count-error-lines"


async def test_two_runs_in_a_row_start_from_fresh_desktops(window: MainWindow) -> None:
    await press_f5(window, "write-hello-file")
    first = window.services.env
    assert isinstance(first, LocalEnv)
    out = await first.guest.execute('cat "$HOME/Desktop/hello.txt"', shell=True)
    assert out.output == "hello\n"  # the first run left its file (and its terminal) behind
    first_pids = first.pids()

    store = await press_f5(window, "count-error-lines")
    second = window.services.env
    assert isinstance(second, LocalEnv) and second is not first
    assert not first.pids() and first_pids  # every process of the first desktop is gone
    gone = await second.guest.execute('test -e "$HOME/Desktop/hello.txt"; echo $?', shell=True)
    assert gone.output.strip() == "1"  # nothing of the first task's desktop is left
    assert store.result is not None and store.result.score == 1.0
    assert window.viewer.stream is not None and window.viewer.stream.base_url == second.url


async def test_keep_desktop_chains_runs_on_one_desktop(
    qtbot: QtBot, tmp_path: Path, qsettings: QSettings
) -> None:
    window = await open_window(qtbot, tmp_path, qsettings, replay_settings(keep_desktop=True))
    try:
        await press_f5(window, "write-hello-file")
        first = window.services.env
        await press_f5(window, "count-error-lines")
        assert window.services.env is first
        assert first is not None
        out = await first.guest.execute('cat "$HOME/Desktop/hello.txt"', shell=True)
        assert out.output == "hello\n"  # the first run's work is still there for the next
    finally:
        await window.shutdown()


@pytest.mark.slow
@pytest.mark.qt_many_windows
@pytest.mark.timeout(3600)
# Gnumeric's xlsx files carry no default style; openpyxl warns while the evaluator reads them, and the
# strict warning filter would turn that into a failed read.
@pytest.mark.filterwarnings("ignore:Workbook contains no default style:UserWarning")
async def test_every_bundled_task_scores_one_through_f5(
    qtbot: QtBot, tmp_path: Path, qsettings: QSettings
) -> None:
    # one window, as a person would use it: F5 on each task in turn, each on a fresh desktop, on the
    # screen the bundled solutions were recorded on (as `osw-studio tasks check` uses)
    window = await open_window(qtbot, tmp_path, qsettings, replay_settings("1920x1080"))
    scores: dict[str, object] = {}
    try:
        for entry in sorted(BUNDLED, key=lambda e: e.task.id):
            store = await press_f5(window, entry.task.id, seconds=240)
            result = store.result
            scores[entry.task.id] = (result.status, result.score) if result else None
    finally:
        await window.shutdown()
    assert len(scores) == len(BUNDLED) >= 40
    failed = {task: got for task, got in scores.items() if got != ("finished", 1.0)}
    assert not failed, failed
