"""UI tests run headless (Qt's offscreen platform) on a qasync loop, so async tests drive real widgets."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported anywhere in these tests

from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

ROOT = Path(__file__).resolve().parents[2]


def _qt_loop() -> qasync.QEventLoop:
    app = QApplication.instance() or QApplication([])
    return qasync.QEventLoop(app, already_running=False)


def pytest_asyncio_loop_factories(
    config: pytest.Config, item: pytest.Item
) -> Mapping[str, Callable[[], object]]:
    """Async UI tests run on a Qt event loop (qasync), as the app does."""
    return {"qt": _qt_loop}


@pytest.fixture
def qsettings(tmp_path: Path) -> Iterator[QSettings]:
    """A QSettings file of the test's own (the window layout is saved there)."""
    settings = QSettings(str(tmp_path / "layout.ini"), QSettings.Format.IniFormat)
    yield settings
    settings.sync()
