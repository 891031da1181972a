"""Word-processor metrics over ``.docx`` files (python-docx), as OSWorld's ``docs.py`` defines them."""

from __future__ import annotations

import io
import re
from typing import Any

from rapidfuzz import fuzz

from osw_studio.evaluation.registry import Verdict, metric


def _document(path: str) -> Any:
    from docx import Document

    return Document(path)


def _open(path: str) -> Any | None:
    """The document, or None when it cannot be read (OSWorld scores an unreadable document 0)."""
    try:
        return _document(path)
    except Exception:
        return None


def _squash(paragraphs: list[str], ignore_case: bool) -> str:
    text = re.sub(r"\s+", " ", "\n".join(paragraphs)).strip()
    return text.lower() if ignore_case else text


_ODF_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"


def odt_paragraphs(path: str) -> list[str]:
    """The texts of an OpenDocument text's ``text:p`` paragraphs, as OSWorld reads them.

    Paragraphs of ``styles.xml`` (headers, footers) come first, then those of ``content.xml``, in
    document order; a paragraph's text is its own text nodes and those directly inside its
    ``text:span`` children (spaces written as ``text:s``, tabs and nested spans are not text).
    """
    import zipfile

    import lxml.etree

    out: list[str] = []
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        for part in ("styles.xml", "content.xml"):
            if part not in names:
                continue
            root = lxml.etree.fromstring(z.read(part))
            for p in root.iter(f"{{{_ODF_TEXT}}}p"):
                pieces = [p.text or ""]
                for child in p:
                    if child.tag == f"{{{_ODF_TEXT}}}span":
                        pieces.append(child.text or "")
                        pieces.extend(grandchild.tail or "" for grandchild in child)
                    pieces.append(child.tail or "")
                out.append("".join(pieces))
    return out


_ODF_STYLE = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
_ODF_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_ODF_FO = "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
HIGHLIGHT = "#ffff00"
"""The background colour of LibreOffice Writer's default (yellow) highlighting."""


def odt_highlighted(path: str) -> bool:
    """Whether some ``text:span`` of an OpenDocument text has an automatic style with a yellow background.

    The spans and automatic styles of ``styles.xml`` and ``content.xml`` are read together; a style
    highlights when one of its property elements has ``fo:background-color="#ffff00"``.
    """
    import zipfile

    import lxml.etree

    roots = []
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        roots = [
            lxml.etree.fromstring(z.read(part)) for part in ("styles.xml", "content.xml") if part in names
        ]
    highlighting = set()
    for root in roots:
        for styles in root.iter(f"{{{_ODF_OFFICE}}}automatic-styles"):
            for style in styles:
                if any(prop.get(f"{{{_ODF_FO}}}background-color") == HIGHLIGHT for prop in style):
                    highlighting.add(style.get(f"{{{_ODF_STYLE}}}name"))
    return any(
        span.get(f"{{{_ODF_TEXT}}}style-name") in highlighting
        for root in roots
        for span in root.iter(f"{{{_ODF_TEXT}}}span")
        if span.get(f"{{{_ODF_TEXT}}}style-name")
    )


def _paragraph_texts(path: str) -> list[str]:
    if path.endswith(".odt"):
        return odt_paragraphs(path)
    return [p.text for p in _document(path).paragraphs]


