"""The wall: every env of a running suite as a live tile, so a person can watch them all at once.

:class:`Wall` follows a :class:`~osw_studio.ui.suite_run.SuiteRun`: it looks at the batch's workers a few
times a second and gives each env a :class:`WallTile`. A tile shows its guest's stream at a reduced rate
and size (:data:`TILE_FPS` frames a second, :data:`TILE_WIDTH` pixels wide, asked of the guest so the
app decodes small JPEGs), and over it the task, step n of max, the last action, the episode's state and
its cost so far (the sum of its step records' ``cost``). The episode's signals reach a tile through a
:class:`~osw_studio.ui.run_controller.RunController` relay (``_on_<signal>`` methods, the one list), so
a broken tile never stops a run. A tile with no new frame and no step for :attr:`Wall.stall_after`
seconds is marked stalled (a paused task too: nothing moves); one whose step waits for approval is
marked waiting instead. The grid's column count
follows the wall's width. Each tile's stream stops when the tile goes or the suite ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPaintEvent, QPen, QResizeEvent
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from osw_studio.core.actions import Action
from osw_studio.core.step import StepRecord
from osw_studio.runner.episode import EPISODE_SIGNALS, Episode
from osw_studio.ui.frames import FpsMeter, FrameStream
from osw_studio.ui.overlay import paint_actions
from osw_studio.ui.run_controller import RunController
from osw_studio.ui.status import money

if TYPE_CHECKING:
    from osw_studio.runner.episode import Proposal
    from osw_studio.ui.suite_run import SuiteRun

TILE_WIDTH = 480
"""Width (pixels) of the frames a tile asks its guest for, and the tile's own width."""
TILE_FPS = 3
"""Frames a second a tile asks its guest for."""
TILE_QUALITY = 60
"""JPEG quality a tile asks its guest for."""
STALL_AFTER = 20.0
"""Seconds without a frame or a step before a tile is marked stalled."""
POLL_MS = 250
"""How often the wall looks for new episodes and stalls."""
CAPTION_HEIGHT = 40

Clock = Callable[[], float]

_PENDING: set[asyncio.Future[None]] = set()
"""Streams being closed in the background (kept referenced until they are)."""


def _background(work: Coroutine[Any, Any, None]) -> None:
    future = asyncio.ensure_future(work)
    _PENDING.add(future)
    future.add_done_callback(_PENDING.discard)


