"""Differential tests: the added Writer metrics against OSWorld's (metrics.docs) on generated .docx files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from docx import Document
from docx.enum.text import WD_BREAK, WD_TAB_ALIGNMENT
from docx.shared import Inches, Pt, RGBColor

from tests.parity.guest_env import agree, both, stub_missing
from tests.parity.reference import Reference

DOCS = "docs"


@pytest.fixture(scope="module")
def ref(reference: Reference) -> Reference:
    stub_missing(reference)
    return reference


TEXT = ["Introduction", "The quick brown fox.", "Jumps over the lazy dog."]


def docx(path: Path, paragraphs: list[str], **style: Any) -> str:
    doc = Document()
    for i, text in enumerate(paragraphs):
        p = doc.add_paragraph()
        run = p.add_run(text)
        last = i == len(paragraphs) - 1
        if style.get("strike") == "last" and last:
            run.font.strike = True
        if style.get("strike") == "last-half" and last:
            p.add_run(" tail")
            run.font.strike = True
        if style.get("italic") and i == 1:
            run.italic = True
            if style["italic"] != "nosize":
                run.font.size = Pt(style["italic"])
        if style.get("breaks") and i < style["breaks"]:
            run.add_break(WD_BREAK.PAGE)
        if style.get("line_break") and i == 0:
            run.add_break(WD_BREAK.LINE)
        for tab in style.get("tabs", []):
            p.paragraph_format.tab_stops.add_tab_stop(Inches(tab[0]), tab[1])
    if style.get("blank"):
        doc.add_paragraph("")
    for table_words in style.get("tables", []):
        table = doc.add_table(rows=1, cols=len(table_words))
        for cell, (word, color) in zip(table.rows[0].cells, table_words, strict=True):
            cell.paragraphs[0].add_run(word).font.color.rgb = RGBColor(*color)
    doc.save(path)
    return str(path)


@pytest.mark.parametrize(
    "style",
    [
        {"strike": "last"},
        {"strike": "last-half"},
        {},
        {"italic": 14},
        {"italic": 12},
        {"italic": "nosize"},
    ],
)
@pytest.mark.parametrize("text", [TEXT, TEXT[:2], [*TEXT[:2], "Jumps over the lazy cat."]])
def test_formatting_after_the_same_text(
    ref: Any, tmp_path: Path, style: dict[str, Any], text: list[str]
) -> None:
    gold = docx(tmp_path / "gold.docx", TEXT)
    ours = docx(tmp_path / "ours.docx", text, **style)
    agree(ref, DOCS, "evaluate_strike_through_last_paragraph", ours, gold)
    agree(ref, DOCS, "check_italic_font_size_14", ours, gold)
    agree(ref, DOCS, "evaluate_strike_through_last_paragraph", None, gold)


RED, BLUE, DARK_RED, GREEN = (255, 0, 0), (0, 0, 255), (250, 5, 0), (0, 128, 0)


@pytest.mark.parametrize(
    "words",
    [
        [("apple", RED), ("banana", BLUE)],
        [("Orange", DARK_RED), ("kiwi", BLUE)],
        [("apple", BLUE), ("banana", BLUE)],
        [("apple", RED), ("banana", GREEN)],
        [("", GREEN), ("umbrella", RED)],
    ],
)
@pytest.mark.parametrize("threshold", [None, 1.0, 20.0])
def test_evaluate_colored_words_in_tables(
    ref: Any, tmp_path: Path, words: list[Any], threshold: float | None
) -> None:
    gold = docx(tmp_path / "gold.docx", TEXT, tables=[[(w, (0, 0, 0)) for w, _ in words]])
    ours = docx(tmp_path / "ours.docx", TEXT, tables=[words])
    options = {} if threshold is None else {"threshold": threshold}
    agree(ref, DOCS, "evaluate_colored_words_in_tables", ours, gold, **options)


@pytest.mark.parametrize("breaks", [0, 1, 2])
@pytest.mark.parametrize("rules", [{}, {"page_break_count": 1}, {"page_break_count": 2}])
def test_contains_page_break(ref: Any, tmp_path: Path, breaks: int, rules: dict[str, Any]) -> None:
    ours = docx(tmp_path / "ours.docx", TEXT, breaks=breaks, line_break=True)
    agree(ref, DOCS, "contains_page_break", ours, rules)


TAB_CASES = [
    [(1.0, WD_TAB_ALIGNMENT.LEFT)],
    [(1.2, WD_TAB_ALIGNMENT.LEFT)],
    [(1.0, WD_TAB_ALIGNMENT.RIGHT)],
    [(1.0, WD_TAB_ALIGNMENT.LEFT), (3.0, WD_TAB_ALIGNMENT.CENTER)],
    [(0.0, WD_TAB_ALIGNMENT.LEFT), (1.0, WD_TAB_ALIGNMENT.LEFT)],
    [],
]


@pytest.mark.parametrize("tabs", TAB_CASES)
@pytest.mark.parametrize(
    "options", [{}, {"word_number_split_by_tabstop": 2, "index": 0}, {"word_number_split_by_tabstop": 1}]
)
def test_check_tabstops(ref: Any, tmp_path: Path, tabs: list[Any], options: dict[str, Any]) -> None:
    lines = ["Alpha beta\tone", "Gamma delta\ttwo"]
    gold = docx(tmp_path / "gold.docx", lines, tabs=[(1.0, WD_TAB_ALIGNMENT.LEFT)])
    ours = docx(tmp_path / "ours.docx", lines, tabs=tabs)
    ours_score, theirs = both(ref, DOCS, "check_tabstops", ours, gold, **options)
    assert ours_score == pytest.approx(theirs)


REFS = ["Smith, J. (2020). A study of things.", "Doe, A. (2019). Other work."]


@pytest.mark.parametrize(
    "paragraphs",
    [
        ["Body", "References", *REFS],
        ["Body", "References", "Smith J 2020 A study of thing", "Doe, A. (2019). Other work."],
        ["Body", "References", REFS[0]],
        ["Body", "Bibliography", *REFS],
        ["Body", "References", "Completely different", "Entirely unrelated text"],
    ],
)
@pytest.mark.parametrize(
    "options", [{}, {"reference_base_result": 0.8}, {"reference_indicator": "Bibliography"}]
)
def test_compare_references(ref: Any, tmp_path: Path, paragraphs: list[str], options: dict[str, Any]) -> None:
    gold = docx(tmp_path / "gold.docx", ["Body", "References", *REFS])
    ours = docx(tmp_path / "ours.docx", paragraphs)
    ours_score, theirs = both(ref, DOCS, "compare_references", ours, gold, **options)
    assert ours_score == pytest.approx(theirs)


@pytest.mark.parametrize(
    "paragraphs",
    [
        TEXT,
        [" ".join(TEXT)],
        ["Introduction  The quick", "brown fox.", "Jumps over the lazy dog."],
        [*TEXT, ""],
        TEXT[:2],
    ],
)
@pytest.mark.parametrize("options", [{}, {"ignore_blanks": False}])
def test_compare_docx_files_and_ignore_new_lines(
    ref: Any, tmp_path: Path, paragraphs: list[str], options: dict[str, Any]
) -> None:
    gold = docx(tmp_path / "gold.docx", TEXT, blank=True)
    ours = docx(tmp_path / "ours.docx", paragraphs)
    agree(ref, DOCS, "compare_docx_files_and_ignore_new_lines", ours, gold, **options)


TRAINS = ["1, T100, 08:00, Paris", "2, T200, 09:00, Lyon", "3, T100, 10:00, Nice", "4, T300, 11:00, Metz"]


@pytest.mark.parametrize(
    "lines",
    [
        [TRAINS[0], TRAINS[1], TRAINS[3]],
        [TRAINS[1], TRAINS[0], TRAINS[3]],
        [TRAINS[0], TRAINS[2], TRAINS[1], TRAINS[3]],
        [TRAINS[0], TRAINS[1]],
        [TRAINS[0], TRAINS[1], "4, T300, 11:30, Metz"],
        [TRAINS[2], TRAINS[1], TRAINS[3]],
    ],
)
def test_compare_unique_train_records(ref: Any, tmp_path: Path, lines: list[str]) -> None:
    gold = docx(tmp_path / "gold.docx", [TRAINS[0], TRAINS[1], TRAINS[3]])
    initial = docx(tmp_path / "initial.docx", TRAINS)
    ours = docx(tmp_path / "ours.docx", lines)
    agree(ref, DOCS, "compare_unique_train_records", ours, [gold, initial])
    agree(ref, DOCS, "compare_unique_train_records", ours, [gold])


XCU = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema">
{items}
</oor:items>"""
FONT_ITEM = (
    '<item oor:path="/org.openoffice.Office.Writer/DefaultFont">'
    '<prop oor:name="{prop}" oor:op="fuse"><value>{font}</value></prop></item>'
)