@metric("compare_docx_files")
def compare_docx_files(result: str | None, expected: str | None, **options: Any) -> Verdict:
    """Compare two documents' paragraph texts (two ``.docx`` or two ``.odt`` files).

    Options (OSWorld's defaults): ``ignore_blanks`` (True: compare the whole text with whitespace runs
    squashed), ``ignore_case``, ``ignore_order`` (sort paragraphs), ``content_only`` (fuzzy ratio of
    the squashed texts), ``fuzzy_match`` (ratio instead of equality), ``delete_empty_lines``.
    """
    ignore_blanks = options.get("ignore_blanks", True)
    ignore_case = options.get("ignore_case", False)
    if not result or not expected:
        return Verdict(0.0, "a file path is empty")
    kinds = {result.rsplit(".", 1)[-1], expected.rsplit(".", 1)[-1]}
    if kinds not in ({"docx"}, {"odt"}):
        return Verdict(0.0, "only two .docx or two .odt files are compared")
    try:
        p1, p2 = _paragraph_texts(result), _paragraph_texts(expected)
    except Exception as exc:  # OSWorld scores an unreadable document 0
        return Verdict(0.0, f"cannot open a document: {exc}")
    if options.get("ignore_order", False):
        p1, p2 = sorted(p1), sorted(p2)
    if options.get("delete_empty_lines", False):
        p1, p2 = [p for p in p1 if p.strip()], [p for p in p2 if p.strip()]
    if options.get("content_only", False):
        ratio = fuzz.ratio(_squash(p1, ignore_case), _squash(p2, ignore_case)) / 100.0
        return Verdict(ratio, f"content similarity {ratio:.2%}")
    fuzzy = options.get("fuzzy_match", False)
    if ignore_blanks:
        t1, t2 = _squash(p1, ignore_case), _squash(p2, ignore_case)
        if fuzzy:
            ratio = fuzz.ratio(t1, t2) / 100.0
            return Verdict(ratio, f"text similarity {ratio:.2%}")
        if t1 != t2:
            return Verdict(0.0, "texts differ (blanks ignored)")
        return Verdict(1.0, "texts match")
    if len(p1) != len(p2):
        return Verdict(0.0, f"{len(p1)} paragraphs, expected {len(p2)}")
    if fuzzy:
        if not p1:
            return Verdict(1.0, "both documents are empty")
        fold = str.lower if ignore_case else str
        ratio = sum(fuzz.ratio(fold(a), fold(b)) / 100.0 for a, b in zip(p1, p2, strict=True)) / len(p1)
        return Verdict(ratio, f"mean paragraph similarity {ratio:.2%}")
    for i, (a, b) in enumerate(zip(p1, p2, strict=True), start=1):
        if (a.lower() != b.lower()) if ignore_case else (a != b):
            return Verdict(0.0, f"paragraph {i} differs")
    return Verdict(1.0, "documents match")


@metric("check_highlighted_words")
def check_highlighted_words(result: str | None, expected: str | None) -> Verdict:
    """The document's text matches (``compare_docx_files``) and no word is still highlighted (``.odt``)."""
    if not result or not expected:
        return Verdict(0.0, "a file path is empty")
    same = compare_docx_files(result, expected)
    if isinstance(same, Verdict) and same.score == 0:
        return Verdict(0.0, f"texts differ: {same.reason}")
    if odt_highlighted(result):
        return Verdict(0.0, "some text is still highlighted")
    return Verdict(1.0, "the text matches and nothing is highlighted")


@metric("compare_docx_tables")
def compare_docx_tables(result: str | None, expected: str | None) -> Verdict:
    """Same number of tables, same shapes, same cell texts (stripped)."""
    if not result or not expected:
        return Verdict(0.0, "a file path is empty")
    try:
        tables1, tables2 = _document(result).tables, _document(expected).tables
    except Exception as exc:
        return Verdict(0.0, f"cannot open a document: {exc}")
    if len(tables1) != len(tables2):
        return Verdict(0.0, f"{len(tables1)} tables, expected {len(tables2)}")
    for n, (t1, t2) in enumerate(zip(tables1, tables2, strict=True), start=1):
        if len(t1.rows) != len(t2.rows) or len(t1.columns) != len(t2.columns):
            return Verdict(0.0, f"table {n} has a different shape")
        for i in range(len(t1.rows)):
            for j in range(len(t1.columns)):
                if t1.cell(i, j).text.strip() != t2.cell(i, j).text.strip():
                    return Verdict(0.0, f"table {n} cell ({i + 1},{j + 1}) differs")
    return Verdict(1.0, "all tables match")


