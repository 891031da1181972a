"""File-format metrics: PDFs, images, archives."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz

from osw_studio.evaluation.registry import MetricFunc, Verdict, metric


def pdf_text(path: str | None) -> str:
    """The text of every page of a PDF, stripped, as PyMuPDF extracts it (OSWorld's reading).

    No path reads as an empty document (PyMuPDF opens ``None`` as a new, empty PDF).
    """
    import pymupdf

    opener: Any = pymupdf.open  # untyped
    with opener(path) as document:
        return "".join(page.get_text() for page in document).strip()


@metric("compare_pdfs")
def compare_pdfs(result: str | list[str | None] | None, expected: str | list[str | None]) -> Verdict:
    """The mean fuzzy ratio of the PDFs' texts, pair by pair; a pair that cannot be read counts 0."""
    if isinstance(expected, list):
        results = result if isinstance(result, list) else [result]
        expecteds = expected
    else:
        results, expecteds = [result] if not isinstance(result, list) else result, [expected]
    if not expecteds:
        return Verdict(0.0, "no expected PDF")
    total, unreadable = 0.0, 0
    for a, b in zip(results, expecteds, strict=False):
        try:
            total += fuzz.ratio(pdf_text(a), pdf_text(b)) / 100.0
        except Exception:  # an unreadable pair adds nothing, as in OSWorld
            unreadable += 1
    score = total / len(expecteds)
    note = f" ({unreadable} pair(s) unreadable)" if unreadable else ""
    return Verdict(score, f"text similarity {score:.2%}{note}")


PHASH_THRESHOLD = 5
"""Two pictures match when their perceptual hashes differ in at most this many bits (OSWorld's bound)."""


def pdf_images(path: str) -> list[Any]:
    """The pictures embedded in a PDF, page by page, as PIL images (ones PIL cannot open are left out)."""
    import io

    import pymupdf
    from PIL import Image, UnidentifiedImageError

    opener: Any = pymupdf.open  # untyped
    images = []
    with opener(path) as document:
        for page in document:
            for info in page.get_images(full=True):
                data = document.extract_image(info[0])["image"]
                try:
                    images.append(Image.open(io.BytesIO(data)))
                except (UnidentifiedImageError, OSError, ValueError):
                    continue
    return images


@metric("compare_pdf_images")
def compare_pdf_images(result: str | None, expected: str | None) -> Verdict:
    """The share of the PDFs' pictures, in order, whose perceptual hashes (imagehash's pHash) are close.

    A different number of pictures scores 0; two PDFs without pictures match. A missing or unreadable
    file scores 0, as in OSWorld.
    """
    import imagehash

    if not result or not expected:
        return Verdict(0.0, "no PDF to compare")
    if not (Path(result).exists() and Path(expected).exists()):
        return Verdict(0.0, "a PDF does not exist")
    try:
        ours, gold = pdf_images(result), pdf_images(expected)
    except Exception as exc:  # an unreadable PDF scores 0, as in OSWorld
        return Verdict(0.0, f"the PDFs' pictures cannot be read: {type(exc).__name__}")
    if len(ours) != len(gold):
        return Verdict(0.0, f"{len(ours)} picture(s), expected {len(gold)}")
    if not gold:
        return Verdict(1.0, "neither PDF holds a picture")
    close = sum(
        imagehash.phash(a) - imagehash.phash(b) <= PHASH_THRESHOLD for a, b in zip(ours, gold, strict=True)
    )
    return Verdict(close / len(gold), f"{close} of {len(gold)} picture(s) alike")


def ssim(a: Any, b: Any) -> float:
    """Mean structural similarity of two equal-size 8-bit grey images (scikit-image's defaults).

    A 7x7 uniform window over the windows that fit, ``K1=0.01``, ``K2=0.03``, sample covariance.

    >>> import numpy as np
    >>> img = (np.arange(100).reshape(10, 10) * 2).astype("uint8")
    >>> round(ssim(img, img), 6)
    1.0
    """
    import numpy as np

    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    w = 7
    if x.shape != y.shape or min(x.shape) < w:
        raise ValueError(f"images must be the same size, at least {w}x{w}: {x.shape} vs {y.shape}")

    def mean(img: Any) -> Any:
        c = np.pad(img.cumsum(0).cumsum(1), ((1, 0), (1, 0)))
        return (c[w:, w:] - c[:-w, w:] - c[w:, :-w] + c[:-w, :-w]) / (w * w)

    n = w * w
    norm = n / (n - 1)
    ux, uy = mean(x), mean(y)
    vx = norm * (mean(x * x) - ux * ux)
    vy = norm * (mean(y * y) - uy * uy)
    vxy = norm * (mean(x * y) - ux * uy)
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    s = ((2 * ux * uy + c1) * (2 * vxy + c2)) / ((ux**2 + uy**2 + c1) * (vx + vy + c2))
    return float(s.mean())


@metric("compare_images")
def compare_images(result: str | None, expected: str | None, **options: Any) -> Verdict:
    """SSIM of the two images in grey, both resized to the smaller size (OSWorld's ``min`` of sizes).

    With ``reference_base_result`` B, the score is ``(ssim - B) / (1 - B)`` when ``ssim >= B + 0.01``,
    else 0. SSIM lies in [-1, 1]: a negative one (images of inverted structure) is the score, as in
    OSWorld, where it lowers an ``and`` mean instead of ending it.
    """
    import numpy as np
    from PIL import Image

    if not result or not expected:
        return Verdict(0.0, "an image path is empty")
    base = options.get("reference_base_result")
    img1, img2 = Image.open(result).convert("L"), Image.open(expected).convert("L")
    size = min(img1.size, img2.size)
    img1 = img1.resize(size, Image.Resampling.LANCZOS)
    img2 = img2.resize(size, Image.Resampling.LANCZOS)
    index = ssim(np.array(img1), np.array(img2))
    if base is not None:
        score = (index - base) / (1 - base) if index >= base + 0.01 else 0.0
        return Verdict(score, f"SSIM {index:.4f} against a base of {base}")
    return Verdict(index, f"SSIM {index:.4f}")


def _archive_compare(file_type: str) -> MetricFunc:
    from osw_studio.evaluation.metrics import docs, general, slides, table

    table_of: dict[str, MetricFunc] = {
        "text": general.compare_text_file,
        "pdf": compare_pdfs,
        "docx": docs.compare_docx_files,
        "ppt": slides.compare_pptx_files,
        "image": compare_images,
        "csv": table.compare_csv,
        "table": table.compare_table,
    }
    if file_type not in table_of:
        raise ValueError(f"compare_archive file_type {file_type!r} is not implemented")
    return table_of[file_type]


def _archive_unsupported(options: dict[str, Any]) -> list[str]:
    kind = options.get("file_type", "text")
    return [] if kind in ("text", "pdf", "docx", "ppt", "image", "csv", "table") else [f"file_type={kind}"]


@metric("compare_archive", unsupported=_archive_unsupported)
def compare_archive(result: str | None, expected: str, **options: Any) -> float:
    """Unpack both archives; the same file names (under ``file_path``), then the mean per-file score."""
    if not result:
        return 0.0
    sub = options.pop("file_path", "")
    compare = _archive_compare(options.pop("file_type", "text"))
    pred_dir = Path(result).with_suffix("").as_posix() + "_pred"
    gold_dir = Path(expected).with_suffix("").as_posix() + "_gold"
    shutil.rmtree(pred_dir, ignore_errors=True)
    Path(pred_dir).mkdir(parents=True)
    shutil.unpack_archive(result, pred_dir)
    if not Path(gold_dir).exists():
        Path(gold_dir).mkdir(parents=True)
        shutil.unpack_archive(expected, gold_dir)
    pred = sorted(p.name for p in (Path(pred_dir) / sub).iterdir())
    gold = sorted(p.name for p in (Path(gold_dir) / sub).iterdir())
    if pred != gold:
        return 0.0
    if not pred:
        return 0.0
    total = 0.0
    for name in pred:
        verdict = compare(str(Path(pred_dir) / sub / name), str(Path(gold_dir) / sub / name), **options)
        total += verdict.score if isinstance(verdict, Verdict) else float(verdict)
    return total / len(pred)
