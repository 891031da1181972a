"""Differential cases for the metrics over images, PDFs and archives.

Images are drawn with Pillow (gradients, shapes, noise, an inverted copy whose SSIM is negative,
other sizes); PDFs are written with PyMuPDF; archives are zip files of text, CSV and PDF files.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.parity.metric_check import Case, check, ids, made
from tests.parity.reference import Reference
from tests.parity.task_options import options_of


def _image(path: Path, kind: str) -> None:
    from PIL import Image, ImageDraw, ImageOps

    size = (160, 120)
    base = Image.linear_gradient("L").resize(size).convert("RGB")
    draw = ImageDraw.Draw(base)
    draw.rectangle((20, 20, 70, 60), fill=(200, 30, 30))
    draw.ellipse((90, 40, 140, 100), fill=(30, 30, 200))
    if kind in ("stripes", "stripes-inverted"):
        img = Image.new("L", size)
        dark, light = (0, 255) if kind == "stripes" else (255, 0)
        for x in range(size[0]):
            ImageDraw.Draw(img).line((x, 0, x, size[1]), fill=dark if (x // 3) % 2 else light)
        img = img.convert("RGB")
    elif kind == "base":
        img = base
    elif kind == "inverted":
        img = ImageOps.invert(base)
    elif kind == "moved":
        img = base.copy()
        ImageDraw.Draw(img).rectangle((30, 30, 80, 70), fill=(20, 200, 20))
    elif kind == "bigger":
        img = base.resize((320, 240))
    elif kind == "smaller":
        img = base.resize((80, 60))
    elif kind == "noise":
        import random

        rng = random.Random(7)
        img = base.copy()
        px = img.load()
        assert px is not None
        for _ in range(3000):
            x, y = rng.randrange(size[0]), rng.randrange(size[1])
            px[x, y] = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
    elif kind == "flat":
        img = Image.new("RGB", size, (128, 128, 128))
    elif kind == "jpeg":
        base.save(path, format="JPEG", quality=40)
        return
    else:
        raise ValueError(kind)
    img.save(path, format="PNG")


IMAGE_KINDS = ("base", "inverted", "moved", "bigger", "smaller", "noise", "flat", "jpeg")


def _img(kind: str) -> Any:
    return made(f"images/{kind}.{'jpg' if kind == 'jpeg' else 'png'}", lambda p: _image(p, kind))


def inverted_pair(folder: Path) -> tuple[Path, Path]:
    """An image and its inverted copy (their SSIM is negative), written in ``folder``."""
    a, b = folder / "stripes.png", folder / "stripes-inverted.png"
    _image(a, "stripes")
    _image(b, "stripes-inverted")
    return a, b


def _image_cases() -> list[Case]:
    out = []
    option_sets = [("plain", {})] + [
        (f"base{o['reference_base_result']}", o) for _, o in options_of("compare_images") if o
    ]
    for kind in IMAGE_KINDS:
        for name, options in option_sets:
            out.append(Case(f"images-{kind}-{name}", "compare_images", (_img(kind), _img("base")), options))
    out.append(Case("images-reverse-bigger", "compare_images", (_img("base"), _img("bigger"))))
    for name, options in option_sets:
        stripes = (_img("stripes-inverted"), _img("stripes"))
        out.append(Case(f"images-negative-{name}", "compare_images", stripes, options))
    out.append(Case("images-none", "compare_images", (None, _img("base"))))
    return out


PAGES = {
    "base": ["Lecture 1: Introduction\nGoals of the course", "Grading\nHomework 40%\nExam 60%"],
    "same": ["Lecture 1: Introduction\nGoals of the course", "Grading\nHomework 40%\nExam 60%"],
    "typo": ["Lecture 1: Introductoin\nGoals of the course", "Grading\nHomework 40%\nExam 60%"],
    "one-page": ["Lecture 1: Introduction\nGoals of the course"],
    "other": ["Quarterly report\nRevenue grew"],
    "empty": [],
}


def _pdf(path: Path, key: str) -> None:
    import pymupdf

    doc: Any = pymupdf.open()
    for text in PAGES[key]:
        page = doc.new_page()
        page.insert_text((72, 72), text, fontsize=12)
    if not PAGES[key]:
        doc.new_page()
    doc.save(str(path))
    doc.close()


def _pdf_file(key: str) -> Any:
    return made(f"pdf/{key}.pdf", lambda p: _pdf(p, key))


def _text_file(name: str, data: bytes) -> Any:
    return made(name, lambda p: p.write_bytes(data))


def _pdf_cases() -> list[Case]:
    out = []
    for key in PAGES:
        out.append(Case(f"pdfs-{key}", "compare_pdfs", (_pdf_file(key), _pdf_file("base"))))
    out.append(
        Case("pdfs-list", "compare_pdfs", ([_pdf_file("same"), _pdf_file("typo")], [_pdf_file("base")] * 2))
    )
    out.append(
        Case(
            "pdfs-list-unreadable",
            "compare_pdfs",
            ([_text_file("pdf/not-a-pdf.pdf", b"plain text"), _pdf_file("same")], [_pdf_file("base")] * 2),
        )
    )
    out.append(Case("pdfs-list-none", "compare_pdfs", ([None, _pdf_file("same")], [_pdf_file("base")] * 2)))
    out.append(
        Case(
            "pdfs-not-a-pdf",
            "compare_pdfs",
            (_text_file("pdf/not-a-pdf.pdf", b"plain text"), _pdf_file("base")),
        )
    )
    return out


def _zip(path: Path, members: dict[str, bytes | Path]) -> None:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data.read_bytes() if isinstance(data, Path) else data)


def _archive(name: str, members: dict[str, Any]) -> Any:
    def write(path: Path) -> None:
        resolved: dict[str, bytes | Path] = {}
        for member, value in members.items():
            if isinstance(value, tuple):  # ("pdf", key)
                tmp = path.with_name(f"{path.stem}-{member.replace('/', '_')}")
                _pdf(tmp, value[1])
                resolved[member] = tmp
            else:
                resolved[member] = value
        _zip(path, resolved)

    return made(f"archives/{name}.zip", write)


def _archive_cases() -> list[Case]:
    text = {"a.txt": b"alpha\n", "b.txt": b"beta\n"}
    archives = {
        "text": _archive("text", text),
        "text-same": _archive("text-same", dict(text)),
        "text-changed": _archive("text-changed", {"a.txt": b"alpha\n", "b.txt": b"BETA\n"}),
        "text-renamed": _archive("text-renamed", {"a.txt": b"alpha\n", "c.txt": b"beta\n"}),
        "slides": _archive(
            "slides", {"lecture_slides/1.pdf": ("pdf", "base"), "lecture_slides/2.pdf": ("pdf", "other")}
        ),
        "slides-same": _archive(
            "slides-same", {"lecture_slides/1.pdf": ("pdf", "same"), "lecture_slides/2.pdf": ("pdf", "other")}
        ),
        "slides-typo": _archive(
            "slides-typo", {"lecture_slides/1.pdf": ("pdf", "typo"), "lecture_slides/2.pdf": ("pdf", "other")}
        ),
        "pdfs": _archive("pdfs", {"1.pdf": ("pdf", "base"), "2.pdf": ("pdf", "one-page")}),
        "pdfs-same": _archive("pdfs-same", {"1.pdf": ("pdf", "same"), "2.pdf": ("pdf", "one-page")}),
        "pdfs-typo": _archive("pdfs-typo", {"1.pdf": ("pdf", "typo"), "2.pdf": ("pdf", "one-page")}),
        "csv": _archive("csv", {"t.csv": b"a,b\n1,2\n"}),
        "csv-case": _archive("csv-case", {"t.csv": b"A,B\n1,2\n"}),
    }
    out = [
        Case("archive-text-same", "compare_archive", (archives["text-same"], archives["text"])),
        Case("archive-text-changed", "compare_archive", (archives["text-changed"], archives["text"])),
        Case("archive-text-renamed", "compare_archive", (archives["text-renamed"], archives["text"])),
        Case(
            "archive-text-blanks",
            "compare_archive",
            (archives["text-changed"], archives["text"]),
            {"ignore_case": True},
        ),
        Case(
            "archive-csv-case",
            "compare_archive",
            (archives["csv-case"], archives["csv"]),
            {"file_type": "csv"},
        ),
        Case(
            "archive-csv-ignore-case",
            "compare_archive",
            (archives["csv-case"], archives["csv"]),
            {"file_type": "csv", "ignore_case": True},
        ),
        Case("archive-none", "compare_archive", (None, archives["text"])),
    ]
    for tid, options in options_of("compare_archive"):
        sub = "slides" if options.get("file_path") else "pdfs"
        for variant in ("", "-same", "-typo"):
            pred = archives[f"{sub}{variant}"] if variant else archives[sub]
            out.append(
                Case(
                    f"archive-task{tid}{variant or '-self'}",
                    "compare_archive",
                    (pred, archives[sub]),
                    options,
                )
            )
    return out


CASES = [*_image_cases(), *_pdf_cases(), *_archive_cases()]


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_file_metric_agrees(metric_reference: Reference, metric_files: Path, case: Case) -> None:
    check(metric_reference, case, metric_files)
