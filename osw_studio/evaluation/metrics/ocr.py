"""OCR metric: ``compare_image_text``, whether a picture shows a text.

OSWorld reads the picture with EasyOCR, whose recognition model is downloaded on first use; that cannot
be shipped, so the text is read with Tesseract (Debian's ``tesseract-ocr`` with its English data, through
``pytesseract``), which installs with its data. The two engines can read the same picture differently:
EasyOCR joins the boxes of text it finds with single spaces, Tesseract's lines are joined the same way
here, but where a glyph is ambiguous (``l`` and ``1``, ``O`` and ``0``) or the text is small or
low-contrast one engine may read a text the other misses. Everything around the OCR call scores as
OSWorld's function does.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from osw_studio.core.errors import EvaluationError
from osw_studio.evaluation.registry import Verdict, metric

ENGINE = "tesseract"
"""The program the text is read with (Debian's tesseract-ocr)."""
UPSCALE = 2
"""The picture is enlarged this many times before Tesseract reads it."""


def ocr_text(path: str) -> str:
    """The text Tesseract reads in the picture at ``path``: its lines, stripped, joined by single spaces.

    Raises:
        EvaluationError: Tesseract is not installed.
        OSError: the picture cannot be read.
    """
    if shutil.which(ENGINE) is None:
        raise EvaluationError(
            "compare_image_text needs the Tesseract OCR program, which is not installed",
            where=path,
            hint="install the tesseract-ocr package (with tesseract-ocr-eng)",
        )
    import pytesseract  # type: ignore[import-untyped]
    from PIL import Image

    with Image.open(path) as image:
        image.load()
        picture = image.convert("RGB")
    # Screen text is small for Tesseract (a terminal's 14-16 pixel font): read it at twice the size.
    picture = picture.resize((picture.width * UPSCALE, picture.height * UPSCALE), Image.Resampling.LANCZOS)
    text: str = pytesseract.image_to_string(picture, lang="eng")
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


@metric("compare_image_text")
def compare_image_text(result: str | None, rule: dict[str, Any]) -> Verdict:
    """1 when the text OCR reads in the picture holds ``rule["text"]`` (``rule["type"]`` is ``text``).

    No picture, a missing one, one that cannot be read and a rule of another type score 0, as in OSWorld.
    """
    if not result:
        return Verdict(0.0, "no picture")
    if not Path(result).exists():
        return Verdict(0.0, "the picture does not exist")
    try:
        text = ocr_text(result)
    except EvaluationError:
        raise
    except Exception as exc:  # a picture that cannot be read scores 0, as in OSWorld
        return Verdict(0.0, f"the picture cannot be read: {type(exc).__name__}")
    if not isinstance(rule, dict) or rule.get("type") != "text" or "text" not in rule:
        return Verdict(0.0, "the rule is not a text rule")
    target = str(rule["text"])
    if target in text:
        return Verdict(1.0, f"{target!r} is in the text read ({ENGINE})")
    return Verdict(0.0, f"{target!r} is not in the text read ({ENGINE}): {text[:200]!r}")
