"""Screen frames: grabbed once with mss, the cursor drawn in, encoded once as PNG or JPEG.

mss draws the cursor from the XFixes cursor image; where XFixes is missing, an arrow is drawn at the
pointer position instead, so a screenshot always shows where the pointer is. mss objects are per thread
(the HTTP server grabs from its worker threads).
"""

from __future__ import annotations

import io
import struct
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import mss
import numpy as np
from PIL import Image, ImageDraw

try:  # libjpeg-turbo with SIMD, bundled in the wheel: encodes BGRX pixels as they come from the screen
    import simplejpeg
except ImportError:  # pragma: no cover - a guest image built without it falls back to Pillow
    simplejpeg = None

ImageFormat = Literal["png", "jpeg"]

# zlib level 1 after PNG's "sub" filter: a 1920x1080 photo-like desktop deflates in a third of the time
# Pillow's PNG encoder takes at its fastest level (which filters each row adaptively), within 10% of its
# size; flat window areas filter to zeros, which level 1 deflates fastest.
_PNG_LEVEL = 1
_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_ARROW = [(0, 0), (0, 17), (4, 13), (7, 20), (10, 19), (7, 12), (12, 12)]


@dataclass(frozen=True)
class Frame:
    """One grabbed screen: raw BGRA pixels and their size."""

    width: int
    height: int
    bgra: bytes | bytearray

    def image(self) -> Image.Image:
        """The frame as an RGB Pillow image (one pixel conversion)."""
        return Image.frombuffer("RGB", (self.width, self.height), self.bgra, "raw", "BGRX", 0, 1)


def encode(
    frame: Frame, fmt: ImageFormat = "png", *, quality: int = 80, max_width: int | None = None
) -> bytes:
    r"""Encode ``frame`` as PNG or JPEG, scaled down to ``max_width`` (keeping the aspect) when wider.

    Examples:
        >>> frame = Frame(4, 2, bytes([0, 0, 255, 0]) * 8)
        >>> encode(frame)[:8]
        b'\x89PNG\r\n\x1a\n'
        >>> Image.open(io.BytesIO(encode(frame, "jpeg", max_width=2))).size
        (2, 1)
    """
    if max_width is not None and 0 < max_width < frame.width:
        height = max(1, round(frame.height * max_width / frame.width))
        # Scale the BGRX pixels in place (no full-size conversion), then swap channels on the small image.
        # BOX averages the source area of each pixel: sharp text, ~35% faster than BILINEAR here, but
        # still the most costly part of a JPEG (~20 ms for 1920x1080 to 1280 wide; the encoding ~4 ms).
        raw = Image.frombuffer("RGBX", (frame.width, frame.height), frame.bgra, "raw", "RGBX", 0, 1)
        small = raw.resize((max_width, height), Image.Resampling.BOX)
        if fmt == "jpeg" and simplejpeg is not None:
            return _jpeg_bgrx(np.asarray(small), quality)
        blue, green, red, _ = small.split()
        image: Image.Image | None = Image.merge("RGB", (red, green, blue))
    else:
        image = None
    if fmt == "png" and image is None:
        return encode_png(frame)
    if image is None:
        if simplejpeg is not None:
            pixels = np.frombuffer(frame.bgra, np.uint8).reshape(frame.height, frame.width, 4)
            return _jpeg_bgrx(pixels, quality)
        image = frame.image()
    out = io.BytesIO()
    if fmt == "png":
        image.save(out, "PNG", compress_level=_PNG_LEVEL)
    else:
        image.save(out, "JPEG", quality=quality)
    return out.getvalue()


def _jpeg_bgrx(pixels: np.ndarray, quality: int) -> bytes:
    """A JPEG of BGRX pixels (height x width x 4) with Pillow's defaults (4:2:0 chroma), by libjpeg-turbo.

    A full 1920x1080 screen takes ~5 ms, a fifth of Pillow's swap, scale and encode to 1280 wide.
    """
    return bytes(simplejpeg.encode_jpeg(pixels, quality=quality, colorspace="BGRX", colorsubsampling="420"))


