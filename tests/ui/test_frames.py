"""The viewer's frame pipeline: JPEG decoding to the viewer's size, the decode queue, what was painted."""

from __future__ import annotations

import asyncio
import io

import numpy as np
import pytest
import simplejpeg
from PIL import Image
from PySide6.QtCore import QSize
from PySide6.QtGui import QColor, QImage
from pytestqt.qtbot import QtBot

from osw_studio.ui.frames import FULL_WIDTH, MAX_PENDING, REMOTE_WIDTH, FrameStream, decode_frame
from osw_studio.ui.viewer import ScreenCanvas
from tests.ui.waiting import until


def jpeg(width: int = 1920, height: int = 1080, shade: int = 0) -> bytes:
    """Red left half, blue right half (``shade`` added to green tells frames apart)."""
    pixels = np.zeros((height, width, 3), np.uint8)
    pixels[:, : width // 2] = (255, shade, 0)
    pixels[:, width // 2 :] = (0, shade, 255)
    return bytes(simplejpeg.encode_jpeg(pixels, quality=90, colorspace="RGB"))


def close(colour: QColor, rgb: tuple[int, int, int]) -> bool:
    return all(
        abs(a - b) <= 8 for a, b in zip((colour.red(), colour.green(), colour.blue()), rgb, strict=True)
    )


@pytest.mark.parametrize(
    ("fit", "size"),
    [
        (None, (1920, 1080)),
        (QSize(1000, 563), (1920, 1080)),  # a half (960) would be smaller than the viewer: full size
        (QSize(900, 500), (960, 540)),
        (QSize(400, 225), (480, 270)),
        (QSize(100, 50), (240, 135)),  # an eighth at most
    ],
)
def test_a_jpeg_is_decoded_no_smaller_than_the_viewer(fit: QSize | None, size: tuple[int, int]) -> None:
    image = decode_frame(jpeg(), fit)
    assert (image.width(), image.height()) == size
    assert image.format() == QImage.Format.Format_RGB32
    w, h = size
    assert close(image.pixelColor(w // 4, h // 2), (255, 0, 0)), image.pixelColor(w // 4, h // 2).name()
    assert close(image.pixelColor(3 * w // 4, h // 2), (0, 0, 255))
    assert image.pixelColor(1, 1).alpha() == 255


def test_what_is_not_a_jpeg_is_decoded_by_qt_or_null() -> None:
    out = io.BytesIO()
    Image.new("RGB", (64, 32), (0, 200, 0)).save(out, "PNG")
    image = decode_frame(out.getvalue(), QSize(32, 16))
    assert (image.width(), image.height()) == (32, 16)
    assert close(image.pixelColor(5, 5), (0, 200, 0))
    assert decode_frame(b"\xff\xd8 not a jpeg", None).isNull()


async def test_frames_arriving_together_are_all_decoded_in_order(qtbot: QtBot) -> None:
    stream = FrameStream("http://127.0.0.1:9", None, fit=lambda: QSize(480, 270))
    shown: list[tuple[int, int]] = []
    stream.frame_ready.connect(
        lambda image: shown.append((stream.frame_number, image.pixelColor(5, 5).green()))
    )
    decoder = asyncio.ensure_future(stream._decode_loop())
    try:
        for shade in (0, 100):  # two frames of one network read: the second must not replace the first
            stream._offer(jpeg(shade=shade))
        await until(lambda: stream.decoded == 2)
        assert [n for n, _ in shown] == [1, 2]
        assert shown[0][1] < 20 and abs(shown[1][1] - 100) <= 8
        # far behind: the oldest waiting frames are dropped, the newest are kept
        for shade in range(MAX_PENDING + 3):
            stream._offer(jpeg(shade=shade * 40))
        await until(lambda: stream.decoded == 2 + MAX_PENDING)
        await asyncio.sleep(0.1)
        assert stream.decoded == 2 + MAX_PENDING and stream.dropped == 3
        assert [n for n, _ in shown][-MAX_PENDING:] == list(
            range(stream.received - MAX_PENDING + 1, stream.received + 1)
        )
    finally:
        decoder.cancel()


def test_a_local_guest_is_asked_for_full_size_frames_a_remote_one_for_smaller() -> None:
    assert FrameStream("http://127.0.0.1:5000", None)._params["max_width"] == FULL_WIDTH
    assert FrameStream("http://localhost:5000", None)._params["max_width"] == FULL_WIDTH
    assert FrameStream("http://10.0.0.7:5000", None)._params["max_width"] == REMOTE_WIDTH
    assert FrameStream("http://10.0.0.7:5000", None, max_width=800)._params["max_width"] == 800


def test_the_canvas_records_each_live_frame_it_painted_once(qtbot: QtBot) -> None:
    canvas = ScreenCanvas()
    qtbot.addWidget(canvas)
    canvas.resize(640, 360)
    with qtbot.waitExposed(canvas):
        canvas.show()
    frame = decode_frame(jpeg(), canvas.fit_size())
    for number in (1, 2):
        canvas.set_frame(frame, number)
        canvas.repaint()
    canvas.set_frame(frame, 3)
    canvas.set_frame(frame, 4)  # replaced before it was painted: 3 was never shown
    canvas.repaint()
    canvas.repaint()  # painting again is not showing another frame
    canvas.set_frame(frame)  # a still: not a frame of the stream
    canvas.repaint()
    assert list(canvas.painted_numbers) == [1, 2, 4]
    shown = canvas.grab().toImage()
    r = canvas.screen_rect()
    assert close(shown.pixelColor(r.x + r.width // 4, r.y + r.height // 2), (255, 0, 0))
