"""The VM viewer: the guest's screen live, aspect-correct, with the proposed action drawn over it.

During takeover the canvas keeps a person's mouse, wheel and keyboard input as raw events and, once the
input pauses (:data:`BURST_MS`), reduces the burst with the demonstrations' reducer and emits the actions
(``human_input``); the run controller sends them to the guest through ``Episode.human_act`` as one human
step. So a typed word is one ``typing`` action, quick clicks at one spot one double or triple click, and
what the guest receives is exactly what the step records.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import replace

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QCloseEvent,
    QColor,
    QFocusEvent,
    QImage,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from osw_studio.core.actions import Action
from osw_studio.tasks.demonstration import InputEvent, reduce_events
from osw_studio.ui.frames import FpsMeter, FrameStream
from osw_studio.ui.geometry import Rect, fit_rect, screen_to_widget, widget_to_screen
from osw_studio.ui.input_map import input_event
from osw_studio.ui.overlay import paint_actions

TAKEOVER_COLOR = QColor(255, 170, 0)
TAKEOVER_KEY = QKeySequence("Ctrl+T")
"""Begins and ends a takeover; the only key the viewer leaves to the window during one."""

BURST_MS = 700
"""A takeover's input is sent in bursts: this many quiet milliseconds end one (one human step)."""

SETTLE_MS = 250
"""Live frames are painted with fast scaling; this long after the last one the screen is painted smooth."""


