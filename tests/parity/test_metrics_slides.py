"""Differential cases for ``compare_pptx_files`` on real presentations written with python-pptx.

The base deck has a title slide, a slide with a bulleted text box (levels, runs with fonts, colours,
bold, underline), a table, a picture-free shape, notes and a group holding a text box; each variant
changes one thing. Every option set the OSWorld tasks pass is scored on every variant.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.parity.metric_check import Case, check, ids, made
from tests.parity.reference import Reference
from tests.parity.task_options import options_of


def _deck(path: Path, variant: str) -> None:
    from pptx import Presentation
    from pptx.dml.color import RGBColor
    from pptx.enum.shapes import MSO_SHAPE
    from pptx.enum.text import PP_ALIGN
    from pptx.util import Emu, Pt

    prs = Presentation()
    title = prs.slides.add_slide(prs.slide_layouts[0])
    title.shapes.title.text = "Product Comparison" if variant != "title" else "Product comparison"
    title.placeholders[1].text = "Q3 review"
    if variant == "background":
        title.background.fill.solid()
        title.background.fill.fore_color.rgb = RGBColor(0x20, 0x40, 0x60)

    slide = prs.slides.add_slide(prs.slide_layouts[6])
    left = Emu(914400 if variant != "moved" else 1014400)
    box = slide.shapes.add_textbox(left, Emu(914400), Emu(4572000), Emu(2743200))
    frame = box.text_frame
    lines = [("Fast", 0), ("Cheap", 1), ("Reliable", 0)]
    if variant == "level":
        lines[1] = ("Cheap", 0)
    if variant == "level-deep":
        lines[1] = ("Cheap", 2)
    if variant in ("empty-paragraph", "blank-runs"):
        lines.append(("", 0))
    for i, (text, level) in enumerate(lines):
        p = frame.paragraphs[0] if i == 0 else frame.add_paragraph()
        p.level = level
        if variant == "align" and i == 0:
            p.alignment = PP_ALIGN.CENTER
        run = p.add_run()
        run.text = text
        run.font.name = "Arial" if variant != "font" else "Calibri"
        run.font.size = Pt(20 if variant != "size" or i else 24)
        run.font.bold = True if i == 0 else (False if variant == "bold-false" else None)
        if variant == "italic" and i == 2:
            run.font.italic = True
        if variant != "theme-color" or i:
            run.font.color.rgb = RGBColor(0x11, 0x22, 0x33) if variant != "color" else RGBColor(0xFF, 0, 0)
        if variant == "underline" and i == 1:
            run.font.underline = True
        if (variant == "runs" and i == 2) or (variant == "blank-runs" and i == 3):
            extra = p.add_run()
            extra.text = ""
    if variant == "strike":
        frame.paragraphs[0].runs[0].font._element.set("strike", "sngStrike")
    if variant == "text":
        frame.paragraphs[2].runs[0].text = "Reliable!"

    shape = slide.shapes.add_shape(MSO_SHAPE.RECTANGLE, Emu(6000000), Emu(914400), Emu(1828800), Emu(914400))
    if variant == "shape-size":
        shape.width = Emu(1928800)
    if variant == "notes":
        slide.notes_slide.notes_text_frame.text = "Remember the numbers"

    rows = 2 if variant != "table-shape" else 3
    table = slide.shapes.add_table(rows, 2, Emu(914400), Emu(4000000), Emu(4572000), Emu(741680)).table
    for r in range(rows):
        for c in range(2):
            table.cell(r, c).text = f"r{r}c{c}"
    if variant == "table-bold":
        table.cell(1, 1).text_frame.paragraphs[0].runs[0].font.bold = True
    if variant == "table-text":
        table.cell(1, 1).text = "changed"

    group = slide.shapes.add_group_shape()
    inner = group.shapes.add_textbox(Emu(914400), Emu(5000000), Emu(2000000), Emu(500000))
    inner.text_frame.text = "Grouped note"
    if variant == "group-align":
        inner.text_frame.paragraphs[0].alignment = PP_ALIGN.RIGHT

    if variant == "extra-slide":
        prs.slides.add_slide(prs.slide_layouts[6])
    if variant == "extra-shape":
        slide.shapes.add_textbox(Emu(0), Emu(0), Emu(100000), Emu(100000)).text_frame.text = "x"
    prs.save(str(path))


VARIANTS = (
    "base",
    "same",
    "title",
    "background",
    "moved",
    "level",
    "level-deep",
    "empty-paragraph",
    "blank-runs",
    "align",
    "font",
    "size",
    "bold-false",
    "italic",
    "theme-color",
    "color",
    "underline",
    "runs",
    "strike",
    "text",
    "shape-size",
    "notes",
    "table-shape",
    "table-bold",
    "table-text",
    "group-align",
    "extra-slide",
    "extra-shape",
)


def _pptx(variant: str) -> Any:
    return made(f"slides/{variant}.pptx", lambda p: _deck(p, variant))


def _cases() -> list[Case]:
    out = []
    # The default and the distinct switch sets tasks pass (values aside: True/False of the same keys
    # take the same code paths, so one set per key combination keeps the suite short).
    option_sets: list[tuple[str, dict[str, Any]]] = [("default", {})]
    seen: set[frozenset[str]] = set()
    for tid, options in options_of("compare_pptx_files"):
        keys = frozenset(k for k, v in options.items() if v is not True)
        if options and keys not in seen:
            seen.add(keys)
            option_sets.append((f"task{tid}", options))
    for variant in VARIANTS:
        for name, options in option_sets:
            out.append(
                Case(f"pptx-{variant}-{name}", "compare_pptx_files", (_pptx(variant), _pptx("base")), options)
            )
    # Two blank last paragraphs, one with an extra formatting-only run: only runs with text are counted.
    for name, options in [("default", {}), ("no-run-count", {"examine_run_count": False})]:
        pair = (_pptx("blank-runs"), _pptx("empty-paragraph"))
        out.append(Case(f"pptx-blank-runs-vs-empty-{name}", "compare_pptx_files", pair, options))
    return out


CASES = _cases()


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_pptx_metric_agrees(metric_reference: Reference, metric_files: Path, case: Case) -> None:
    check(metric_reference, case, metric_files)
