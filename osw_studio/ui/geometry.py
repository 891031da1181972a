"""Pure geometry of the viewer: fitting a screen into a widget and mapping points both ways.

The guest screen is shown aspect-correct and centred (letterboxed); a point in the widget maps to a
guest pixel and back. Frames may arrive downscaled (the stream's ``max_width``), so mapping always uses
the guest's screen size, never the frame's.

Examples:
    >>> r = fit_rect((1920, 1080), (960, 600))
    >>> r
    Rect(x=0, y=30, width=960, height=540)
    >>> widget_to_screen((480, 300), r, (1920, 1080))
    (960, 540)
    >>> screen_to_widget((960, 540), r, (1920, 1080))
    (480.25, 300.25)
    >>> widget_to_screen((5, 5), r, (1920, 1080)) is None  # in the letterbox bar
    True
"""

from __future__ import annotations

from typing import NamedTuple


class Rect(NamedTuple):
    """An integer rectangle: top-left corner and size."""

    x: int
    y: int
    width: int
    height: int


def fit_rect(content: tuple[int, int], box: tuple[int, int]) -> Rect:
    """The largest rectangle with ``content``'s aspect ratio centred in ``box``.

    >>> fit_rect((100, 100), (300, 200))
    Rect(x=50, y=0, width=200, height=200)
    >>> fit_rect((0, 0), (300, 200))
    Rect(x=0, y=0, width=0, height=0)
    """
    cw, ch = content
    bw, bh = box
    if cw <= 0 or ch <= 0 or bw <= 0 or bh <= 0:
        return Rect(0, 0, 0, 0)
    scale = min(bw / cw, bh / ch)
    w, h = max(1, round(cw * scale)), max(1, round(ch * scale))
    return Rect((bw - w) // 2, (bh - h) // 2, w, h)


def widget_to_screen(
    point: tuple[float, float], rect: Rect, screen: tuple[int, int], *, clamp: bool = False
) -> tuple[int, int] | None:
    """The guest pixel under a widget point, or None outside the shown screen (unless ``clamp``).

    >>> widget_to_screen((-3, 700), Rect(0, 30, 960, 540), (1920, 1080), clamp=True)
    (0, 1079)
    """
    if rect.width <= 0 or rect.height <= 0:
        return None
    fx = (point[0] - rect.x) / rect.width
    fy = (point[1] - rect.y) / rect.height
    if not clamp and not (0 <= fx < 1 and 0 <= fy < 1):
        return None
    x = min(max(int(fx * screen[0]), 0), screen[0] - 1)
    y = min(max(int(fy * screen[1]), 0), screen[1] - 1)
    return x, y


def screen_to_widget(point: tuple[float, float], rect: Rect, screen: tuple[int, int]) -> tuple[float, float]:
    """The widget point that shows a guest pixel (the pixel's centre when scaled up).

    >>> screen_to_widget((0, 0), Rect(10, 0, 100, 50), (100, 50))
    (10.5, 0.5)
    """
    sx = rect.width / screen[0] if screen[0] else 0.0
    sy = rect.height / screen[1] if screen[1] else 0.0
    return rect.x + (point[0] + 0.5) * sx, rect.y + (point[1] + 0.5) * sy
