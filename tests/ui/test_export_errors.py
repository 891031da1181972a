"""File › Export runs… when the output cannot be written: a clear message in the dialog, no card."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from osw_studio.settings import Settings
from tests.fakes.runs import SyntheticRun, write_run
from tests.ui.conftest import OpenWindow

pytestmark = pytest.mark.timeout(120)


async def test_an_export_that_cannot_write_its_images_says_so_and_leaves_no_card(
    open_window: OpenWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the folder is not empty, so the dialog asks first: the person says yes
    monkeypatch.setattr(QMessageBox, "question", lambda *_args: QMessageBox.StandardButton.Yes)
    write_run(tmp_path / "runs", SyntheticRun("t1", steps=3))
    window = await open_window(Settings())
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
