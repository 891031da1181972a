"""Media metrics: ``compare_videos`` and ``compare_audios``, each scoring as OSWorld's function of that name.

Video frames are decoded with OpenCV (``opencv-python-headless``, FFmpeg in its wheel) and compared by
perceptual hash (``imagehash``'s pHash). Sound is decoded and resampled with librosa (22 050 Hz, mono),
described by its MFCCs, aligned by dynamic time warping (``fastdtw``, cosine distance) and the mean
distance along the alignment turned into a similarity ``exp(-d)``.
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


def _load_audio(path: str) -> tuple[Any, int] | None:
    """The samples and rate librosa decodes from ``path`` (None: unreadable or without samples)."""
    import warnings

    import librosa

    try:
        with warnings.catch_warnings():  # librosa's deprecation notices must not turn a load into a failure
            warnings.simplefilter("ignore")
            samples, rate = librosa.load(path)
    except Exception:  # an empty or damaged file counts as no sound, as in OSWorld
        return None
    return None if samples.shape[0] == 0 else (samples, int(rate))


@metric("compare_audios")
def compare_audios(result: str | None, expected: str | None) -> Verdict:
    """How alike two recordings sound, from 0 to 1 (1: the same MFCC sequence).

    No path scores 0; two files without sound are alike (1), one without sound and one with score 0.
    """
    import librosa
    import numpy as np
    from fastdtw import fastdtw  # type: ignore[import-untyped]
    from scipy.spatial.distance import cosine  # type: ignore[import-untyped]

    if not result or not expected:
        return Verdict(0.0, "no recording to compare")
    ours, gold = _load_audio(result), _load_audio(expected)
    if ours is None and gold is None:
        return Verdict(1.0, "neither file holds sound")
    if ours is None or gold is None:
        return Verdict(0.0, "one file holds no sound (empty or unreadable), the other does")
    try:
        features = [
            librosa.util.normalize(librosa.feature.mfcc(y=y, sr=sr), axis=1) for y, sr in (ours, gold)
        ]
    except Exception as exc:  # as OSWorld: a recording MFCCs cannot be taken of scores 0
        return Verdict(0.0, f"the recordings' features cannot be computed: {type(exc).__name__}")
    distance, path = fastdtw(features[0].T, features[1].T, dist=cosine)
    mean = distance / len(path) if len(path) else np.inf
    score = float(np.exp(-mean))
    return Verdict(score, f"similarity {score:.3f} (mean MFCC distance {mean:.4f} along the alignment)")
