"""Differential tests: compare_audios (MFCCs aligned by dynamic time warping) against OSWorld's."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest

from tests.parity.guest_env import both, require_libraries
from tests.parity.reference import Reference

MODULE = "vlc"
RATE = 22050


@pytest.fixture(scope="module")
def ref(reference: Reference, tmp_path_factory: pytest.TempPathFactory) -> Reference:
    require_libraries(reference, "librosa", "fastdtw")
    # The first librosa.load in a worker the session has used for other tests can fail (OSWorld's
    # function then scores 0, its exception swallowed); one load first, so the cases compare the metric.
    warm = _wav(tmp_path_factory.mktemp("warm") / "warm.wav", "a440", 0.1)
    reference.exec(f"import librosa\ntry:\n    librosa.load({warm!r})\nexcept Exception:\n    pass\n")
    return reference


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
