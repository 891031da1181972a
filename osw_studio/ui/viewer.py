"""The VM viewer: the guest's screen live, aspect-correct, with the proposed action drawn over it.

During takeover the canvas turns a person's mouse, wheel and keyboard input into core actions and emits
them (``human_input``); the run controller sends them to the guest through ``Episode.human_act``.

A left click is held for the double-click interval, so that two or three quick clicks are recorded as one
double or triple click (as the guest must replay them). Any other input (a key, the wheel, another press)
sends the held click first, so the guest always gets input in the order the person gave it.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
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
from PySide6.QtWidgets import QApplication, QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from osw_studio.core.actions import Action, Click, DoubleClick, MouseButton
from osw_studio.tasks.demonstration import near
from osw_studio.ui.frames import FpsMeter, FrameStream
from osw_studio.ui.geometry import Rect, fit_rect, screen_to_widget, widget_to_screen
from osw_studio.ui.input_map import (
    button_name,
    double_click_action,
    key_action,
    release_action,
    triple_click_action,
    wheel_action,
)
from osw_studio.ui.overlay import paint_actions

TAKEOVER_COLOR = QColor(255, 170, 0)
TAKEOVER_KEY = QKeySequence("Ctrl+T")
"""Begins and ends a takeover; the only key the viewer leaves to the window during one."""


class ScreenCanvas(QWidget):
    """Paints the newest frame letterboxed in the widget, the overlay, and (in takeover) takes input.

    Signals:
        human_input(list): Actions a person performed in takeover (core actions, guest pixels).
        frame_shown(): A new frame was painted.
    """

    human_input = Signal(list)
    frame_shown = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("screenCanvas")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(320, 180)
        self.setMouseTracking(False)
        self._image: QImage | None = None
        self._screen: tuple[int, int] | None = None
        self._actions: list[Action] = []
        self._takeover = False
        self._press: tuple[MouseButton, tuple[int, int]] | None = None
        self._placeholder = "No guest yet"
        self._held_click: Click | DoubleClick | None = None
        self._click_timer = QTimer(self)
        self._click_timer.setSingleShot(True)
        self._click_timer.timeout.connect(self.flush_click)

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
        self._screen = size
        self.update()

    def set_frame(self, image: QImage) -> None:
        """Show a frame (already decoded and scaled off the event loop)."""
        self._image = image
        self.update()
        self.frame_shown.emit()

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
            self.flush_click()  # a click given just before the takeover ended still counts
        self._takeover = on
        self._press = None
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
            painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
            painter.drawImage(target, self._image)
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

    def _to_screen(self, pos: QPointF, *, clamp: bool = False) -> tuple[int, int] | None:
        return widget_to_screen((pos.x(), pos.y()), self.screen_rect(), self.screen_size, clamp=clamp)

    def _held_near(self, point: tuple[int, int] | None) -> bool:
        held = self._held_click
        if held is None or point is None or held.x is None or held.y is None:
            return False
        return near(point, (held.x, held.y))

    def _count_click(self, point: tuple[int, int]) -> None:
        """One more left click at ``point``: held as a click or double-click, sent at once as a triple."""
        if not self._held_near(point):
            self.flush_click()
            self._held_click = Click(x=point[0], y=point[1])
        elif isinstance(self._held_click, Click):
            self._held_click = double_click_action(point)
        else:  # nothing goes beyond a triple-click: no need to wait
            self._click_timer.stop()
            self._held_click = None
            self.human_input.emit([triple_click_action(point)])
            return
        self._click_timer.start(QApplication.doubleClickInterval())

    def flush_click(self) -> None:
        """Send the held left click (or double-click) now, before whatever input comes next."""
        self._click_timer.stop()
        action, self._held_click = self._held_click, None
        if action is not None and self._takeover:
            self.human_input.emit([action])

    def _emit(self, action: Action) -> None:
        self.flush_click()  # input reaches the guest in the order it was given
        self.human_input.emit([action])

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: D102
        if not self._takeover:
            return super().mousePressEvent(event)
        button = button_name(event.button())
        point = self._to_screen(event.position())
        if not (button == "left" and self._held_near(point)):  # not the next click of a held one
            self.flush_click()
        if button and point:
            self._press = (button, point)
        event.accept()
        return None

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: D102
        if not self._takeover or self._press is None:
            return super().mouseReleaseEvent(event)
        button, start = self._press
        self._press = None
        end = self._to_screen(event.position(), clamp=True) or start
        if button_name(event.button()) == button:
            action = release_action(button, start, end)
            if isinstance(action, Click) and button == "left":
                self._count_click(start)
            else:
                self._emit(action)
        event.accept()
        return None

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # noqa: D102
        if not self._takeover:
            return super().mouseDoubleClickEvent(event)
        point = self._to_screen(event.position())
        if point and event.button() == Qt.MouseButton.LeftButton:
            # Qt sends the second press of a double-click as this event: it counts as the second click
            self._press = None
            self._count_click(point)
        event.accept()
        return None

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: D102
        if not self._takeover:
            return super().wheelEvent(event)
        point = self._to_screen(event.position())
        delta = event.angleDelta()
        action = wheel_action(delta.x(), delta.y(), point) if point else None
        if action is not None:
            self._emit(action)
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
        action = key_action(event.key(), event.text(), event.modifiers())
        if action is not None:
            self._emit(action)
        event.accept()
        return None

    def focusOutEvent(self, event: QFocusEvent) -> None:  # noqa: D102
        self._press = None
        super().focusOutEvent(event)


class VmViewer(QWidget):
    """The viewer dock's content: a header (source, fps, takeover hint) above the screen canvas.

    It shows frames from a :class:`FrameStream` when one is attached, and otherwise the observations the
    episode takes (so a guest without a stream is still shown, one frame per step).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.canvas = ScreenCanvas(self)
        self.source_label = QLabel("no guest")
        self.source_label.setObjectName("viewerSource")
        self.fps_label = QLabel("– fps")
        self.fps_label.setObjectName("viewerFps")
        self.hint_label = QLabel("")
        self.hint_label.setObjectName("viewerHint")
        header = QHBoxLayout()
        header.setContentsMargins(6, 2, 6, 2)
        header.addWidget(self.source_label)
        header.addStretch(1)
        header.addWidget(self.hint_label)
        header.addSpacing(12)
        header.addWidget(self.fps_label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(header)
        layout.addWidget(self.canvas, 1)
        self.meter = FpsMeter()
        self._stream: FrameStream | None = None
        self._fps_timer = QTimer(self)
        self._fps_timer.setInterval(500)
        self._fps_timer.timeout.connect(self._update_fps)
        self._fps_timer.start()

    @property
    def stream(self) -> FrameStream | None:
        """The live stream attached, if any."""
        return self._stream

    def attach_stream(self, stream: FrameStream, screen_size: tuple[int, int] | None = None) -> None:
        """Show frames from ``stream`` (started here) for a guest of ``screen_size``."""
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
            stream.frame_ready.disconnect(self._on_stream_frame)
            stream.status_changed.disconnect(self._on_stream_status)

    def show_encoded(self, image: QImage) -> None:
        """Show one decoded frame (an observation) when no live stream is attached."""
        if self._stream is None or not self._stream.running:
            self.canvas.set_frame(image)

    def set_takeover(self, on: bool) -> None:
        """Switch takeover on or off, with a visible hint."""
        self.canvas.set_takeover(on)
        self.hint_label.setText("TAKEOVER: your input goes to the guest (Ctrl+T ends)" if on else "")
        self.hint_label.setStyleSheet(f"color: {TAKEOVER_COLOR.name()}; font-weight: bold;" if on else "")

    def _on_stream_frame(self, image: QImage) -> None:
        self.meter.tick()  # only live frames count towards fps
        self.canvas.set_frame(image)

    def _on_stream_status(self, status: str) -> None:
        base = self._stream.base_url if self._stream else ""
        self.source_label.setText(f"{base} · {status}")

    def _update_fps(self) -> None:
        fps = self.meter.fps()
        self.fps_label.setText(f"{fps:.0f} fps" if fps else "– fps")