@metric("compare_docx_images")
def compare_docx_images(result: str | None, expected: str | None) -> Verdict:
    """The documents embed the same images (same decoded pixels, in relationship order)."""
    from PIL import Image

    if not result or not expected:
        return Verdict(0.0, "a file path is empty")

    if _open(result) is None or _open(expected) is None:
        return Verdict(0.0, "cannot open a document")

    def images(path: str) -> list[bytes]:
        doc = _document(path)
        blobs = [rel.target_part.blob for rel in doc.part.rels.values() if "image" in rel.reltype]
        return [Image.open(io.BytesIO(b)).tobytes() for b in blobs]

    a, b = images(result), images(expected)
    if len(a) != len(b):
        return Verdict(0.0, f"{len(a)} images, expected {len(b)}")
    if a != b:
        return Verdict(0.0, "an image differs")
    return Verdict(1.0, "all images match")


@metric("compare_line_spacing")
def compare_line_spacing(result: str | None, expected: str | None) -> Verdict:
    """The texts match (``compare_docx_files``) and every paragraph has the same line spacing."""
    if not result or not expected:
        return Verdict(0.0, "a file path is empty")
    same = compare_docx_files(result, expected)
    if isinstance(same, Verdict) and same.score == 0:
        return Verdict(0.0, f"texts differ: {same.reason}")
    d1, d2 = _open(result), _open(expected)
    if d1 is None or d2 is None:
        return Verdict(0.0, "cannot open a document")
    if len(d1.paragraphs) != len(d2.paragraphs):
        return Verdict(0.0, "different number of paragraphs")
    for i, (a, b) in enumerate(zip(d1.paragraphs, d2.paragraphs, strict=True), start=1):
        if a.paragraph_format.line_spacing != b.paragraph_format.line_spacing:
            return Verdict(0.0, f"paragraph {i} line spacing differs")
    return Verdict(1.0, "line spacing matches")


@metric("compare_font_names")
def compare_font_names(result: str | None, rules: dict[str, Any]) -> float:
    """Every run of the document uses the font ``rules["font_name"]``."""
    if not result:
        return 0.0
    doc = _open(result)
    if doc is None:
        return 0.0
    want = rules["font_name"]
    return float(all(run.font.name == want for p in doc.paragraphs for run in p.runs))


@metric("compare_subscript_contains")
def compare_subscript_contains(result: str | None, expected: str | None) -> float:
    """Some aligned pair of runs is subscript in both documents."""
    if not result or not expected:
        return 0.0
    d1, d2 = _open(result), _open(expected)
    if d1 is None or d2 is None:
        return 0.0
    for p1, p2 in zip(d1.paragraphs, d2.paragraphs, strict=False):
        for r1, r2 in zip(p1.runs, p2.runs, strict=False):
            if r1.font.subscript and r2.font.subscript:
                return 1.0
    return 0.0


@metric("has_page_numbers_in_footers")
def has_page_numbers_in_footers(result: str | None) -> float:
    """Every section's footer's first paragraph holds a digit."""
    if not result:
        return 0.0
    doc = _open(result)
    if doc is None:
        return 0.0
    for section in doc.sections:
        footer = section.footer
        text = footer.paragraphs[0].text if footer.paragraphs else ""
        if not any(ch.isdigit() for ch in text):
            return 0.0
    return 1.0


@metric("is_first_line_centered")
def is_first_line_centered(result: str | None) -> float:
    """The first paragraph is centered."""
    from docx.enum.text import WD_PARAGRAPH_ALIGNMENT

    if not result:
        return 0.0
    doc = _open(result)
    if doc is None:
        return 0.0
    paragraphs = doc.paragraphs
    return float(
        bool(paragraphs) and paragraphs[0].paragraph_format.alignment == WD_PARAGRAPH_ALIGNMENT.CENTER
    )