class WallTile(QWidget):
    """One env's live screen with its task, step, last action, state and cost.

    Signals:
        clicked(): The person clicked the tile.

    Args:
        name: The env's worker name (``env-1``).
        clock: The monotonic clock (tests pass a fake one).
    """

    clicked = Signal()

    def __init__(self, name: str, clock: Clock = time.monotonic, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.setObjectName(f"wallTile_{name}")
        self._clock = clock
        self.episode: Episode | None = None
        self.relay: RunController | None = None
        self.stream: FrameStream | None = None
        self.image = QImage()
        self.frames = 0
        """Frames shown since the tile was made."""
        self.fps = FpsMeter(window=3.0)
        self.last_actions: list[Action] = []
        self.step = 0
        self.state = "waiting for a task"
        self.cost: float | None = None
        self.waiting = False
        """Whether the episode's step waits for a person's approval."""
        self.stalled = False
        self.focused = False
        """Whether the task is in focus in the main viewer."""
        self.last_activity = clock()
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setCursor(Qt.CursorShape.PointingHandCursor)

    def sizeHint(self) -> QSize:  # noqa: D102 (Qt override)
        return QSize(TILE_WIDTH, TILE_WIDTH * 9 // 16 + CAPTION_HEIGHT)

    # --- following an episode -----------------------------------------------------------------------

    def attach(self, episode: Episode) -> None:
        """Show ``episode`` (the env's next task); its guest's stream starts if it is not running."""
        self._detach_relay()
        self.episode = episode
        self.relay = RunController(episode, self)
        self.relay.listen_by_name(self, EPISODE_SIGNALS)
        self.step = len(episode.steps)
        self.last_actions = []
        self.cost = None
        self.waiting = False
        self.state = episode.state.value
        self._touch()
        guest = getattr(episode.env, "guest", None)
        url = getattr(guest, "base_url", None)
        if url and (self.stream is None or self.stream.base_url != str(url).rstrip("/")):
            old, self.stream = self.stream, None
            if old is not None:
                _background(old.stop())
            self.stream = FrameStream(
                str(url),
                getattr(guest, "token", None),
                fit=lambda: QSize(TILE_WIDTH, TILE_WIDTH * 9 // 16),
                fps=TILE_FPS,
                quality=TILE_QUALITY,
                max_width=TILE_WIDTH,
                parent=self,
            )
            self.stream.frame_ready.connect(self._on_frame)
            self.stream.start()
        self.update()

    def _detach_relay(self) -> None:
        if self.relay is not None:
            self.relay.disconnect_episode()
            self.relay.deleteLater()
            self.relay = None

    async def close_stream(self) -> None:
        """Stop following: the relay ends and the stream closes."""
        self._detach_relay()
        stream, self.stream = self.stream, None
        if stream is not None:
            await stream.stop()

    @property
    def title(self) -> str:
        """The task the tile shows (``domain/id``), or the env's name before its first task."""
        e = self.episode
        if e is None:
            return self.name
        return f"{e.domain}/{e.task.id}" if e.domain else e.task.id

    @property
    def caption(self) -> str:
        """The tile's second line: step n of max, state, cost and the marks."""
        e = self.episode
        parts = [f"step {self.step} of {e.max_steps}" if e is not None else self.name, self.state]
        if self.cost is not None:
            parts.append(money(self.cost))
        if self.waiting:
            parts.append("WAITING FOR YOU")
        if self.stalled:
            parts.append("STALLED")
        return " · ".join(parts)

    def check_stall(self, stall_after: float) -> None:
        """Mark the tile stalled when nothing moved for ``stall_after`` seconds while its task runs."""
        running = self.episode is not None and not self.episode.state.is_final
        stalled = running and not self.waiting and self._clock() - self.last_activity > stall_after
        if stalled != self.stalled:
            self.stalled = stalled
            self.update()

    def _touch(self) -> None:
        self.last_activity = self._clock()
        if self.stalled:
            self.stalled = False
            self.update()

    # --- the episode's signals (bound by name) --------------------------------------------------------

    def _on_frame(self, image: QImage) -> None:
        self.image = image
        self.frames += 1
        self.fps.tick()
        self._touch()
        self.update()

    def _on_state_changed(self, new: str, _old: str) -> None:
        self.state = new
        if new != "gating":
            self.waiting = False
        self.update()  # a state change is no sign of life: a stuck guest still changes state

    def _on_step_proposed(self, proposal: Proposal) -> None:
        if self.episode is not None and self.episode.mode == "approve":
            self.waiting = True
        self.last_actions = list(getattr(proposal, "actions", []) or [])
        self.update()

    def _on_step_finished(self, record: StepRecord) -> None:
        self.step = record.index
        self.waiting = False
        self.last_actions = list(record.executed or record.proposed)
        if record.cost is not None:
            self.cost = (self.cost or 0.0) + record.cost
        self._touch()
        self.update()

    def _on_paused_changed(self, paused: bool) -> None:
        self.state = "paused" if paused else (self.episode.state.value if self.episode else self.state)
        self.update()

    # --- painting -----------------------------------------------------------------------------------

    def mousePressEvent(self, event: object) -> None:  # noqa: D102 (Qt override)
        self.clicked.emit()

    def screen_rect(self) -> QRectF:
        """Where the screen is painted (its aspect kept, above the caption)."""
        area = QRectF(0, CAPTION_HEIGHT, self.width(), self.height() - CAPTION_HEIGHT)
        w, h = self._screen_size()
        scale = min(area.width() / w, area.height() / h)
        return QRectF(
            area.x() + (area.width() - w * scale) / 2,
            area.y() + (area.height() - h * scale) / 2,
            w * scale,
            h * scale,
        )

    def _screen_size(self) -> tuple[int, int]:
        env = self.episode.env if self.episode is not None else None
        with contextlib.suppress(Exception):
            if env is not None:
                w, h = env.screen_size
                if w > 0 and h > 0:
                    return w, h
        if not self.image.isNull():
            return self.image.width(), self.image.height()
        return 16, 9

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: D102 (Qt override)
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor(24, 24, 30))
        target = self.screen_rect()
        if not self.image.isNull():
            painter.drawImage(target, self.image)
        if self.last_actions:
            w, h = self._screen_size()
            sx, sy = target.width() / w, target.height() / h

            def to_widget(x: float, y: float) -> tuple[float, float]:
                return target.x() + x * sx, target.y() + y * sy

            paint_actions(painter, self.last_actions, to_widget, target)
        painter.setPen(QColor(235, 235, 240))
        painter.drawText(QRectF(6, 2, self.width() - 12, 18), Qt.AlignmentFlag.AlignLeft, self.title)
        if self.focused:
            painter.setPen(QPen(QColor(80, 160, 255), 3))
            painter.drawRect(self.rect().adjusted(1, 1, -1, -1))
        marked = self.stalled or self.waiting
        painter.setPen(QColor(255, 180, 60) if marked else QColor(170, 170, 180))
        painter.drawText(QRectF(6, 20, self.width() - 12, 18), Qt.AlignmentFlag.AlignLeft, self.caption)
        if marked:
            painter.setPen(QPen(QColor(255, 60, 60) if self.stalled else QColor(255, 180, 60), 4))
            painter.drawRect(self.rect().adjusted(2, 2, -2, -2))
        painter.end()


class Wall(QWidget):
    """Every env of the running suite as a tile, in a grid whose columns follow the width.

    Clicking a tile asks for its task in focus (``tile_clicked``); while one is, the bar above the grid
    names it and its Close focus button (``close_focus``) returns to the wall.

    Signals:
        tile_clicked(WallTile): A tile was clicked (its episode can be opened in the viewer).
        close_focus(): The person closed the focus.

    Args:
        clock: The monotonic clock (tests pass a fake one).
    """

    tile_clicked = Signal(object)
    close_focus = Signal()

    def __init__(self, clock: Clock = time.monotonic, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("wall")
        self.clock = clock
        """The monotonic clock tiles measure stalls by (tests advance a fake one)."""
        self.stall_after = STALL_AFTER
        """Seconds without a frame or a step before a tile is marked stalled."""
        self.run: SuiteRun | None = None
        self.tiles: dict[str, WallTile] = {}
        self.focus_label = QLabel()
        self.focus_label.setObjectName("wallFocus")
        self.close_focus_button = QPushButton("Close focus")
        self.close_focus_button.setObjectName("closeFocus")
        self.close_focus_button.clicked.connect(self.close_focus)
        self.focus_bar = QWidget()
        bar = QHBoxLayout(self.focus_bar)
        bar.setContentsMargins(6, 2, 6, 2)
        bar.addWidget(self.focus_label, 1)
        bar.addWidget(self.close_focus_button)
        self.focus_bar.hide()
        self.area = QScrollArea()
        self._grid_widget = QWidget()
        self.grid = QGridLayout(self._grid_widget)
        self.grid.setSpacing(6)
        self.grid.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.area.setWidget(self._grid_widget)
        self.area.setWidgetResizable(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.focus_bar)
        layout.addWidget(self.area, 1)
        self.columns = 1
        self.focused: WallTile | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self.poll)

    def viewport(self) -> QWidget:
        """The visible part of the grid."""
        return self.area.viewport()

    def set_focused(self, tile: WallTile | None) -> None:
        """Mark ``tile`` as the one in focus (None: no focus)."""
        self.focused = tile
        for t in self.tiles.values():
            t.focused = t is tile
            t.update()
        self.focus_label.setText(f"In focus: {tile.title} (its controls act on it alone)" if tile else "")
        self.focus_bar.setVisible(tile is not None)

    def follow(self, run: SuiteRun | None) -> None:
        """Show ``run``'s envs (None: the suite ended; the tiles stay, their streams stop)."""
        if run is self.run:
            return
        if run is None:
            self.run = None
            self._timer.stop()
            _background(self.stop_streams())
            return
        self.clear()
        self.run = run
        self._timer.start()
        self.poll()

    def clear(self) -> None:
        """Remove every tile (their streams stop)."""
        self.set_focused(None)
        for tile in self.tiles.values():
            self.grid.removeWidget(tile)
            tile.hide()
            _background(self._close(tile))
        self.tiles.clear()

    async def _close(self, tile: WallTile) -> None:
        await tile.close_stream()
        tile.deleteLater()

    async def stop_streams(self) -> None:
        """Stop every tile's stream (the suite ended)."""
        for tile in list(self.tiles.values()):
            await tile.close_stream()

    def poll(self) -> None:
        """Give each worker a tile, follow its current episode, and mark stalls."""
        run = self.run
        if run is not None:
            for worker in run.batch.workers:
                name = str(getattr(worker, "name", f"env-{len(self.tiles) + 1}"))
                tile = self.tiles.get(name)
                if tile is None:
                    tile = WallTile(name, lambda: self.clock())
                    tile.clicked.connect(lambda t=tile: self.tile_clicked.emit(t))
                    self.tiles[name] = tile
                    self.reflow()
                episode = getattr(worker, "episode", None)
                if isinstance(episode, Episode) and episode is not tile.episode:
                    tile.attach(episode)
        for tile in self.tiles.values():
            tile.check_stall(self.stall_after)
            tile.update()

    def _columns(self) -> int:
        return max(1, (self.viewport().width() - 6) // (TILE_WIDTH + self.grid.spacing()))

    def reflow(self) -> None:
        """Lay the tiles out in as many columns as the width holds."""
        self.columns = self._columns()
        for tile in self.tiles.values():
            self.grid.removeWidget(tile)
        for i, tile in enumerate(self.tiles.values()):
            self.grid.addWidget(tile, i // self.columns, i % self.columns)
            tile.show()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: D102 (Qt override)
        super().resizeEvent(event)
        if self._columns() != self.columns:
            self.reflow()
