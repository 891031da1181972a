"""Differential tests: compare_pdf_images (the PDFs' pictures by perceptual hash) against OSWorld's."""

from __future__ import annotations

import io
from pathlib import Path

import pymupdf
import pytest
from PIL import Image, ImageDraw

from tests.parity.guest_env import agree, both, require_libraries
from tests.parity.reference import Reference

MODULE = "chrome"


@pytest.fixture(scope="module")
def ref(reference: Reference) -> Reference:
    require_libraries(reference, "imagehash")
    return reference


def _picture(kind: str) -> bytes:
    image = Image.new("RGB", (64, 64), "white")
    draw = ImageDraw.Draw(image)
    if kind == "cross":
        draw.line((0, 0, 63, 63), fill="black", width=6)
        draw.line((0, 63, 63, 0), fill="black", width=6)
    elif kind == "bars":
        for x in range(0, 64, 16):
            draw.rectangle((x, 0, x + 7, 63), fill="black")
    elif kind == "cross-tinted":  # the cross, a little lighter: the same picture to a perceptual hash
        draw.line((0, 0, 63, 63), fill=(30, 30, 30), width=6)
        draw.line((0, 63, 63, 0), fill=(30, 30, 30), width=6)
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def _pdf(path: Path, pages: list[list[str]]) -> str:
    document = pymupdf.open()
    for pictures in pages:
        page = document.new_page()
        for i, kind in enumerate(pictures):
            page.insert_image(pymupdf.Rect(20 + 80 * i, 20, 90 + 80 * i, 90), stream=_picture(kind))
    document.save(path)
    document.close()
    return str(path)


GOLD = [["cross"], ["bars", "cross"]]


@pytest.mark.parametrize(
    "pages",
    [
        GOLD,
        [["cross"], ["bars", "cross-tinted"]],
        [["cross"], ["cross", "bars"]],
        [["bars"], ["bars", "cross"]],
        [["cross"], ["bars"]],
        [["cross", "bars", "cross"]],
        [[]],
    ],
)
def test_compare_pdf_images(ref: Reference, tmp_path: Path, pages: list[list[str]]) -> None:
    ours = _pdf(tmp_path / "ours.pdf", pages)
    agree(ref, MODULE, "compare_pdf_images", ours, _pdf(tmp_path / "gold.pdf", GOLD))
    agree(ref, MODULE, "compare_pdf_images", ours, _pdf(tmp_path / "blank.pdf", [[]]))


def test_compare_pdf_images_without_a_readable_pdf(ref: Reference, tmp_path: Path) -> None:
    gold = _pdf(tmp_path / "gold.pdf", GOLD)
    (tmp_path / "text.pdf").write_text("not a PDF")
    for result in (None, "", str(tmp_path / "absent.pdf")):
        agree(ref, MODULE, "compare_pdf_images", result, gold)
        agree(ref, MODULE, "compare_pdf_images", gold, result)
    # Listed deviation: on a file PyMuPDF cannot open, OSWorld's metric means to score 0 but removes its
    # scratch folder twice and raises (FileNotFoundError); ours scores 0 with the reason.
    for args in ((str(tmp_path / "text.pdf"), gold), (gold, str(tmp_path / "text.pdf"))):
        assert both(ref, MODULE, "compare_pdf_images", *args) == (0.0, "raises")
