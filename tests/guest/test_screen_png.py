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