def encode_png(frame: Frame) -> bytes:
    r"""The frame as an 8-bit RGB PNG, lossless: every row "sub"-filtered, deflated at zlib level 1.

    Pillow swaps BGRA to RGB (its fastest path); one numpy subtraction over whole rows filters them.

    Examples:
        >>> png = encode_png(Frame(2, 1, bytes([0, 0, 255, 0, 0, 255, 0, 0])))  # red, green (BGRA)
        >>> image = Image.open(io.BytesIO(png))
        >>> png[:8], image.getpixel((0, 0)), image.getpixel((1, 0))
        (b'\x89PNG\r\n\x1a\n', (255, 0, 0), (0, 255, 0))
    """
    width, height = frame.width, frame.height
    rgb = np.frombuffer(frame.image().tobytes(), np.uint8).reshape(height, 3 * width)
    rows = np.empty((height, 1 + 3 * width), np.uint8)
    rows[:, 0] = 1  # filter type 1, "sub": each byte minus the same byte of the pixel to its left
    rows[:, 1:4] = rgb[:, :3]
    np.subtract(rgb[:, 3:], rgb[:, :-3], out=rows[:, 4:])
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8 bits, RGB, deflate, no interlace
    data = zlib.compress(rows.data, _PNG_LEVEL)
    return b"".join((_SIGNATURE, _chunk(b"IHDR", header), _chunk(b"IDAT", data), _chunk(b"IEND", b"")))


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))


class Screen:
    """Grabs frames from one X display.

    Args:
        display_name: The X display, e.g. ``":1"``.
    """

    def __init__(self, display_name: str) -> None:
        self._display_name = display_name
        self._local = threading.local()
        # Let Pillow reuse freed image blocks: fresh 8 MB buffers per frame cost more in page faults
        # than the encoding itself.
        core = _imaging_core()
        core.set_blocks_max(max(core.get_blocks_max(), 32))
        with self._grabber(cursor=False) as probe:
            # Asking mss for its monitors queries RandR (~7 ms); the screen of an X display keeps its size.
            self._monitor = dict(probe.monitors[0])
        self.size: tuple[int, int] = (int(self._monitor["width"]), int(self._monitor["height"]))

    def _grabber(self, *, cursor: bool) -> Any:
        return mss.MSS(display=self._display_name, with_cursor=cursor)

    def _thread_grabber(self, cursor: bool) -> Any:
        key = "cursor" if cursor else "plain"
        grabber = getattr(self._local, key, None)
        if grabber is None:
            grabber = self._grabber(cursor=cursor)
            setattr(self._local, key, grabber)
        return grabber

    def grab(self, *, cursor: bool = True) -> Frame:
        """Grab the whole screen, with the mouse cursor drawn in when ``cursor``."""
        grabber = self._thread_grabber(cursor)
        shot = grabber.grab(self._monitor)
        # mss hands over a fresh buffer per grab; keep it rather than copy 8 MB again.
        frame = Frame(int(shot.width), int(shot.height), shot.raw)
        if cursor and not grabber.with_cursor:
            frame = _draw_arrow(frame, self._pointer())
        return frame

    def _pointer(self) -> tuple[int, int]:
        from Xlib import display as xdisplay

        connection = getattr(self._local, "xlib", None)
        if connection is None:
            connection = xdisplay.Display(self._display_name)
            self._local.xlib = connection
        reply = connection.screen().root.query_pointer()
        return int(reply.root_x), int(reply.root_y)


def _imaging_core() -> Any:
    from PIL import _imaging

    return _imaging


def _draw_arrow(frame: Frame, at: tuple[int, int]) -> Frame:
    image = Image.frombuffer("RGBA", (frame.width, frame.height), frame.bgra, "raw", "RGBA", 0, 1).copy()
    x, y = at
    # Drawing on the BGRA buffer as if it were RGBA: black and white are the same in both orders.
    ImageDraw.Draw(image).polygon([(x + dx, y + dy) for dx, dy in _ARROW], fill="black", outline="white")
    return Frame(frame.width, frame.height, image.tobytes())


class EncodedCache:
    """The last encoded frame per encoding: a screen that has not changed is not encoded again.

    Comparing two raw frames costs a memcmp (about a millisecond at 1920x1080); encoding a PNG costs
    tens. Frames are compared whole, cursor included, so any change gives a fresh encoding.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: dict[tuple[object, ...], tuple[bytes | bytearray, bytes]] = {}

    def encode(self, frame: Frame, key: tuple[object, ...], make: Callable[[Frame], bytes]) -> bytes:
        """``make(frame)``, or the bytes made for the same pixels under ``key`` last time."""
        with self._lock:
            last = self._last.get(key)
        if last is not None and last[0] == frame.bgra:
            return last[1]
        data = make(frame)
        with self._lock:
            self._last[key] = (frame.bgra, data)
        return data
