"""Draw proposed actions over the guest screen: what the model is about to do, before it does it.

A crosshair for clicks, an arrow for drags, a marker for scrolls, the text to be typed and key chips
for key presses and hotkeys. Several actions in one step are numbered in order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen, QPolygonF

from osw_studio.core.actions import Action, DragTo, Hotkey, KeyDown, KeyUp, Press, Scroll, Typing

ToWidget = Callable[[float, float], tuple[float, float]]
"""Maps a guest pixel to a widget point."""

ACCENT = QColor(255, 64, 129)
TEXT_BG = QColor(20, 20, 28, 220)


def describe(action: Action) -> str:
    """A short label for an action, as shown on the overlay and in lists.

    >>> from osw_studio.core.actions import Click, Hotkey, Typing
    >>> describe(Click(x=1, y=2)), describe(Hotkey(keys=["ctrl", "s"])), describe(Typing(text="hi"))
    ('click (1, 2)', 'ctrl+s', 'type "hi"')
    """
    if isinstance(action, Typing):
        text = action.text.replace("\n", "⏎")
        text = text if len(text) <= 40 else text[:39] + "…"
        return f'type "{text}"'
    if isinstance(action, Hotkey):
        return "+".join(action.keys)
    if isinstance(action, Press | KeyDown | KeyUp):
        return f"{action.kind.replace('_', ' ')} {action.key}" if action.kind != "press" else action.key
    if isinstance(action, Scroll):
        return f"scroll {action.dx:+d},{action.dy:+d}" if action.dx else f"scroll {action.dy:+d}"
    point = action.point
    label = action.kind.replace("_", " ")
    return f"{label} {point}" if point else label


def with_drag_starts(actions: Sequence[Action]) -> list[Action]:
    """The actions as drawn: a drag's start taken from the move or press before it, which it absorbs.

    pyautogui writes a drag as ``moveTo(a); dragTo(b)`` and computer_13 as ``MOUSE_DOWN`` at a, moves,
    ``MOUSE_UP`` at b; both are one arrow from a to b, not two crosshairs.

    >>> from osw_studio.core.actions import MouseDown, MouseUp, MoveTo
    >>> with_drag_starts([MoveTo(x=1, y=2), DragTo(x=9, y=9)])
    [DragTo(kind='drag_to', x=9, y=9, start_x=1, start_y=2, button='left')]
    >>> with_drag_starts([MouseDown(x=1, y=2), MoveTo(x=5, y=5), MouseUp(x=9, y=8)])[0].start_x
    1
    """
    out: list[Action] = []
    i = 0
    while i < len(actions):
        action = actions[i]
        nxt = actions[i + 1] if i + 1 < len(actions) else None
        if action.kind == "move_to" and isinstance(nxt, DragTo) and nxt.start_x is None and action.point:
            out.append(nxt.model_copy(update={"start_x": action.point[0], "start_y": action.point[1]}))
            i += 2
            continue
        if action.kind == "mouse_down" and action.point is not None:
            j = i + 1
            end = None
            while j < len(actions) and actions[j].kind == "move_to":
                end = actions[j].point
                j += 1
            if j < len(actions) and actions[j].kind == "mouse_up":
                end = actions[j].point or end
                if end is not None and end != action.point:
                    start = action.point
                    out.append(DragTo(x=end[0], y=end[1], start_x=start[0], start_y=start[1]))
                    i = j + 1
                    continue
        out.append(action)
        i += 1
    return out


def paint_actions(painter: QPainter, actions: Sequence[Action], to_widget: ToWidget, bounds: QRectF) -> None:
    """Paint ``actions`` over a screen shown inside ``bounds`` (widget coordinates)."""
    actions = with_drag_starts(actions)
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    font = QFont(painter.font())
    font.setPointSizeF(max(8.0, font.pointSizeF()))
    font.setBold(True)
    painter.setFont(font)
    chips_y = bounds.bottom() - 12
    for n, action in enumerate(actions, start=1):
        tag = f"{n}" if len(actions) > 1 else ""
        if isinstance(action, DragTo):
            _drag(painter, action, to_widget, tag)
        elif isinstance(action, Scroll):
            _scroll(painter, action, to_widget, bounds, tag)
        elif action.point is not None:
            x, y = to_widget(*action.point)
            _crosshair(painter, QPointF(x, y), f"{tag} {describe(action).split(' (')[0]}".strip())
        else:
            chips_y = _chips(painter, _chip_texts(action, tag), bounds, chips_y)
    painter.restore()


def _chip_texts(action: Action, tag: str) -> list[str]:
    prefix = [tag] if tag else []
    if isinstance(action, Hotkey):
        return [*prefix, *action.keys]
    return [*prefix, describe(action)]


def _pen(width: float = 2.5) -> QPen:
    pen = QPen(ACCENT)
    pen.setWidthF(width)
    return pen


def _label(painter: QPainter, at: QPointF, text: str) -> None:
    if not text:
        return
    metrics = QFontMetricsF(painter.font())
    box = metrics.boundingRect(text).adjusted(-5, -3, 5, 3)
    box.moveTopLeft(at)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(TEXT_BG)
    painter.drawRoundedRect(box, 4, 4)
    painter.setPen(QColor("white"))
    painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)


def _crosshair(painter: QPainter, c: QPointF, label: str) -> None:
    painter.setPen(_pen())
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.drawEllipse(c, 12, 12)
    painter.drawLine(QPointF(c.x() - 20, c.y()), QPointF(c.x() - 5, c.y()))
    painter.drawLine(QPointF(c.x() + 5, c.y()), QPointF(c.x() + 20, c.y()))
    painter.drawLine(QPointF(c.x(), c.y() - 20), QPointF(c.x(), c.y() - 5))
    painter.drawLine(QPointF(c.x(), c.y() + 5), QPointF(c.x(), c.y() + 20))
    _label(painter, QPointF(c.x() + 16, c.y() + 10), label)


def _arrow(painter: QPainter, a: QPointF, b: QPointF) -> None:
    painter.setPen(_pen(3))
    painter.drawLine(a, b)
    angle = math.atan2(b.y() - a.y(), b.x() - a.x())
    head = QPolygonF(
        [
            b,
            QPointF(b.x() - 14 * math.cos(angle - 0.4), b.y() - 14 * math.sin(angle - 0.4)),
            QPointF(b.x() - 14 * math.cos(angle + 0.4), b.y() - 14 * math.sin(angle + 0.4)),
        ]
    )
    painter.setBrush(ACCENT)
    painter.drawPolygon(head)


def _drag(painter: QPainter, action: DragTo, to_widget: ToWidget, tag: str) -> None:
    end = QPointF(*to_widget(action.x, action.y))
    if action.start_x is not None and action.start_y is not None:
        start = QPointF(*to_widget(action.start_x, action.start_y))
        painter.setPen(_pen())
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawEllipse(start, 6, 6)
        _arrow(painter, start, end)
    else:
        _crosshair(painter, end, "")
    _label(painter, QPointF(end.x() + 12, end.y() + 8), f"{tag} drag".strip())


def _scroll(painter: QPainter, action: Scroll, to_widget: ToWidget, bounds: QRectF, tag: str) -> None:
    if action.x is not None and action.y is not None:
        c = QPointF(*to_widget(action.x, action.y))
    else:
        c = bounds.center()
    painter.setPen(_pen())
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.drawRoundedRect(QRectF(c.x() - 9, c.y() - 14, 18, 28), 9, 9)
    # pyautogui's sign: dy > 0 scrolls up; the arrow points where the content moves into view
    length = 18 + 6 * min(abs(action.dy) or abs(action.dx), 8)
    dx = (1 if action.dx > 0 else -1 if action.dx < 0 else 0) * length
    dy = (-1 if action.dy > 0 else 1 if action.dy < 0 else 0) * length
    _arrow(painter, c, QPointF(c.x() + dx, c.y() + dy))
    _label(painter, QPointF(c.x() + 14, c.y() - 24), f"{tag} {describe(action)}".strip())


def _chips(painter: QPainter, texts: list[str], bounds: QRectF, bottom: float) -> float:
    metrics = QFontMetricsF(painter.font())
    h = metrics.height() + 8
    widths = [metrics.horizontalAdvance(t) + 16 for t in texts]
    x = bounds.center().x() - (sum(widths) + 6 * (len(widths) - 1)) / 2
    top = bottom - h
    for text, w in zip(texts, widths, strict=True):
        box = QRectF(x, top, w, h)
        painter.setPen(_pen(1.5))
        painter.setBrush(TEXT_BG)
        painter.drawRoundedRect(box, 6, 6)
        painter.setPen(QColor("white"))
        painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)
        x += w + 6
    return top - 6
