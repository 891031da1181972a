"""Coordinate spaces: how the numbers a model writes map to screen pixels of the guest.

Every stored action holds screen pixels; a :class:`CoordinateSpace` records which frame the model's
numbers were in, and converts both ways. The modes:

========== ===================================================================================
``abs``     screen pixels (OSWorld's GPT-4o / Claude pyautogui agents on full-size screenshots)
``resized`` pixels of a plainly resized screenshot of ``image`` size
``smart``   pixels of the Qwen2.5-VL smart-resized image (UI-TARS 1.5, DART-GUI): the screenshot of
            ``image`` size (default: the screen) rounded to multiples of ``factor`` within
            ``min_pixels`` .. ``max_pixels``
``rel1000`` 0-1000 on both axes (UI-TARS 1.0, Qwen2-VL)
``rel999``  0-999 on both axes (OSWorld's Qwen3-VL agent: the model is told 1000x1000, its numbers are
            read as 999ths of the screen)
``norm``    0-1 on both axes
========== ===================================================================================

``rounding`` is ``round`` (nearest pixel), or ``trunc`` as OSWorld's Qwen3-VL and OpenCUA agents compute
it: ``int(x * (W / 999))`` for ``rel999`` and ``int(x / w * W)`` for ``smart`` (``w`` the model frame's
width), so that the same reply lands on the same pixel.

Examples:
    >>> space = CoordinateSpace(screen=(1920, 1080), mode="smart")
    >>> space.model_size
    (1932, 1092)
    >>> space.to_screen(966, 546)
    (960, 540)
    >>> space.from_screen(960, 540)
    (966, 546)
    >>> CoordinateSpace(screen=(1920, 1080), mode="rel1000").to_screen(500, 500)
    (960, 540)
    >>> CoordinateSpace(screen=(1920, 1080), mode="rel999", rounding="trunc").to_screen(500, 500)
    (960, 540)
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

CoordMode = Literal["abs", "resized", "smart", "rel1000", "rel999", "norm"]
"""Names of the coordinate modes."""

COORD_MODES: tuple[str, ...] = ("abs", "resized", "smart", "rel1000", "rel999", "norm")
Rounding = Literal["round", "trunc"]
"""How a model point becomes a pixel: nearest, or truncated as some reference agents do."""

IMAGE_FACTOR = 28
"""Qwen2.5-VL's patch size (14) times its merge size (2)."""
MIN_PIXELS = 4 * 28 * 28
"""``qwen_vl_utils``' default lower bound on the smart-resized area."""
MAX_PIXELS = 16384 * 28 * 28
"""``qwen_vl_utils``' default upper bound on the smart-resized area (UI-TARS 1.5 uses it too)."""
MAX_RATIO = 200
"""Largest aspect ratio ``smart_resize`` accepts, as in ``qwen_vl_utils``."""
NORM_DECIMALS = 4
"""Decimals written for ``norm`` coordinates: 1e-4 of a 3840 px screen is below half a pixel."""


def smart_resize(
    height: int,
    width: int,
    factor: int = IMAGE_FACTOR,
    min_pixels: int = MIN_PIXELS,
    max_pixels: int = MAX_PIXELS,
) -> tuple[int, int]:
    """The image size Qwen2.5-VL (and UI-TARS 1.5) actually sees for an image of ``height`` x ``width``.

    Both sides are rounded to multiples of ``factor``; the area is then scaled into
    ``min_pixels`` .. ``max_pixels`` keeping the aspect ratio, as ``qwen_vl_utils.smart_resize`` does.

    Returns:
        ``(height, width)`` of the resized image, in that order like the original.

    Raises:
        ValueError: If a side is not positive or the aspect ratio exceeds :data:`MAX_RATIO`.

    Examples:
        >>> smart_resize(1080, 1920)
        (1092, 1932)
        >>> smart_resize(1080, 1920, max_pixels=1280 * 28 * 28)
        (728, 1316)
        >>> smart_resize(10, 10)
        (56, 56)
    """
    if height <= 0 or width <= 0:
        raise ValueError(f"image size must be positive, got {width}x{height}")
    if max(height, width) / min(height, width) > MAX_RATIO:
        raise ValueError(f"aspect ratio of {width}x{height} exceeds {MAX_RATIO}")
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


