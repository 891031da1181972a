"""The guest's own PNG encoder: lossless and readable by Pillow for any frame size and content."""

from __future__ import annotations

import io
import os
import zlib

import pytest
from PIL import Image

from osw_studio.guest.screen import Frame, encode, encode_png


@pytest.mark.parametrize(("width", "height"), [(1, 1), (1, 7), (5, 1), (13, 11), (640, 3)])
def test_png_holds_exactly_the_frames_pixels(width: int, height: int) -> None:
    bgra = bytearray(os.urandom(width * height * 4))
    bgra[: width * 4] = bytes([255, 255, 255, 0]) * width  # a flat row too: the filter's zeros
    png = encode_png(Frame(width, height, bgra))
    image = Image.open(io.BytesIO(png))
    assert (image.mode, image.size) == ("RGB", (width, height))
    expected = Image.frombuffer("RGB", (width, height), bytes(bgra), "raw", "BGRX", 0, 1).tobytes()
    assert image.tobytes() == expected


def test_png_chunks_are_well_formed() -> None:
    png = encode(Frame(4, 3, os.urandom(48)))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    at, kinds = 8, []
    while at < len(png):
        size = int.from_bytes(png[at : at + 4], "big")
        kind, data = png[at + 4 : at + 8], png[at + 8 : at + 8 + size]
        crc = int.from_bytes(png[at + 8 + size : at + 12 + size], "big")
        assert crc == zlib.crc32(kind + data), kind
        kinds.append(kind)
        at += 12 + size
    assert kinds == [b"IHDR", b"IDAT", b"IEND"]


def quadrants(width: int, height: int) -> Frame:
    """A frame of four flat quadrants: red, green / blue, white (BGRA bytes, as the screen gives them)."""
    rows = []
    for y in range(height):
        left, right = ((0, 0, 255, 0), (0, 255, 0, 0)) if y < height // 2 else ((255, 0, 0, 0), (255,) * 4)
        rows.append(bytes(left) * (width // 2) + bytes(right) * (width - width // 2))
    return Frame(width, height, b"".join(rows))


@pytest.mark.parametrize("max_width", [None, 1920, 1280, 640])
def test_jpeg_keeps_colours_and_scales_to_max_width(max_width: int | None) -> None:
    jpeg = encode(quadrants(1920, 1080), "jpeg", quality=70, max_width=max_width)
    image = Image.open(io.BytesIO(jpeg)).convert("RGB")
    width = max_width or 1920
    assert image.size == (width, round(1080 * width / 1920))
    w, h = image.size
    for (x, y), colour in {
        (w // 4, h // 4): (255, 0, 0),
        (3 * w // 4, h // 4): (0, 255, 0),
        (w // 4, 3 * h // 4): (0, 0, 255),
        (3 * w // 4, 3 * h // 4): (255, 255, 255),
    }.items():
        got = image.getpixel((x, y))
        assert isinstance(got, tuple)
        assert all(abs(a - b) <= 8 for a, b in zip(got, colour, strict=True)), ((x, y), got, colour)
