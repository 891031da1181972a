"""compare_image_text against OSWorld's, the OCR engine aside, and our Tesseract reading on real pictures.

OSWorld reads the picture with EasyOCR (a model downloaded at run time), we with Tesseract: the
differential cases give both sides the same OCR answer (OSWorld's ``easyocr.Reader`` replaced in the
reference worker, our ``ocr_text`` in this process) and compare everything around it; the Tesseract cases
read rendered pictures for real.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from osw_studio.core.errors import EvaluationError
from osw_studio.evaluation.metrics import ocr
from osw_studio.evaluation.registry import METRICS
from tests.parity.guest_env import agree, stub_missing
from tests.parity.reference import Reference

MODULE = "docs"

FAKE_EASYOCR = r"""
import types

class _Reader:
    def __init__(self, languages, *args, **kwargs):
        assert languages == ["en"], languages

    def readtext(self, path):
        if path not in TEXTS:
            raise ValueError(f"cannot read {path}")
        return [([[0, 0], [1, 0], [1, 1], [0, 1]], piece, 0.9) for piece in TEXTS[path]]

m0.easyocr = types.SimpleNamespace(Reader=_Reader)
result = None
"""


@pytest.fixture(scope="module")
def ref(reference: Reference) -> Reference:
    stub_missing(reference)
    return reference


def _same_ocr(ref: Reference, monkeypatch: pytest.MonkeyPatch, texts: dict[str, list[str]]) -> None:
    """Both sides read ``texts[path]`` (the pieces of text found) in the picture at ``path``."""
    ref.exec(f"TEXTS = {texts!r}\n" + FAKE_EASYOCR, modules=("desktop_env.evaluators.metrics.docs",))

    def read(path: str) -> str:
        if path not in texts:
            raise ValueError(f"cannot read {path}")
        return " ".join(texts[path])

    monkeypatch.setattr(ocr, "ocr_text", read)


@pytest.mark.parametrize(
    "pieces",
    [
        ["user@host:~$ ls", "Desktop Documents Music"],
        ["user@host:~$ 1s", "Desktop"],
        ["Desktop", "Documents"],
        ["l", "s"],
        [],
    ],
)
@pytest.mark.parametrize(
    "rule",
    [{"type": "text", "text": "ls"}, {"type": "text", "text": "1s"}, {"type": "regex", "text": "ls"}, {}],
)
def test_compare_image_text(
    ref: Reference, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, pieces: list[str], rule: dict[str, str]
) -> None:
    picture = tmp_path / "ls.png"
    Image.new("RGB", (8, 8), "white").save(picture)
    _same_ocr(ref, monkeypatch, {str(picture): pieces})
    agree(ref, MODULE, "compare_image_text", str(picture), rule)


def test_compare_image_text_without_a_readable_picture(
    ref: Reference, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "broken.png").write_text("not a picture")
    _same_ocr(ref, monkeypatch, {})
    rule = {"type": "text", "text": "ls"}
    for path in (None, "", str(tmp_path / "absent.png"), str(tmp_path / "broken.png")):
        agree(ref, MODULE, "compare_image_text", path, rule)


MONOSPACE = Path("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf")
"""A terminal's kind of font (fonts-dejavu-core); in a proportional one Tesseract reads ``ls`` as ``Is``."""
needs_tesseract = pytest.mark.skipif(
    shutil.which("tesseract") is None or not MONOSPACE.is_file(),
    reason="tesseract-ocr or the DejaVu Sans Mono font is not installed",
)


def _terminal(path: Path, lines: list[str]) -> str:
    """A terminal's screenshot: light 16-pixel monospace text on a dark background."""
    font = ImageFont.truetype(str(MONOSPACE), 16)
    image = Image.new("RGB", (500, 20 + 30 * len(lines)), (48, 10, 36))
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(lines):
        draw.text((10, 10 + 30 * i), line, fill=(235, 235, 235), font=font)
    image.save(path)
    return str(path)


@needs_tesseract
def test_tesseract_reads_the_terminal_screenshot(tmp_path: Path) -> None:
    path = _terminal(tmp_path / "ls.png", ["user@host:~$ ls", "Desktop  Documents  Music"])
    text = ocr.ocr_text(path)
    assert "Documents" in text, text
    # The task accepts "ls" or "1s" (the two readings of the command an OCR engine gives).
    scores = [
        METRICS.get("compare_image_text")(path, {"type": "text", "text": t}).score for t in ("ls", "1s")
    ]
    assert max(scores) == 1.0, text
    assert METRICS.get("compare_image_text")(path, {"type": "text", "text": "Pictures"}).score == 0.0


@needs_tesseract
def test_tesseract_on_a_file_that_is_no_picture_scores_0(tmp_path: Path) -> None:
    (tmp_path / "ls.png").write_text("user@host:~$ ls")
    verdict = METRICS.get("compare_image_text")(str(tmp_path / "ls.png"), {"type": "text", "text": "ls"})
    assert verdict.score == 0.0 and "cannot be read" in verdict.reason


def test_without_tesseract_the_metric_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    picture = tmp_path / "ls.png"
    Image.new("RGB", (8, 8), "white").save(picture)
    monkeypatch.setattr(ocr.shutil, "which", lambda name: None)
    with pytest.raises(EvaluationError, match="tesseract-ocr"):
        METRICS.get("compare_image_text")(str(picture), {"type": "text", "text": "ls"})
