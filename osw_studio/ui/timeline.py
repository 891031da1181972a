"""The timeline: a thumbnail per step, marked agent / approved / edited / human / skipped / error.

Click a step or move with the arrow keys to inspect it. Thumbnails are decoded and scaled off the event
loop; the list shows a placeholder until a thumbnail is ready.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QImage, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QListView, QListWidget, QListWidgetItem, QWidget

from osw_studio.core.step import StepRecord

log = logging.getLogger(__name__)

THUMB = QSize(213, 120)
"""A thumbnail's size: a 16:9 screen at 120 px high, enough to recognise the screen it shows."""

MARKS: dict[str, tuple[str, QColor]] = {
    "agent": ("agent", QColor(90, 150, 255)),
    "approved": ("approved", QColor(80, 200, 120)),
    "edited": ("edited", QColor(255, 170, 0)),
    "human": ("human", QColor(200, 110, 255)),
    "skipped": ("skipped", QColor(140, 140, 150)),
    "error": ("error", QColor(255, 80, 80)),
}


def mark_of(record: StepRecord) -> str:
    """Which mark a step gets on the timeline.

    >>> mark_of(StepRecord(index=1))
    'agent'
    >>> mark_of(StepRecord(index=2, verdict="edited")), mark_of(StepRecord(index=3, error="boom"))
    ('edited', 'error')
    >>> mark_of(StepRecord(index=4, source="human", verdict="human"))
    'human'
    """
    if record.error or record.verdict == "error":
        return "error"
    if record.source == "human" or record.verdict == "human":
        return "human"
    if record.verdict in ("approved", "edited", "skipped"):
        return record.verdict
    return "agent"


def thumbnail(data: bytes | None, path: Path | None) -> QImage:
    """Decode a screenshot (bytes, else a file) and scale it to a thumbnail (thread-safe)."""
    image = QImage.fromData(data) if data else QImage(str(path)) if path else QImage()
    if image.isNull():
        return image
    return image.scaled(THUMB, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation)


def _decorate(image: QImage | None, mark: str) -> QPixmap:
    color = MARKS[mark][1]
    pixmap = QPixmap(THUMB)
    pixmap.fill(QColor(30, 30, 36))
    painter = QPainter(pixmap)
    if image is not None and not image.isNull():
        x = (THUMB.width() - image.width()) // 2
        y = (THUMB.height() - image.height()) // 2
        painter.drawImage(x, y, image)
    pen = QPen(color)
    pen.setWidth(4)
    painter.setPen(pen)
    painter.drawRect(2, 2, THUMB.width() - 4, THUMB.height() - 4)
    painter.end()
    return pixmap


class Timeline(QListWidget):
    """One row of step thumbnails.

    Signals:
        step_selected(object): The :class:`StepRecord` picked by click or arrow key.
    """

    step_selected = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("timeline")
        self.setViewMode(QListView.ViewMode.IconMode)
        self.setFlow(QListView.Flow.LeftToRight)
        self.setWrapping(False)
        self.setMovement(QListView.Movement.Static)
        self.setIconSize(THUMB)
        self.setSpacing(4)
        self.setUniformItemSizes(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        # a strip exactly as tall as a row of thumbnails, so the viewer keeps the rest of the window
        self.setFixedHeight(self.strip_height())
        self._records: list[StepRecord] = []
        self._paths: list[Path | None] = []
        self.currentRowChanged.connect(self._on_row)
        self._pending: set[asyncio.Future[QImage]] = set()
        self._shown = 0  # counts clear_steps calls: which steps a thumbnail being decoded belongs to

    def strip_height(self) -> int:
        """The height of one row of thumbnails with their labels and the scroll bar."""
        label = self.fontMetrics().height()
        scrollbar = self.horizontalScrollBar().sizeHint().height()
        return THUMB.height() + label + 4 * self.spacing() + scrollbar + 2 * self.frameWidth() + 4

    @property
    def records(self) -> list[StepRecord]:
        """The steps shown, in order."""
        return list(self._records)

    def clear_steps(self) -> None:
        """Remove every step."""
        self._records.clear()
        self._paths.clear()
        self._shown += 1  # thumbnails still decoding belong to the steps removed here
        self.clear()

    def path_of(self, record: StepRecord) -> Path | None:
        """The screenshot file of a step shown (None when it came as bytes or has none)."""
        for shown, path in zip(self._records, self._paths, strict=True):
            if shown is record:
                return path
        return None

    def marks(self) -> list[str]:
        """The mark of each step shown (what a person sees on the thumbnails)."""
        return [mark_of(r) for r in self._records]

    def add_step(self, record: StepRecord, screenshot: bytes | None = None, path: Path | None = None) -> None:
        """Append a step; its thumbnail comes from ``screenshot`` bytes or the file at ``path``."""
        mark = mark_of(record)
        item = QListWidgetItem(QIcon(_decorate(None, mark)), f"{record.index} · {MARKS[mark][0]}")
        item.setToolTip(record.error or record.thought or "")
        item.setData(Qt.ItemDataRole.UserRole, len(self._records))
        self._records.append(record)
        self._paths.append(path)
        follow = self.currentRow() in (-1, self.count() - 1)
        self.addItem(item)
        if follow:
            self.scrollToItem(item)
        if screenshot or path:
            self._load_thumbnail(self.count() - 1, mark, screenshot, path)

    def _load_thumbnail(self, row: int, mark: str, data: bytes | None, path: Path | None) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a synchronous caller): decode here
            self._set_thumbnail(self._shown, row, thumbnail(data, path), mark)
            return
        future = loop.run_in_executor(None, thumbnail, data, path)
        self._pending.add(future)
        shown = self._shown

        def done(f: asyncio.Future[QImage]) -> None:
            self._pending.discard(f)
            if f.cancelled() or f.exception() is not None:
                log.debug("thumbnail failed", exc_info=f.exception() if not f.cancelled() else None)
                return
            self._set_thumbnail(shown, row, f.result(), mark)

        future.add_done_callback(done)

    def _set_thumbnail(self, shown: int, row: int, image: QImage | None, mark: str) -> None:
        # The item is looked up, not kept: clear_steps deletes the items, and a QListWidgetItem is no
        # QObject, so a kept reference would not know and setIcon would write to freed memory.
        item = self.item(row) if shown == self._shown else None
        if item is not None:
            item.setIcon(QIcon(_decorate(image, mark)))

    async def thumbnails_ready(self) -> None:
        """Wait until every thumbnail requested so far is shown."""
        while self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)
            await asyncio.sleep(0)

    def _on_row(self, row: int) -> None:
        if 0 <= row < len(self._records):
            self.step_selected.emit(self._records[row])
