"""Differential tests: compare_audios (MFCCs aligned by dynamic time warping) against OSWorld's."""

from __future__ import annotations

import wave
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.parity.guest_env import both, require_libraries
from tests.parity.reference import Reference, start_reference

MODULE = "vlc"
RATE = 22050


@pytest.fixture(scope="module")
def ref() -> Iterator[Reference]:
    """A worker of this file's own: in the session's shared one, the first librosa.load could fail after
    other files' tests (OSWorld's function then swallows the error and scores 0)."""
    worker = start_reference()
    try:
        require_libraries(worker, "librosa", "fastdtw")
        yield worker
    finally:
        worker.close()


def _wav(path: Path, kind: str, seconds: float = 1.0) -> str:
    t = np.arange(int(RATE * seconds)) / RATE
    if kind == "a440":
        y = np.sin(2 * np.pi * 440 * t)
    elif kind == "a440-quiet":
        y = 0.3 * np.sin(2 * np.pi * 440 * t)
    elif kind == "e660":
        y = np.sin(2 * np.pi * 660 * t)
    elif kind == "chirp":
        y = np.sin(2 * np.pi * (200 + 800 * t) * t)
    elif kind == "noise":
        y = np.random.default_rng(7).uniform(-1, 1, t.shape)
    else:  # "empty"
        y = np.zeros(0)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(RATE)
        out.writeframes((y * 20000).astype("<i2").tobytes())
    return str(path)


def _agree(ref: Reference, *args: str | None) -> None:
    ours, theirs = both(ref, MODULE, "compare_audios", *args)
    if isinstance(ours, float) and isinstance(theirs, float):
        assert ours == pytest.approx(theirs, rel=1e-6, abs=1e-9), (ours, theirs)
    else:
        assert ours == theirs, (ours, theirs)


@pytest.mark.parametrize("kind", ["a440", "a440-quiet", "e660", "chirp", "noise", "empty"])
def test_compare_audios(ref: Reference, tmp_path: Path, kind: str) -> None:
    ours = _wav(tmp_path / "ours.wav", kind)
    _agree(ref, ours, _wav(tmp_path / "gold.wav", "a440"))
    _agree(ref, ours, _wav(tmp_path / "chirp.wav", "chirp", 1.5))
    _agree(ref, ours, _wav(tmp_path / "empty.wav", "empty"))


def test_compare_audios_without_a_readable_file(ref: Reference, tmp_path: Path) -> None:
    gold = _wav(tmp_path / "gold.wav", "a440")
    (tmp_path / "text.wav").write_text("not a recording")
    for result in (None, "", str(tmp_path / "absent.wav"), str(tmp_path / "text.wav")):
        _agree(ref, result, gold)
        _agree(ref, gold, result)
    _agree(ref, str(tmp_path / "text.wav"), str(tmp_path / "absent.wav"))
