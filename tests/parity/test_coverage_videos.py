"""Differential tests: compare_videos (frames by perceptual hash) against OSWorld's."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.parity.guest_env import agree, require_libraries
from tests.parity.reference import Reference

MODULE = "vlc"


@pytest.fixture(scope="module")
def ref(reference: Reference) -> Reference:
    require_libraries(reference, "cv2", "imagehash")
    return reference


def _frame(kind: str, i: int) -> np.ndarray:
    frame = np.full((64, 64, 3), 255, np.uint8)
    if kind == "square":  # a square moving right
        frame[20:44, 2 * i : 2 * i + 24] = 0
    elif kind == "stripes":
        frame[:, (np.arange(64) // 8 + i) % 2 == 0] = 0
    return frame


def _video(path: Path, kinds: list[str]) -> str:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 10, (64, 64))
    for i, kind in enumerate(kinds):
        writer.write(_frame(kind, i))
    writer.release()
    return str(path)


GOLD = ["square"] * 12


@pytest.mark.parametrize(
    "kinds",
    [
        GOLD,
        ["square"] * 11,
        ["square"] * 13,
        ["square"] * 7 + ["stripes"] * 5,
        ["square"] * 6 + ["stripes"] * 6,
        ["stripes"] * 12,
        [],
    ],
)
def test_compare_videos(ref: Reference, tmp_path: Path, kinds: list[str]) -> None:
    ours = _video(tmp_path / "ours.avi", kinds)
    gold = _video(tmp_path / "gold.avi", GOLD)
    agree(ref, MODULE, "compare_videos", ours, gold)
    agree(ref, MODULE, "compare_videos", ours, gold, 8)
    agree(ref, MODULE, "compare_videos", ours, gold, 100, 2)


def test_compare_videos_without_a_readable_video(ref: Reference, tmp_path: Path) -> None:
    gold = _video(tmp_path / "gold.avi", GOLD)
    (tmp_path / "text.avi").write_text("not a video")
    for result in (str(tmp_path / "absent.avi"), str(tmp_path / "text.avi")):
        agree(ref, MODULE, "compare_videos", result, gold)
        agree(ref, MODULE, "compare_videos", gold, result)
        agree(ref, MODULE, "compare_videos", result, result)
