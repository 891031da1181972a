"""Differential cases for the word-processor metrics on real ``.docx`` (python-docx) and ``.odt`` files."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.parity.metric_check import Case, check, ids, made
from tests.parity.reference import Reference
from tests.parity.task_options import options_of

PARAGRAPHS = ["Quarterly Report", "", "Revenue grew by 12%  this year.", "Costs\tfell.", "Outlook: stable"]


def _docx(path: Path, variant: str) -> None:
    from docx import Document
    from docx.enum.text import WD_ALIGN_PARAGRAPH
    from docx.shared import Pt

    paragraphs = list(PARAGRAPHS)
    if variant == "case":
        paragraphs[0] = paragraphs[0].upper()
    elif variant == "spaces":
        paragraphs[2] = "Revenue grew by 12% this year."
    elif variant == "order":
        paragraphs[3], paragraphs[4] = paragraphs[4], paragraphs[3]
    elif variant == "typo":
        paragraphs[2] = "Revenue grew by 21% this year."
    elif variant == "no-empty":
        paragraphs = [p for p in paragraphs if p]
    elif variant == "merged":
        paragraphs = [" ".join(paragraphs)]
    doc = Document()
    for i, text in enumerate(paragraphs):
        p = doc.add_paragraph()
        run = p.add_run(text)
        run.font.name = "Arial" if variant != "font" or i != 2 else "Times New Roman"
        if variant == "subscript" and i == 2:
            p.add_run("2").font.subscript = True
        if variant == "spacing" and i == 1:
            p.paragraph_format.line_spacing = 2.0
        else:
            p.paragraph_format.line_spacing = 1.5
        if i == 0 and variant != "left":
            p.alignment = WD_ALIGN_PARAGRAPH.CENTER
        run.font.size = Pt(12)
    if variant != "no-table":
        table = doc.add_table(rows=2, cols=2)
        cells = [["Item", "Cost"], ["Paper", "3" if variant != "table" else "4"]]
        for r in range(2):
            for c in range(2):
                table.cell(r, c).text = cells[r][c]
    if variant in ("image", "other-image"):
        from PIL import Image

        buffer = io.BytesIO()
        Image.new("RGB", (20, 10), (255, 0, 0) if variant == "image" else (0, 0, 255)).save(buffer, "PNG")
        buffer.seek(0)
        doc.add_picture(buffer)
    if variant == "footer":
        doc.sections[0].footer.paragraphs[0].text = "Page 1"
    doc.save(str(path))


DOCX_VARIANTS = (
    "base",
    "same",
    "case",
    "spaces",
    "order",
    "typo",
    "no-empty",
    "merged",
    "font",
    "subscript",
    "spacing",
    "left",
    "no-table",
    "table",
    "image",
    "other-image",
    "footer",
)


def _doc(variant: str) -> Any:
    return made(f"docs/{variant}.docx", lambda p: _docx(p, variant))


ODF_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"


_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_STYLE = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
_MANIFEST = "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"


_FO = "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"


def _automatic(styles: str) -> str:
    return f"<office:automatic-styles>{styles}</office:automatic-styles>" if styles else ""


def _odt(path: Path, body: str, header: str = "", automatic: str = "") -> None:
    ns = f'xmlns:office="{_OFFICE}" xmlns:text="{ODF_TEXT}" xmlns:style="{_STYLE}" xmlns:fo="{_FO}"'
    head = '<?xml version="1.0" encoding="UTF-8"?>'
    content = (
        f"{head}<office:document-content {ns}>"
        f"{_automatic(automatic)}<office:body><office:text>{body}</office:text>"
        "</office:body></office:document-content>"
    )
    styles = (
        f'{head}<office:document-styles {ns}><office:master-styles><style:master-page style:name="Standard">'
        f"<style:header>{header}</style:header></style:master-page></office:master-styles>"
        "</office:document-styles>"
    )
    entries = [
        ("/", "application/vnd.oasis.opendocument.text"),
        ("content.xml", "text/xml"),
        ("styles.xml", "text/xml"),
    ]
    files = "".join(
        f'<manifest:file-entry manifest:full-path="{p}" manifest:media-type="{t}"/>' for p, t in entries
    )
    manifest = f'{head}<manifest:manifest xmlns:manifest="{_MANIFEST}">{files}</manifest:manifest>'
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.text")
        z.writestr("content.xml", content)
        z.writestr("styles.xml", styles)
        z.writestr("META-INF/manifest.xml", manifest)


_SPAN = "<text:span>bold</text:span>"
_NESTED = "<text:span>bo<text:span>ld</text:span></text:span>"
ODT_BODIES = {
    "base": f"<text:p>Hello {_SPAN} world</text:p><text:p/><text:p>Second<text:s/>line</text:p>",
    "same": f"<text:p>Hello {_SPAN} world</text:p><text:p/><text:p>Second<text:s/>line</text:p>",
    "nested": f"<text:p>Hello {_NESTED} world</text:p><text:p/><text:p>Secondline</text:p>",
    "plain": "<text:p>Hello bold world</text:p><text:p>Secondline</text:p>",
    "other": "<text:p>Goodbye</text:p>",
    "heading": f"<text:h>Title</text:h><text:p>Hello {_SPAN} world</text:p><text:p>Second line</text:p>",
}


def _text_style(name: str, background: str) -> str:
    return (
        f'<style:style style:name="{name}" style:family="text">'
        f'<style:text-properties fo:background-color="{background}"/></style:style>'
    )


HIGHLIGHTS = {
    "yellow": (_text_style("T1", "#ffff00"), '<text:span text:style-name="T1">bold</text:span>'),
    "other-colour": (_text_style("T1", "#00ff00"), '<text:span text:style-name="T1">bold</text:span>'),
    "unused-style": (_text_style("T1", "#ffff00"), '<text:span text:style-name="T2">bold</text:span>'),
    "transparent": (
        _text_style("T1", "transparent") + _text_style("T2", "#ffff00"),
        '<text:span text:style-name="T1">bold</text:span>',
    ),
    "none": ("", "<text:span>bold</text:span>"),
}


def _highlighted(key: str, typo: bool = False) -> Any:
    automatic, span = HIGHLIGHTS[key]
    end = "!" if typo else ""
    body = f"<text:p>Hello {span} world{end}</text:p><text:p/><text:p>Second<text:s/>line</text:p>"
    return made(f"docs/highlight-{key}{'-typo' if typo else ''}.odt", lambda p: _odt(p, body, "", automatic))


def _odt_file(key: str, header: str = "") -> Any:
    name = f"docs/{key}{'-header' if header else ''}.odt"
    return made(name, lambda p: _odt(p, ODT_BODIES[key], header))


def _docx_cases() -> list[Case]:
    out = []
    option_sets = [("default", {})] + [(f"task{tid}", o) for tid, o in options_of("compare_docx_files") if o]
    for variant in DOCX_VARIANTS:
        for name, options in option_sets:
            out.append(
                Case(f"docx-{variant}-{name}", "compare_docx_files", (_doc(variant), _doc("base")), options)
            )
    for key in ODT_BODIES:
        for name, options in option_sets[:4]:
            out.append(
                Case(f"odt-{key}-{name}", "compare_docx_files", (_odt_file(key), _odt_file("base")), options)
            )
    out.append(
        Case(
            "odt-header",
            "compare_docx_files",
            (_odt_file("base", "<text:p>Head</text:p>"), _odt_file("base")),
        )
    )
    out.append(Case("odt-vs-docx", "compare_docx_files", (_odt_file("base"), _doc("base"))))
    for key in HIGHLIGHTS:
        pair = (_highlighted(key), _odt_file("base"))
        out.append(Case(f"highlighted-{key}", "check_highlighted_words", pair))
    out.append(
        Case("highlighted-typo", "check_highlighted_words", (_highlighted("none", True), _odt_file("base")))
    )
    out.append(Case("highlighted-none-path", "check_highlighted_words", (None, _odt_file("base"))))
    out.append(Case("docx-none", "compare_docx_files", (None, _doc("base"))))
    broken = made("docs/broken.docx", lambda p: p.write_bytes(b"not a zip"))
    out.append(Case("docx-broken", "compare_docx_files", (broken, _doc("base"))))
    for variant in ("base", "same", "table", "no-table", "typo"):
        out.append(Case(f"docx_tables-{variant}", "compare_docx_tables", (_doc(variant), _doc("base"))))
        out.append(Case(f"line_spacing-{variant}", "compare_line_spacing", (_doc(variant), _doc("base"))))
    out.append(Case("line_spacing-spacing", "compare_line_spacing", (_doc("spacing"), _doc("base"))))
    out.append(Case("docx_tables-broken", "compare_docx_tables", (broken, _doc("base"))))
    for variant in ("image", "other-image", "base"):
        out.append(Case(f"docx_images-{variant}", "compare_docx_images", (_doc(variant), _doc("image"))))
    out.append(Case("docx_images-broken", "compare_docx_images", (broken, _doc("image"))))
    for variant in ("base", "font"):
        for font in ("Arial", "Times New Roman"):
            out.append(
                Case(
                    f"font_names-{variant}-{font}", "compare_font_names", (_doc(variant), {"font_name": font})
                )
            )
    out.append(Case("font_names-broken", "compare_font_names", (broken, {"font_name": "Arial"})))
    for variant in ("base", "subscript"):
        out.append(
            Case(f"subscript-{variant}", "compare_subscript_contains", (_doc(variant), _doc("subscript")))
        )
    out.append(Case("subscript-broken", "compare_subscript_contains", (broken, _doc("subscript"))))
    for variant in ("base", "footer"):
        out.append(Case(f"page_numbers-{variant}", "has_page_numbers_in_footers", (_doc(variant),)))
    out.append(Case("page_numbers-broken", "has_page_numbers_in_footers", (broken,)))
    for variant in ("base", "left"):
        out.append(Case(f"centered-{variant}", "is_first_line_centered", (_doc(variant),)))
    out.append(Case("centered-broken", "is_first_line_centered", (broken,)))
    return out


CASES = _docx_cases()


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_docs_metric_agrees(metric_reference: Reference, metric_files: Path, case: Case) -> None:
    check(metric_reference, case, metric_files)
