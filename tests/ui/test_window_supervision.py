"""The window made for supervision, without a guest: the viewer takes the space from 1280x720 to a
maximised 1920x1080, zooms and pops out; steps show their screens; drags are arrows; Results count runs
with a person's help apart; File › Open tasks folder… lists another folder's tasks."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QColor, QImage
from pytestqt.qtbot import QtBot

from osw_studio.core.actions import Click, DragTo, MouseDown, MouseUp, MoveTo, Typing
from osw_studio.core.step import EpisodeResult, StepRecord
from osw_studio.core.task import Task
from osw_studio.runner.store import RunStoreWriter
from osw_studio.tasks import TaskLibrary
from osw_studio.tasks.library import BUNDLED_TASKS
from osw_studio.trajectory.layout import new_run_id
from osw_studio.ui.main_window import MIN_WINDOW, MainWindow, last_results
from osw_studio.ui.overlay import with_drag_starts
from tests.ui.test_main_window import add_run, make_window
from tests.ui.waiting import until

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def window(qtbot: QtBot, tmp_path: Path, qsettings: QSettings) -> AsyncIterator[MainWindow]:
    runs = tmp_path / "runs"
    add_run(runs, "write-hello-file", "os", 1.0)
    win = make_window(qtbot, runs, qsettings)
    try:
        yield win
    finally:
        await win.shutdown()


def guest_scale(window: MainWindow, screen: tuple[int, int] = (1920, 1080)) -> float:
    window.viewer.canvas.set_screen_size(screen)
    return window.viewer.canvas.screen_rect().width / screen[0]


async def test_the_viewer_takes_the_space_from_1280x720_to_a_maximised_1920x1080(
    qtbot: QtBot, window: MainWindow
) -> None:
    assert window.centralWidget() is window.viewer
    window.resize(*MIN_WINDOW)
    await until(lambda: window.width() == MIN_WINDOW[0] and window.height() == MIN_WINDOW[1])
    assert window.minimumSizeHint().width() <= MIN_WINDOW[0]
    assert guest_scale(window) >= 0.3  # docks and all fit, the guest still shown
    window.resize(1920, 1080)
    await until(lambda: window.width() == 1920)
    # a 1920x1080 guest at two thirds of its size or more: its text stays readable
    assert guest_scale(window) >= 0.6
    assert window.viewer.width() > 0.6 * window.width()


async def test_zoom_one_to_one_and_pop_out(qtbot: QtBot, window: MainWindow) -> None:
    viewer = window.viewer
    viewer.canvas.set_screen_size((1280, 720))
    viewer.set_zoom("1:1")
    await until(lambda: viewer.canvas.size().width() == 1280)
    assert viewer.canvas.screen_rect().width == 1280  # one guest pixel per screen pixel, scrolled
    viewer.set_zoom("Fit")
    await until(lambda: viewer.canvas.width() == viewer.scroll_area.viewport().width())

    window.pop_out_action.trigger()
    assert window.viewer_popped_out and viewer.window() is not window and viewer.isVisible()
    assert window.centralWidget() is not viewer
    window.pop_out_action.trigger()  # back
    await until(lambda: not window.viewer_popped_out)
    assert window.centralWidget() is viewer and viewer.window() is window


async def test_a_step_of_the_current_run_shows_its_screen_until_back_to_live(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    shot = tmp_path / "step.png"
    picture = QImage(320, 180, QImage.Format.Format_RGB32)
    picture.fill(QColor(200, 30, 30))
    assert picture.save(str(shot))
    record = StepRecord(index=1, executed=[DragTo(x=300, y=100, start_x=10, start_y=10)])
    window.timeline.add_step(record, path=shot)
    window.viewer.set_replaying(False)
    window.timeline.setCurrentRow(0)
    await until(lambda: window.viewer.canvas._image is not None)
    image = window.viewer.canvas._image
    assert image is not None and image.pixelColor(5, 5).red() > 150  # the step's own screen
    assert window.viewer.canvas.overlay_actions == record.executed
    assert window.inspector.title.text().startswith("Step 1")
    assert window.viewer.replaying and window.viewer.live_button.isVisible()
    window.viewer.live_button.click()
    assert not window.viewer.replaying


def test_drags_are_drawn_as_one_arrow() -> None:
    assert with_drag_starts([MoveTo(x=5, y=6), DragTo(x=50, y=60)]) == [
        DragTo(x=50, y=60, start_x=5, start_y=6)
    ]
    assert with_drag_starts([MouseDown(x=5, y=6), MoveTo(x=9, y=9), MouseUp(x=50, y=60)]) == [
        DragTo(x=50, y=60, start_x=5, start_y=6)
    ]
    assert with_drag_starts([Click(x=1, y=1), Typing(text="a")]) == [Click(x=1, y=1), Typing(text="a")]


def add_helped_run(runs: Path, task_id: str, domain: str, started: float) -> None:
    task = Task.model_validate(
        {"id": task_id, "instruction": "Do it.", "config": [], "evaluator": {"func": "infeasible"}}
    )
    with RunStoreWriter.create(
        runs,
        task,
        domain=domain,
        model="model-a",  # the model of add_run's runs: Results counts each model apart
        screen_size=(1280, 720),
        run_id=new_run_id(task_id, now=started),
    ) as w:
        w.write_step(StepRecord(index=1, source="human", verdict="human", executed=[Click(x=1, y=2)]))
        w.finish(
            EpisodeResult(success=True, score=1.0, steps=1, task_id=task_id, domain=domain, assisted=True)
        )


async def test_results_count_runs_with_help_apart_and_a_stopped_run_hides_no_pass(
    qtbot: QtBot, window: MainWindow
) -> None:
    runs = window.services.runs_dir
    add_helped_run(runs, "fix-greeting-typo", "mousepad", 1.8e9)
    later = add_run(runs, "write-hello-file", "os", 0.0, started=1.9e9)
    result_file = runs / later / "result.json"
    result_file.write_text(result_file.read_text().replace('"finished"', '"stopped"'))
    window.results.set_folder(runs)
    rows = {
        window.results.table.item(r, 0).text(): [
            window.results.table.item(r, c).text() for c in range(window.results.table.columnCount())
        ]
        for r in range(window.results.table.rowCount())
    }
    assert rows["mousepad"][1:3] == ["1", "0"] and rows["mousepad"][-1] == "1"  # solved with help
    assert rows["os"][1:3] == ["1", "1"]  # the earlier pass, not the later stopped run
    assert rows["total"][2] == "1" and rows["total"][-1] == "1"
    assert "1 more with help" in window.results.where.text()
    assert last_results(runs) == {"write-hello-file": "passed", "fix-greeting-typo": "passed with help"}


async def test_open_tasks_folder_lists_its_tasks(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    folder = tmp_path / "more-tasks"
    shutil.copytree(ROOT / "tasks" / "gnumeric", folder / "gnumeric")
    shutil.copytree(ROOT / "tasks" / "assets", folder / "assets")
    task = json.loads((BUNDLED_TASKS / "os" / "write-hello-file.json").read_text(encoding="utf-8"))
    (folder / "os").mkdir()
    (folder / "os" / "my-own-task.json").write_text(
        json.dumps({**task, "id": "my-own-task"}), encoding="utf-8"
    )
    window.tasks.search.setText("hello")  # a search left on from before
    assert window.open_tasks_folder(folder)
    assert str(folder) in window.status.currentMessage()
    assert window.tasks.search.text() == ""  # the filters are reset, so the new tasks show
    # beside the bundled tasks, not instead of them
    assert window.tasks.select_task("my-own-task") and window.tasks.select_task("write-hello-file")
    assert len(window.library) == len(TaskLibrary.from_paths([BUNDLED_TASKS, folder]))

    empty = tmp_path / "empty"
    empty.mkdir()
    reported: list[object] = []
    window.reporter.report = reported.append  # type: ignore[method-assign]
    assert not window.open_tasks_folder(empty)
    assert reported and "no task" in str(reported[0])
    assert window.tasks.select_task("add-average-score")  # the list keeps what it had
    assert window.opened_folders == [folder]

    # remembered at the next launch, until File › Close opened tasks folders
    again = make_window(qtbot, tmp_path / "runs", window.qsettings)
    try:
        assert again.tasks.select_task("my-own-task") and again.tasks.select_task("write-hello-file")
        again.close_tasks_action.trigger()
        assert not again.tasks.select_task("my-own-task") and again.tasks.select_task("write-hello-file")
    finally:
        await again.shutdown()
    third = make_window(qtbot, tmp_path / "runs", window.qsettings)
    try:
        assert not third.tasks.select_task("my-own-task")
    finally:
        await third.shutdown()


async def test_without_a_keyring_a_key_is_used_for_this_session_only(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, no_keyring: None
) -> None:
    from osw_studio.settings import load_settings

    path = tmp_path / "settings.json"
    path.write_text("{}", encoding="utf-8")
    window.services.settings = load_settings(path)
    dialog = window.open_settings()
    dialog.key.setText("sk-session-only")
    dialog.key.textEdited.emit("sk-session-only")
    dialog.save()
    assert dialog.error.text() == "" and not dialog.isVisible()
    assert "session only" in dialog.key_source.text()
    assert window.services.session_key == "sk-session-only"
    assert "session only" in window.status.currentMessage()
    assert "sk-session-only" not in path.read_text(encoding="utf-8")  # never written down
