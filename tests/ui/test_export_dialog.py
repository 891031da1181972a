"""File › Export runs… on a recorded model run: the samples are the requests the model was sent."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from osw_studio.settings import Settings
from osw_studio.tasks import TaskLibrary
from osw_studio.ui.main_window import MainWindow
from osw_studio.ui.services import Services
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.recorded_run import RecordedRun, record_run

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
async def recorded(tmp_path: Path) -> RecordedRun:
    with FakeOpenAIServer(models=["test-model"]) as server:
        return await record_run(server, tmp_path / "runs", "osworld")


@pytest.fixture
async def window(qtbot: QtBot, recorded: RecordedRun, qsettings: QSettings) -> AsyncIterator[MainWindow]:
    library = TaskLibrary.from_paths([ROOT / "tasks" / "os" / "write-hello-file.json"])
    win = MainWindow(library, Services(Settings(), recorded.path.parent), qsettings=qsettings)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    try:
        yield win
    finally:
        await win.shutdown()


async def test_export_dialog_writes_what_the_model_saw(
    window: MainWindow, recorded: RecordedRun, tmp_path: Path
) -> None:
    dialog = window.open_export()
    assert dialog.use_folder.isChecked() and dialog.runs_folder.text() == str(recorded.path.parent)
    dialog.format.setCurrentText("sft-messages")
    assert dialog.images.currentText() == "format default" and dialog.reprompt.currentIndex() == 0
    out = tmp_path / "sft"
    dialog.out.setText(str(out))
    dialog.start()
    summary = await dialog.wait()
    assert summary is not None and summary.samples == 5, dialog.message.text()
    samples = [json.loads(line) for line in (out / "data.jsonl").read_text().splitlines()]
    # Images are data URLs by default for this format: the very ones the model received.
    assert samples[0]["messages"][:-1] == recorded.requests[0]["messages"]
    assert samples[0]["messages"][-1] == {"role": "assistant", "content": recorded.replies[0]}
    card = (out / "README.md").read_text()
    assert "| edited | 1 |" in card and "data URLs" in card

    dialog.train_size.setText("wide")
    dialog.out.setText(str(tmp_path / "other"))
    dialog.start()
    assert "not a size: 'wide'" in dialog.message.text() and "WIDTHxHEIGHT" in dialog.message.text()

    dialog.train_size.setText("")
    dialog.reprompt.setCurrentText("uitars")
    dialog.start()
    assert await dialog.wait() is not None
    card = (tmp_path / "other" / "README.md").read_text()
    assert "--reprompt uitars" in card and "not the requests" in card
