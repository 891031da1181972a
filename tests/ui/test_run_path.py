"""The app's run path is the CLI's: F5 plans its episode with the run planner, the task's folder travels with
the task into the env's reset (so ``download`` steps find their files), and each run starts on a fresh
desktop unless the settings keep it.

Every bundled task runs through F5 in one window, as a person would run them one after the other (the
``qt_many_windows`` test: ``make test`` runs it in its Qt lane, ``make test-qt-long`` runs it alone).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pytest

from osw_studio.envs.desktops import get_profile
from osw_studio.envs.local import LocalEnv
from osw_studio.settings import Settings
from osw_studio.tasks import TaskEntry, TaskLibrary
from osw_studio.tasks.library import BUNDLED_TASKS
from osw_studio.trajectory.store import RunStore
from osw_studio.ui.main_window import MainWindow
from osw_studio.ui.services import Services
from tests.ui.conftest import OpenWindow
from tests.ui.waiting import until

BUNDLED = TaskLibrary.from_paths([BUNDLED_TASKS])

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


@pytest.fixture
async def window(open_window: OpenWindow) -> MainWindow:
    return await open_window(replay_settings(), keyed=False)


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
    # the next run's desktop started while the first run ran, so F5 need not wait for one
    await until(lambda: window.services.spare is not None, 90)
    spare = window.services.spare

    store = await press_f5(window, "count-error-lines")
    second = window.services.env
    assert isinstance(second, LocalEnv) and second is not first and second is spare
    assert not first.pids() and first_pids  # every process of the first desktop is gone
    gone = await second.guest.execute('test -e "$HOME/Desktop/hello.txt"; echo $?', shell=True)
    assert gone.output.strip() == "1"  # nothing of the first task's desktop is left
    assert store.result is not None and store.result.score == 1.0
    assert window.viewer.stream is not None and window.viewer.stream.base_url == second.url


async def test_keep_desktop_chains_runs_on_one_desktop(open_window: OpenWindow) -> None:
    window = await open_window(replay_settings(keep_desktop=True), keyed=False)
    await press_f5(window, "write-hello-file")
    first = window.services.env
    await press_f5(window, "count-error-lines")
    assert window.services.env is first and window.services.spare is None  # no desktop is started ahead
    assert first is not None
    out = await first.guest.execute('cat "$HOME/Desktop/hello.txt"', shell=True)
    assert out.output == "hello\n"  # the first run's work is still there for the next


async def test_a_spare_desktop_started_for_other_settings_is_stopped_not_used(tmp_path: Path) -> None:
    settings = replay_settings()
    services = Services(settings, tmp_path / "runs")
    try:
        first = await services.fresh_env()
        services.prepare_spare()
        await until(lambda: services.spare is not None, 90)
        spare = services.spare
        assert isinstance(spare, LocalEnv) and spare.pids()
        settings.evaluation = settings.evaluation.model_copy(update={"screen_resolution": (1024, 768)})
        second = await services.fresh_env()
        assert second is not spare and second.screen_size == (1024, 768)
        assert not spare.pids() and isinstance(first, LocalEnv) and not first.pids()
    finally:
        await services.aclose()
    assert isinstance(second, LocalEnv) and not second.pids()


async def f5_each(window: MainWindow, entries: Iterable[TaskEntry]) -> dict[str, object]:
    """F5 on each entry in turn, each on a fresh desktop; each task's (status, score)."""
    scores: dict[str, object] = {}
    for entry in entries:
        result = (await press_f5(window, entry.task.id, seconds=240)).result
        scores[entry.task.id] = (result.status, result.score) if result else None
    return scores


def osworld_desktop_or_skip() -> None:
    """Skip (fail in CI, which installs them) when the OSWorld desktop's programs are missing."""
    missing = get_profile("osworld").missing()
    if missing:
        message = f"the OSWorld desktop's programs are missing ({', '.join(missing)}): make setup-osworld"
        pytest.fail(message) if os.environ.get("CI") else pytest.skip(message)


# Gnumeric's xlsx files carry no default style; openpyxl warns while the evaluator reads them, and the
# strict warning filter would turn that into a failed read.
XLSX_WARNING = "ignore:Workbook contains no default style:UserWarning"


@pytest.mark.timeout(600)
async def test_a_task_that_names_the_osworld_desktop_runs_there_through_f5(open_window: OpenWindow) -> None:
    # the settings say studio; the task says osworld: F5 starts the OSWorld desktop for it
    osworld_desktop_or_skip()
    window = await open_window(replay_settings("1920x1080"), keyed=False)
    entry = BUNDLED.get("open-saved-recipe")
    assert entry.task.desktop == "osworld" and window.services.settings.environment.desktop == "studio"
    scores = await f5_each(window, [entry])
    assert scores == {"open-saved-recipe": ("finished", 1.0)}
    env = window.services.env
    assert isinstance(env, LocalEnv) and (env.session.home / ".local" / "bin" / "google-chrome").exists()


@pytest.mark.slow
@pytest.mark.qt_many_windows
@pytest.mark.timeout(3600)
@pytest.mark.filterwarnings(XLSX_WARNING)
async def test_every_bundled_task_scores_one_through_f5(open_window: OpenWindow) -> None:
    # one window, as a person would use it: F5 on each task in turn, each on a fresh desktop (the tasks
    # that name the OSWorld desktop on that desktop)
    osworld_desktop_or_skip()
    window = await open_window(replay_settings("1920x1080"), keyed=False)
    scores = await f5_each(window, sorted(BUNDLED, key=lambda e: e.task.id))
    assert len(scores) == len(BUNDLED) >= 40
    failed = {task: got for task, got in scores.items() if got != ("finished", 1.0)}
    assert not failed, failed