class ScreenCanvas(QWidget):
    """Paints the newest frame letterboxed in the widget, the overlay, and (in takeover) takes input.

    A frame that is not the canvas's size is scaled when painted: quickly (nearest pixel) while live frames
    keep coming, smoothly once they pause (:data:`SETTLE_MS`) and for a still (a recorded step's screen).

    Signals:
        human_input(list): Actions a person performed in takeover (core actions, guest pixels).
        frame_shown(): A new frame was set to be painted.
    """

    human_input = Signal(list)
    frame_shown = Signal()
    screen_size_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("screenCanvas")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(320, 180)
        self.setMouseTracking(False)
        self._image: QImage | None = None
        self._number = 0
        self._painted_number = 0
        self.painted_numbers: deque[int] = deque(maxlen=16384)
        """The numbers of the live frames painted, in order (each once; frames replaced before a paint
        are missing): what the viewer really showed of the stream."""
        self._screen: tuple[int, int] | None = None
        self._actions: list[Action] = []
        self._takeover = False
        self._placeholder = "No guest yet"
        self._burst: list[InputEvent] = []
        self._buttons = 0
        self._swallow_release = False
        self._burst_timer = QTimer(self)
        self._burst_timer.setSingleShot(True)
        self._burst_timer.timeout.connect(self._on_quiet)
        self._moving = False  # live frames are coming: paint them with fast scaling
        self._settle_timer = QTimer(self)
        self._settle_timer.setSingleShot(True)
        self._settle_timer.setInterval(SETTLE_MS)
        self._settle_timer.timeout.connect(self._settle)

    # --- what to show -------------------------------------------------------------------------------

    @property
    def screen_size(self) -> tuple[int, int]:
        """The guest's screen size (the coordinate space of actions); the frame's size until known."""
        if self._screen:
            return self._screen
        if self._image is not None:
            return (self._image.width(), self._image.height())
        return (1920, 1080)

    def set_screen_size(self, size: tuple[int, int] | None) -> None:
        """Tell the canvas the guest's real screen size (frames may come downscaled)."""
        changed = size != self._screen
        self._screen = size
        self.update()
        if changed:
            self.screen_size_changed.emit()

    def set_frame(self, image: QImage, number: int = 0) -> None:
        """Show a frame (decoded off the event loop); ``number``: a live frame's, 0 for a still."""
        self._image = image
        self._number = number
        if number:
            self._moving = True
            self._settle_timer.start()
        else:
            self._moving = False
            self._settle_timer.stop()
        self.update()
        self.frame_shown.emit()

    def _settle(self) -> None:
        self._moving = False
        self.update()

    def set_placeholder(self, text: str) -> None:
        """The text shown while there is no frame."""
        self._placeholder = text
        self.update()

    def set_actions(self, actions: Sequence[Action]) -> None:
        """Draw these proposed actions over the screen (empty clears the overlay)."""
        self._actions = list(actions)
        self.update()

    @property
    def overlay_actions(self) -> list[Action]:
        """The actions currently drawn on the overlay."""
        return list(self._actions)

    def set_takeover(self, on: bool) -> None:
        """Forward input to the guest (``on``) or only watch."""
        if not on:
            self.flush_input()  # input given just before the takeover ended still counts
        self._takeover = on
        self._burst = []
        self._buttons = 0
        self._swallow_release = False
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus if on else Qt.FocusPolicy.NoFocus)
        self.setCursor(Qt.CursorShape.CrossCursor if on else Qt.CursorShape.ArrowCursor)
        if on:
            self.setFocus(Qt.FocusReason.OtherFocusReason)
        self.update()

    @property
    def takeover(self) -> bool:
        """Whether input goes to the guest."""
        return self._takeover

    def screen_rect(self) -> Rect:
        """Where the guest screen is drawn in this widget."""
        return fit_rect(self.screen_size, (self.width(), self.height()))

    def fit_size(self) -> QSize:
        """The size frames should be decoded to (device pixels)."""
        r = self.screen_rect()
        ratio = self.devicePixelRatioF()
        return QSize(max(1, round(r.width * ratio)), max(1, round(r.height * ratio)))

    # --- painting -----------------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: D102 (Qt override)
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor(24, 24, 30))
        r = self.screen_rect()
        target = QRectF(r.x, r.y, r.width, r.height)
        if self._image is None:
            painter.setPen(QColor(160, 160, 170))
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self._placeholder)
        else:
            size, ratio = self._image.size(), self.devicePixelRatioF()
            scaled = (
                abs(size.width() - target.width() * ratio) > 1
                or abs(size.height() - target.height() * ratio) > 1
            )
            # smooth scaling of a full-size frame costs a few ms of the event loop per frame
            painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, scaled and not self._moving)
            painter.drawImage(target, self._image)
            if self._number and self._number != self._painted_number:
                self._painted_number = self._number
                self.painted_numbers.append(self._number)
        if self._actions:
            screen = self.screen_size
            paint_actions(painter, self._actions, lambda x, y: screen_to_widget((x, y), r, screen), target)
        if self._takeover:
            pen = QPen(TAKEOVER_COLOR)
            pen.setWidth(3)
            painter.setPen(pen)
            painter.drawRect(target.adjusted(1, 1, -2, -2))
        painter.end()

    # --- takeover input -----------------------------------------------------------------------------

    @property
    def burst_ms(self) -> int:
        """Quiet milliseconds that end a burst of input (never shorter than the double-click interval)."""
        return max(BURST_MS, QApplication.doubleClickInterval() + 50)

    def _to_screen(self, pos: QPointF, clamp: bool = False) -> tuple[int, int] | None:
        return widget_to_screen((pos.x(), pos.y()), self.screen_rect(), self.screen_size, clamp=clamp)

    def _take(self, event: QEvent) -> None:
        """Keep one raw input event of the burst in progress; the burst ends after a quiet spell."""
        recorded = input_event(event, self._to_screen)
        if recorded is None:
            return
        # the time it reached the viewer: event time stamps of synthetic input (tests, remote desktops)
        # are spaced by their own rules, and a burst is about what the person just did
        recorded = replace(recorded, t=time.monotonic())
        if event.type() == QEvent.Type.MouseButtonDblClick:
            # Qt has decided this press is a double-click's second: it counts as a whole click next to
            # the first, however its time stamp reads (test tools send no release after it).
            last = self._burst[-1] if self._burst else None
            t = last.t if last is not None and last.kind == "up" else recorded.t
            self._burst += [replace(recorded, t=t), replace(recorded, kind="up", t=t)]
            self._swallow_release = True
            self._burst_timer.start(self.burst_ms)
            return
        swallow, self._swallow_release = self._swallow_release, False
        if recorded.kind == "up" and swallow:
            return
        if recorded.kind == "down":
            self._buttons += 1
        elif recorded.kind == "up":
            self._buttons = max(0, self._buttons - 1)
        elif recorded.kind == "move" and not self._buttons:
            return
        self._burst.append(recorded)
        self._burst_timer.start(self.burst_ms)

    def _on_quiet(self) -> None:
        if self._buttons:  # a drag in progress: its release belongs to this burst
            self._burst_timer.start(self.burst_ms)
            return
        self.flush_input()

    def flush_input(self) -> None:
        """End the burst now: its input, reduced to actions, goes to the guest as one human step.

        The reducer is the demonstrations' (:func:`~osw_studio.tasks.demonstration.reduce_events`): typed
        keys are one ``typing`` (Enter inside it a newline), modifier combinations a ``hotkey``, quick
        clicks at one spot a double or triple click.
        """
        self._burst_timer.stop()
        events, self._burst = self._burst, []
        self._buttons = 0
        if not events:
            return
        interval = QApplication.doubleClickInterval() / 1000.0
        actions = [a for step in reduce_events(events, double_click=interval) for a in step.actions]
        if actions and self._takeover:
            self.human_input.emit(actions)

    flush_click = flush_input
    """The former name: a click held for a double-click goes now."""

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: D102
        if not self._takeover:
            return super().mousePressEvent(event)
        self._take(event)
        event.accept()
        return None

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: D102
        if not self._takeover:
            return super().mouseMoveEvent(event)
        self._take(event)
        event.accept()
        return None

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: D102
        if not self._takeover:
            return super().mouseReleaseEvent(event)
        self._take(event)
        event.accept()
        return None

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # noqa: D102
        if not self._takeover:
            return super().mouseDoubleClickEvent(event)
        self._take(event)  # Qt sends the second press of a double-click as this event
        event.accept()
        return None

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: D102
        if not self._takeover:
            return super().wheelEvent(event)
        self._take(event)
        event.accept()
        return None

    def event(self, event: QEvent) -> bool:  # noqa: D102
        # in takeover every key belongs to the guest, including the app's own shortcuts (Space, Enter),
        # except the one that ends the takeover
        if self._takeover and event.type() == QEvent.Type.ShortcutOverride:
            if isinstance(event, QKeyEvent) and QKeySequence(event.keyCombination()) == TAKEOVER_KEY:
                return super().event(event)
            event.accept()
            return True
        is_key = self._takeover and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent)
        if is_key and event.key() in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab):  # type: ignore[attr-defined]
            self.keyPressEvent(event)  # type: ignore[arg-type]  # Tab would move focus away otherwise
            return True
        return super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: D102
        if not self._takeover:
            return super().keyPressEvent(event)
        self._take(event)
        event.accept()
        return None

    def keyReleaseEvent(self, event: QKeyEvent) -> None:  # noqa: D102
        if not self._takeover:
            return super().keyReleaseEvent(event)
        self._take(event)  # a modifier pressed and released alone is a press of it
        event.accept()
        return None

    def focusOutEvent(self, event: QFocusEvent) -> None:  # noqa: D102
        self._buttons = 0
        super().focusOutEvent(event)


