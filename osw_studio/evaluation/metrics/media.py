"""Media metrics: ``compare_videos``, whether two videos show the same frames.

The frames are decoded with OpenCV (``opencv-python-headless``, FFmpeg in its wheel) and compared by
perceptual hash (``imagehash``'s pHash), as OSWorld's function of that name does.
"""

from __future__ import annotations

from typing import Any

from osw_studio.evaluation.registry import Verdict, metric

MAX_FRAMES = 100
"""Frames compared, from the start, unless the task says otherwise."""
THRESHOLD = 5
"""A frame pair differs when their hashes differ in more than this many bits, and the videos differ when
more than this many pairs do (OSWorld's one bound for both)."""


@metric("compare_videos")
def compare_videos(
    result: str | None,
    expected: str | None,
    max_frames_to_check: int = MAX_FRAMES,
    threshold: int = THRESHOLD,
) -> Verdict:
    """1 when the first ``max_frames_to_check`` frames of both videos match, frame by frame.

    Two videos that end at different frames score 0, two that end together (or two that cannot be read,
    as OpenCV reads a missing file: no frames) 1; more than ``threshold`` frames whose perceptual hashes
    differ by more than ``threshold`` bits score 0.
    """
    import cv2
    import imagehash
    from PIL import Image

    captures: list[Any] = [
        cv2.VideoCapture(str(path)) if path else cv2.VideoCapture() for path in (result, expected)
    ]
    try:
        checked = mismatches = 0
        while checked < max_frames_to_check:
            (ok1, frame1), (ok2, frame2) = (capture.read() for capture in captures)
            if not ok1 or not ok2:
                if ok1 == ok2:
                    return Verdict(1.0, f"both videos end after {checked} frame(s), alike")
                return Verdict(0.0, f"one video ends after {checked} frame(s), the other does not")
            hashes = [
                imagehash.phash(Image.fromarray(cv2.cvtColor(f, cv2.COLOR_BGR2RGB))) for f in (frame1, frame2)
            ]
            checked += 1
            if hashes[0] - hashes[1] > threshold:
                mismatches += 1
                if mismatches > threshold:
                    return Verdict(0.0, f"{mismatches} of the first {checked} frames differ")
        return Verdict(1.0, f"the first {checked} frames are alike")
    finally:
        for capture in captures:
            capture.release()