class CoordinateSpace(BaseModel):
    """The frame a model's coordinates are in, relative to the guest's screen.

    Attributes:
        screen: Screen size ``(width, height)`` in pixels.
        mode: Which frame the model's numbers are in (see the module docs).
        image: Size ``(width, height)`` of the screenshot the model was sent; required for ``resized``;
            for ``smart`` it is the image before smart-resize (default: the screen size).
        factor: Smart-resize rounding factor.
        min_pixels: Smart-resize lower area bound.
        max_pixels: Smart-resize upper area bound.
        rounding: ``round`` to the nearest pixel, or ``trunc`` (see the module docs).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    screen: tuple[int, int] = (1920, 1080)
    mode: CoordMode = "abs"
    image: tuple[int, int] | None = None
    factor: int = Field(default=IMAGE_FACTOR, ge=1)
    min_pixels: int = Field(default=MIN_PIXELS, ge=1)
    max_pixels: int = Field(default=MAX_PIXELS, ge=1)
    rounding: Rounding = "round"

    @model_validator(mode="after")
    def _check(self) -> CoordinateSpace:
        if min(self.screen) <= 0:
            raise ValueError(f"screen size must be positive, got {self.screen[0]}x{self.screen[1]}")
        if self.image is not None and min(self.image) <= 0:
            raise ValueError(f"image size must be positive, got {self.image[0]}x{self.image[1]}")
        if self.mode == "resized" and self.image is None:
            raise ValueError("mode 'resized' needs the image size the model saw")
        if self.mode == "smart":
            width, height = self.image or self.screen
            smart_resize(height, width, self.factor, self.min_pixels, self.max_pixels)
        return self

    @property
    def model_size(self) -> tuple[float, float]:
        """Width and height of the model's frame, in the model's units.

        Examples:
            >>> CoordinateSpace(screen=(1920, 1080), mode="resized", image=(1280, 720)).model_size
            (1280, 720)
            >>> CoordinateSpace(mode="norm").model_size
            (1, 1)
        """
        if self.mode == "abs":
            return self.screen
        if self.mode == "rel1000":
            return (1000, 1000)
        if self.mode == "rel999":
            return (999, 999)
        if self.mode == "norm":
            return (1, 1)
        width, height = self.image or self.screen
        if self.mode == "resized":
            return (width, height)
        h_bar, w_bar = smart_resize(height, width, self.factor, self.min_pixels, self.max_pixels)
        return (w_bar, h_bar)

    @property
    def scale(self) -> tuple[float, float]:
        """Screen pixels per model unit on each axis."""
        mw, mh = self.model_size
        return (self.screen[0] / mw, self.screen[1] / mh)

    @property
    def round_trip_error(self) -> int:
        """The most a screen point can move, in pixels, through :meth:`from_screen` then :meth:`to_screen`.

        Model units coarser than a pixel cannot hold every pixel: a round trip is exact when a unit is at
        most one pixel, else within half a unit plus half a pixel.

        Examples:
            >>> CoordinateSpace(mode="smart").round_trip_error
            0
            >>> CoordinateSpace(mode="rel1000").round_trip_error
            1
            >>> CoordinateSpace(screen=(3840, 2160), mode="rel1000").round_trip_error
            2
        """
        if self.mode == "norm":
            return 0
        worst = max(self.scale)
        if self.rounding == "trunc":  # truncated points are ceil(unit) apart at most: half that, down
            return 0 if worst <= 1 else math.ceil(worst) // 2
        return 0 if worst < 1 else math.floor(worst / 2 + 0.5)

    def to_screen(self, x: float, y: float) -> tuple[int, int]:
        """Turn a model point into screen pixels, clamped to the screen (models overshoot edges)."""
        width, height = self.screen
        if self.rounding == "trunc":
            px, py = self._truncated(x, y)
            return (_clamp(px, width - 1), _clamp(py, height - 1))
        sx, sy = self.scale
        return (_clamp(round(x * sx), width - 1), _clamp(round(y * sy), height - 1))

    def delta_to_screen(self, dx: float, dy: float) -> tuple[int, int]:
        """Turn a model offset (``moveRel``, ``dragRel``) into a screen pixel offset."""
        sx, sy = self.scale
        return (round(dx * sx), round(dy * sy))

    def from_screen(self, x: int, y: int) -> tuple[int, int] | tuple[float, float]:
        """Turn a screen point into the model's numbers: integers, or floats in ``norm`` mode.

        Examples:
            >>> CoordinateSpace(mode="norm").from_screen(960, 270)
            (0.5, 0.25)
        """
        sx, sy = self.scale
        if self.mode == "norm":
            return (round(x / sx, NORM_DECIMALS), round(y / sy, NORM_DECIMALS))
        if self.rounding == "trunc":
            return (self._truncating_unit(x, sx, 0), self._truncating_unit(y, sy, 1))
        return (round(x / sx), round(y / sy))

    def _truncated(self, x: float, y: float) -> tuple[int, int]:
        """A model point truncated to pixels as OSWorld's readers compute it, not clamped."""
        width, height = self.screen
        mw, mh = self.model_size
        if self.mode == "rel999":  # the order of OSWorld's Qwen3-VL agent: x * (W / 999)
            return int(x * (width / mw)), int(y * (height / mh))
        return int(x / mw * width), int(y / mh * height)  # OpenCUA's: x / w * W

    def _truncating_unit(self, value: int, scale: float, axis: int) -> int:
        """The model number a truncating reader turns back into ``value`` on ``axis``, or the nearest.

        Of the two numbers around ``value / scale``, the one that lands nearer: exact whenever a model
        unit is at most a pixel (rounding first could land a pixel short after the truncation).
        """
        low = math.floor(value / scale)

        def miss(m: int) -> int:  # unclamped: OSWorld's readers do not clamp
            return abs(self._truncated(m, m)[axis] - value)

        return min((low, low + 1), key=miss)


def _clamp(value: int, high: int) -> int:
    return max(0, min(value, high))


MAX_COORDINATE = 100_000
"""Largest screen coordinate a parser accepts; anything beyond is a broken reply, not a screen."""


def screen_point(space: CoordinateSpace | None, x: float, y: float) -> tuple[int, int]:
    """Turn a model point into screen pixels; with no ``space`` the numbers already are pixels.

    Raises:
        ValueError: If a number is not finite or lies beyond :data:`MAX_COORDINATE`.

    Examples:
        >>> screen_point(None, 10.6, 20)
        (11, 20)
        >>> screen_point(CoordinateSpace(mode="norm"), 0.5, 0.5)
        (960, 540)
    """
    for value in (x, y):
        if not math.isfinite(value) or abs(value) > MAX_COORDINATE:
            raise ValueError(f"coordinate {value!r} is not a usable number")
    if space is None:
        return (round(x), round(y))
    return space.to_screen(x, y)


def model_point(space: CoordinateSpace | None, x: int, y: int) -> tuple[int, int] | tuple[float, float]:
    """Turn a screen point into the numbers a model in ``space`` writes (the inverse of :func:`screen_point`).

    Examples:
        >>> model_point(CoordinateSpace(mode="rel1000"), 960, 540)
        (500, 500)
    """
    if space is None:
        return (x, y)
    return space.from_screen(x, y)