@pytest.mark.parametrize(
    "items",
    [
        FONT_ITEM.format(prop="Standard", font="Times New Roman"),
        FONT_ITEM.format(prop="Standard", font="Liberation Serif"),
        FONT_ITEM.format(prop="Heading", font="Times New Roman"),
        FONT_ITEM.format(prop="Standard", font="Liberation Serif")
        + FONT_ITEM.format(prop="Standard", font="Times New Roman"),
        "",
        "<broken",
    ],
)
def test_find_default_font(ref: Any, tmp_path: Path, items: str) -> None:
    path = tmp_path / "registrymodifications.xcu"
    path.write_text(XCU.format(items=items))
    agree(ref, DOCS, "find_default_font", str(path), {"font_name": "Times New Roman"})


@pytest.mark.parametrize(
    "paragraphs",
    [["Paris London Rome"], ["Pariss", "Londn Rome"], ["Paris London"], ["Paris London Rome Berlin"], []],
)
def test_fuzzy_place_math(ref: Any, tmp_path: Path, paragraphs: list[str]) -> None:
    ours = docx(tmp_path / "ours.docx", paragraphs)
    ours_score, theirs = both(
        ref, "general", "fuzzy_place_math", ours, {"expected": ["Paris", "London", "Rome"]}
    )
    assert ours_score == pytest.approx(theirs)
