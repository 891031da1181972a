"""The Wall: a suite's envs as live tiles (frames, task, step, state), reflowing, a stall marked."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from pytestqt.qtbot import QtBot

from osw_studio.core.actions import Wait
from osw_studio.settings import Settings
from osw_studio.tasks import TaskLibrary
from osw_studio.ui.action_editor import actions_to_json
from osw_studio.ui.main_window import MainWindow
from osw_studio.ui.services import Services
from osw_studio.ui.wall import TILE_WIDTH, Wall
from tests.batch.suite import write_suite
from tests.ui.test_suite_run import open_dialog
from tests.ui.waiting import until

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def window(qtbot: QtBot, tmp_path: Path, qsettings: QSettings) -> AsyncIterator[MainWindow]:
    library = TaskLibrary.from_paths([ROOT / "tasks" / "os" / "write-hello-file.json"])
    settings = Settings.model_validate({"evaluation": {"screen_resolution": "1280x720", "max_steps": 6}})
    win = MainWindow(library, Services(settings, tmp_path / "runs"), qsettings=qsettings)
    qtbot.addWidget(win)
    win.resize(1700, 1000)
    win.show()
    qtbot.waitExposed(win)
    try:
        yield win
    finally:
        await win.shutdown()


def held(wall: Wall) -> bool:
    """Pause each task as soon as its env has it; whether all four are held."""
    for tile in wall.tiles.values():
        if tile.episode is not None and not tile.episode.paused:
            tile.episode.pause()
    return len(wall.tiles) == 4 and all(
        t.episode is not None and t.episode.paused for t in wall.tiles.values()
    )


async def test_a_four_env_suite_shows_four_live_tiles_and_marks_a_stall(
    window: MainWindow, tmp_path: Path
) -> None:
    wall = window.wall
    offset = [0.0]
    wall.clock = lambda: time.monotonic() + offset[0]
    wall.stall_after = 3600.0  # only the fake clock's jump below stalls a tile, never a loaded machine
    assert not window.docks["wall"].isVisible()

    open_dialog(window, write_suite(tmp_path / "suite", 4), tmp_path / "out", envs=4).run_button.click()
    assert window.suite_view.running and window.docks["wall"].isVisible()

    # hold each task as soon as its env has it, so all four are on the wall at once
    await until(lambda: held(wall), 120)
    tiles = list(wall.tiles.values())
    await until(lambda: all(t.frames >= 2 for t in tiles), 60)  # each guest streams its desktop
    assert sorted(t.name for t in tiles) == ["env-1", "env-2", "env-3", "env-4"]
    assert len({t.title for t in tiles}) == 4 and all(t.title.startswith(("os/", "terminal/")) for t in tiles)
    for tile in tiles:
        assert tile.caption.startswith(f"step {tile.step} of 6 · ") and "STALLED" not in tile.caption
        assert tile.image.width() <= TILE_WIDTH  # small frames, asked of the guest
        assert tile.stream is not None and tile.stream.running
        assert tile.isVisible()

    # the grid follows the width: three tiles a row here, one when the dock is narrow
    assert wall.columns == (wall.viewport().width() - 6) // (TILE_WIDTH + wall.grid.spacing()) >= 2
    assert wall.grid.getItemPosition(wall.grid.indexOf(tiles[1]))[:2] == (0, 1)
    window.docks["wall"].setFloating(True)
    window.docks["wall"].resize(TILE_WIDTH + 60, 700)
    await until(lambda: wall.columns == 1)
    assert wall.grid.getItemPosition(wall.grid.indexOf(tiles[1]))[:2] == (1, 0)
    window.docks["wall"].setFloating(False)

    # one guest stops sending frames: after stall_after without a frame or a step, its tile is marked
    stuck = tiles[0]
    assert stuck.stream is not None
    await stuck.stream.stop()
    offset[0] += wall.stall_after + 5
    wall.poll()
    assert stuck.stalled and stuck.caption.endswith("STALLED")
    for tile in tiles[1:]:  # the others go on: their steps clear the mark
        assert tile.episode is not None
        tile.episode.resume()
    await until(lambda: all(t.step >= 1 and not t.stalled for t in tiles[1:]), 120)
    wall.poll()
    assert stuck.stalled and stuck.step == 0
    assert stuck.episode is not None
    stuck.episode.resume()
    await until(lambda: not window.suite_view.running, 180)
    assert all(t.state == "finished" for t in tiles) and not stuck.stalled
    await until(lambda: all(t.stream is None for t in tiles), 10)  # the suite ended: every stream stops


async def test_a_focused_task_is_approved_and_edited_while_the_others_finish(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    wall = window.wall
    open_dialog(window, write_suite(tmp_path / "suite", 4), tmp_path / "out", envs=4).run_button.click()

    await until(lambda: held(wall), 120)
    tiles = list(wall.tiles.values())
    focus = tiles[0]
    assert focus.episode is not None
    qtbot.mouseClick(focus, Qt.MouseButton.LeftButton)  # focus: the task in the main viewer, live
    await until(lambda: window.run_view.focused is not None)
    assert window.run_view.controller is not None and window.run_view.controller.episode is focus.episode
    assert focus.focused and wall.focus_bar.isVisible() and focus.title in wall.focus_label.text()
    await until(lambda: window.viewer.stream is not None)
    assert window.pause_action.isEnabled() and window.pause_action.isChecked()

    window.mode.setCurrentText("approve")  # this task alone waits for a person
    assert focus.episode.mode == "approve"
    assert all(t.episode is not None and t.episode.mode == "auto" for t in tiles[1:])
    window.pause_action.trigger()  # resume the focused task
    for tile in tiles[1:]:
        assert tile.episode is not None
        tile.episode.resume()
    await until(lambda: focus.episode is not None and focus.episode.proposal is not None, 60)
    await until(lambda: focus.waiting and "WAITING FOR YOU" in focus.caption)

    # an edit of its first proposal: a short wait before the model's own actions
    proposal = focus.episode.proposal
    assert proposal is not None
    edited = [Wait(seconds=0.1), *proposal.actions]
    window.inspector.edit_button.click()
    editor = window.inspector.editor
    editor.setCurrentIndex(1)
    editor.json.setPlainText(actions_to_json(edited))
    assert window.inspector.approve()
    await until(lambda: len(focus.episode.steps) >= 1 if focus.episode else False, 30)
    first = focus.episode.steps[0]
    assert first.verdict == "edited" and first.executed == edited and first.proposed == proposal.actions

    # the other three finish in auto meanwhile; the focused one keeps waiting for its next approval
    await until(lambda: all(t.state == "finished" for t in tiles[1:]), 120)
    assert all(s.verdict == "auto" for t in tiles[1:] for s in (t.episode.steps if t.episode else []))
    assert window.suite_view.running and focus.episode.state.value not in ("finished", "stopped")

    # Stop acts on the focused task alone; Close focus returns to the wall
    window.stop_action.trigger()
    await until(lambda: focus.state == "stopped", 30)
    await until(lambda: not window.suite_view.running, 60)
    assert window.suite_view.run is not None and not window.suite_view.run.stopped
    wall.close_focus_button.click()
    await until(lambda: window.run_view.controller is None)
    assert not wall.focus_bar.isVisible() and not focus.focused


async def test_a_suite_in_approve_mode_marks_the_tiles_waiting_for_a_person(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    wall = window.wall
    dialog = open_dialog(window, write_suite(tmp_path / "suite", 2), tmp_path / "out", envs=2)
    dialog.approve.setChecked(True)
    dialog.run_button.click()
    await until(lambda: len(wall.tiles) == 2 and all(t.waiting for t in wall.tiles.values()), 120)
    tiles = list(wall.tiles.values())
    assert all("WAITING FOR YOU" in t.caption and t.step == 0 for t in tiles)
    assert all(t.episode is not None and t.episode.mode == "approve" for t in tiles)

    qtbot.mouseClick(tiles[0], Qt.MouseButton.LeftButton)  # focus one and approve its step
    await until(lambda: window.run_view.focused is not None and window.approve_action.isEnabled())
    window.approve_action.trigger()
    await until(lambda: tiles[0].step == 1, 30)
    assert tiles[0].episode is not None and tiles[0].episode.steps[0].verdict == "approved"
    assert tiles[1].waiting and tiles[1].step == 0  # the other still waits for its person
    window.suite_view.stop()
    await until(lambda: not window.suite_view.running, 60)