ZOOMS: dict[str, float | None] = {"Fit": None, "50%": 0.5, "1:1": 1.0, "150%": 1.5, "200%": 2.0}
"""The viewer's zoom choices: ``Fit`` scales the guest into the space, the others are fixed scales."""


class VmViewer(QWidget):
    """The viewer: a header (source, zoom, pop-out, fps, takeover hint) above the screen canvas.

    It shows frames from a :class:`FrameStream` when one is attached, and otherwise the observations the
    episode takes (so a guest without a stream is still shown, one frame per step). At ``Fit`` the guest
    fills the space; at a fixed zoom (``1:1`` shows guest pixels as screen pixels) it scrolls.

    Signals:
        pop_out_requested(): The person asked for the viewer in a window of its own (or back).
    """

    pop_out_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.canvas = ScreenCanvas()
        self.scroll_area = QScrollArea(self)
        self.scroll_area.setObjectName("viewerScroll")
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.scroll_area.setWidget(self.canvas)
        self.scroll_area.setWidgetResizable(True)
        self.source_label = QLabel("no guest")
        self.source_label.setObjectName("viewerSource")
        self.fps_label = QLabel("– fps")
        self.fps_label.setObjectName("viewerFps")
        self.hint_label = QLabel("")
        self.hint_label.setObjectName("viewerHint")
        self.zoom = QComboBox()
        self.zoom.setObjectName("viewerZoom")
        self.zoom.addItems(list(ZOOMS))
        self.zoom.setToolTip("Fit the guest into the viewer, or show it at a fixed scale (1:1: guest pixels)")
        self.zoom.currentTextChanged.connect(self._apply_zoom)
        self.pop_button = QToolButton()
        self.pop_button.setObjectName("viewerPopOut")
        self.pop_button.setText("Pop out")
        self.pop_button.setToolTip(
            "Show the viewer in a window of its own (again: back into the main window)"
        )
        self.pop_button.clicked.connect(self.pop_out_requested.emit)
        self.live_button = QToolButton()
        self.live_button.setObjectName("viewerLive")
        self.live_button.setText("Back to live")
        self.live_button.setToolTip("A recorded step's screen is shown; go back to the guest's live screen")
        self.live_button.clicked.connect(lambda: self.set_replaying(False))
        self.live_button.hide()
        self._replaying = False
        header = QHBoxLayout()
        header.setContentsMargins(6, 2, 6, 2)
        header.addWidget(self.source_label)
        header.addStretch(1)
        header.addWidget(self.hint_label)
        header.addWidget(self.live_button)
        header.addSpacing(12)
        header.addWidget(self.zoom)
        header.addWidget(self.pop_button)
        header.addSpacing(6)
        header.addWidget(self.fps_label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(header)
        layout.addWidget(self.scroll_area, 1)
        self.meter = FpsMeter()
        self._stream: FrameStream | None = None
        self._stopping: set[asyncio.Future[None]] = set()
        """Streams replaced while attached, being stopped (awaited by :meth:`detach_stream`)."""
        self._last_live: QImage | None = None
        self._fps_timer = QTimer(self)
        self._fps_timer.setInterval(500)
        self._fps_timer.timeout.connect(self._update_fps)
        self._fps_timer.start()
        self.canvas.screen_size_changed.connect(lambda: self._apply_zoom(self.zoom.currentText()))

    def set_zoom(self, name: str) -> None:
        """``Fit``, ``1:1`` or a percentage from :data:`ZOOMS`."""
        self.zoom.setCurrentText(name)

    def _apply_zoom(self, name: str) -> None:
        scale = ZOOMS.get(name)
        if scale is None:
            self.canvas.setMinimumSize(320, 180)
            self.canvas.setMaximumSize(16777215, 16777215)
            self.scroll_area.setWidgetResizable(True)
            return
        width, height = self.canvas.screen_size
        self.scroll_area.setWidgetResizable(False)
        self.canvas.setFixedSize(round(width * scale), round(height * scale))

    @property
    def stream(self) -> FrameStream | None:
        """The live stream attached, if any."""
        return self._stream

    def attach_stream(self, stream: FrameStream, screen_size: tuple[int, int] | None = None) -> None:
        """Show frames from ``stream`` (started here) for a guest of ``screen_size``.

        A stream still attached is stopped, never left running unseen.
        """
        old = self._stream
        if old is not None and old is not stream:
            self._disconnect(old)
            stopping = asyncio.ensure_future(old.stop())
            self._stopping.add(stopping)
            stopping.add_done_callback(self._stopping.discard)
        self._stream = stream
        stream.frame_ready.connect(self._on_stream_frame)
        stream.status_changed.connect(self._on_stream_status)
        self.canvas.set_screen_size(screen_size)
        self.source_label.setText(stream.base_url)
        self.canvas.set_placeholder("Connecting to the guest…")
        stream.start()

    async def detach_stream(self) -> None:
        """Stop showing the live stream."""
        stream, self._stream = self._stream, None
        if stream is not None:
            await stream.stop()
            self._disconnect(stream)
        while self._stopping:
            await asyncio.gather(*list(self._stopping), return_exceptions=True)

    def _disconnect(self, stream: FrameStream) -> None:
        stream.frame_ready.disconnect(self._on_stream_frame)
        stream.status_changed.disconnect(self._on_stream_status)

    @property
    def replaying(self) -> bool:
        """Whether a recorded step's screen is shown instead of the live one."""
        return self._replaying

    def set_replaying(self, on: bool) -> None:
        """Hold a recorded screen (``on``: live frames wait) or go back to the live screen."""
        self._replaying = on
        self.live_button.setVisible(on)
        if not on and self._last_live is not None:
            self.canvas.set_frame(self._last_live)

    def show_encoded(self, image: QImage) -> None:
        """Show one decoded frame (an observation) when no live stream is attached."""
        if self._stream is None or not self._stream.running:
            self.canvas.set_frame(image)

    def set_takeover(self, on: bool) -> None:
        """Switch takeover on or off, with a visible hint (a takeover acts on the live screen)."""
        if on:
            self.set_replaying(False)
        self.canvas.set_takeover(on)
        self.hint_label.setText("TAKEOVER: your input goes to the guest (Ctrl+T ends)" if on else "")
        self.hint_label.setStyleSheet(f"color: {TAKEOVER_COLOR.name()}; font-weight: bold;" if on else "")

    def _on_stream_frame(self, image: QImage) -> None:
        self.meter.tick()  # only live frames count towards fps
        self._last_live = image
        if not self._replaying:
            self.canvas.set_frame(image, self._stream.frame_number if self._stream else 0)

    def _on_stream_status(self, status: str) -> None:
        base = self._stream.base_url if self._stream else ""
        self.source_label.setText(f"{base} · {status}")

    def _update_fps(self) -> None:
        fps = self.meter.fps()
        self.fps_label.setText(f"{fps:.0f} fps" if fps else "– fps")


class ViewerWindow(QWidget):
    """The viewer popped out into a window of its own (a second screen, a large window beside the app).

    Signals:
        closed(): The window was closed: the viewer goes back into the main window.
    """

    closed = Signal()

    def __init__(self, viewer: VmViewer) -> None:
        super().__init__(None, Qt.WindowType.Window)
        self.setObjectName("viewerWindow")
        self.setWindowTitle("OSW Studio: viewer")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(viewer)
        self.viewer = viewer
        self.resize(1280, 760)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: D102 (Qt override)
        super().closeEvent(event)
        self.closed.emit()
