"""The Wall: a suite's envs as live tiles (frames, task, step, state), reflowing, a stall marked."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from osw_studio.settings import Settings
from osw_studio.tasks import TaskLibrary
from osw_studio.ui.main_window import MainWindow
from osw_studio.ui.services import Services
from osw_studio.ui.suite_dialog import SuiteDialog
from osw_studio.ui.wall import TILE_WIDTH
from tests.batch.suite import write_suite
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


async def test_a_four_env_suite_shows_four_live_tiles_and_marks_a_stall(
    window: MainWindow, tmp_path: Path
) -> None:
    wall = window.wall
    offset = [0.0]
    wall.clock = lambda: time.monotonic() + offset[0]
    wall.stall_after = 3600.0  # only the fake clock's jump below stalls a tile, never a loaded machine
    assert not window.docks["wall"].isVisible()

    window.suite_action.trigger()  # Run › Evaluate suite…
    (dialog,) = [d for d in window.findChildren(SuiteDialog) if d.isVisible()]
    dialog.set_suite(str(write_suite(tmp_path / "suite", 4)))
    dialog.envs.setValue(4)
    dialog.out.setText(str(tmp_path / "out"))
    dialog.run_button.click()
    assert window.suite_view.running and window.docks["wall"].isVisible()

    # hold each task as soon as its env has it, so all four are on the wall at once
    def held() -> bool:
        for tile in wall.tiles.values():
            if tile.episode is not None and not tile.episode.paused:
                tile.episode.pause()
        return len(wall.tiles) == 4 and all(
            t.episode is not None and t.episode.paused for t in wall.tiles.values()
        )

    await until(held, 120)
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
