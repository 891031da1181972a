"""File › Export runs… when the output cannot be written: a clear message in the dialog, no card."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from osw_studio.settings import Settings
from osw_studio.tasks import TaskLibrary
from osw_studio.ui.main_window import MainWindow
from osw_studio.ui.services import Services
from tests.fakes.runs import SyntheticRun, write_run

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def window(qtbot: QtBot, tmp_path: Path, qsettings: QSettings) -> AsyncIterator[MainWindow]:
    runs = tmp_path / "runs"
    write_run(runs, SyntheticRun("t1", steps=3))
    library = TaskLibrary.from_paths([ROOT / "tasks" / "os" / "write-hello-file.json"])
    win = MainWindow(library, Services(Settings(), runs), qsettings=qsettings)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    try:
        yield win
    finally:
        await win.shutdown()


async def test_an_export_that_cannot_write_its_images_says_so_and_leaves_no_card(
    window: MainWindow, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "images").write_text("a file where the images folder goes, as a full disk would refuse it")
    dialog = window.open_export()
    dialog.format.setCurrentText("sft-messages")
    dialog.images.setCurrentText("copy")
    dialog.out.setText(str(out))
    dialog.start()
    assert await dialog.wait() is None
    text = dialog.message.text()
    assert "cannot write the export" in text and "Traceback" not in text, text
    assert not (out / "README.md").exists() and not (out / "data.jsonl").exists()
