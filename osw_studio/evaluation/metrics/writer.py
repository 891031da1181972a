"""More LibreOffice Writer metrics, each scoring as OSWorld's function of the same name.

Page breaks, tab stops, word colours, strike-through, italics, references, train records and the
default font.

Several first require the two documents to be equal by ``compare_docx_files`` (the text), then check
one formatting property of the result.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from rapidfuzz import fuzz

from osw_studio.evaluation.metrics.docs import compare_docx_files
from osw_studio.evaluation.registry import Verdict, metric

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def _open(path: str) -> Any:
    from docx import Document

    return Document(path)


def _same_text(result: str, expected: str) -> bool:
    verdict = compare_docx_files(result, expected)
    score = verdict.score if isinstance(verdict, Verdict) else verdict
    return bool(score)


@metric("find_default_font")
def find_default_font(result: str | None, rules: dict[str, Any]) -> float:
    """LibreOffice's ``registrymodifications.xcu`` sets Writer's standard default font to ``font_name``."""
    if not result:
        return 0.0
    font = None
    oor = "{http://openoffice.org/2001/registry}"
    try:
        root = ET.parse(result).getroot()
        for item in root.iter("item"):
            if item.get(f"{oor}path") != "/org.openoffice.Office.Writer/DefaultFont":
                continue
            for prop in item.iter("prop"):
                if prop.get(f"{oor}name") == "Standard":
                    for value in prop.findall("value"):
                        font = value.text
    except (ET.ParseError, OSError):
        pass
    return float(font == rules["font_name"])


@metric("contains_page_break")
def contains_page_break(result: str | None, rules: dict[str, Any]) -> float:
    """The document has a page break in a paragraph's runs (exactly ``page_break_count`` when given)."""
    if not result:
        return 0.0
    try:
        doc = _open(result)
    except Exception:
        return 0.0
    count = sum(
        1
        for paragraph in doc.paragraphs
        for run in paragraph.runs
        for br in run.element.iter(f"{_W}br")
        if br.get(f"{_W}type") == "page"
    )
    expected = rules.get("page_break_count") if isinstance(rules, dict) else None
    if expected is not None and count != expected:
        return 0.0
    return float(count > 0)


def _real_tabs(paragraph: Any) -> list[Any]:
    from docx.enum.text import WD_TAB_ALIGNMENT

    return [
        t
        for t in paragraph.paragraph_format.tab_stops
        if not (
            t.alignment == WD_TAB_ALIGNMENT.CLEAR
            or (t.alignment == WD_TAB_ALIGNMENT.LEFT and t.position == 0)
        )
    ]


@metric("check_tabstops")
def check_tabstops(result: str | None, expected: str | None, **options: Any) -> float:
    """Tab stops of each non-blank paragraph match in kind; the score drops with their distance.

    ``word_number_split_by_tabstop``: the ``index``-th tab-separated part of every result paragraph has
    that many words. Score: 1 minus the mean, over paragraphs, of the summed position differences as a
    share of the text width.
    """
    if not result or not expected:
        return 0.0
    try:
        doc1, doc2 = _open(result), _open(expected)
    except Exception:
        return 0.0
    para1 = [p for p in doc1.paragraphs if p.text.strip()]
    para2 = [p for p in doc2.paragraphs if p.text.strip()]
    if len(para1) != len(para2):
        return 0.0
    number = options.get("word_number_split_by_tabstop")
    if number is not None:
        index = options.get("index", 0)
        for p in para1:
            words = [w for w in re.split(r"\s", p.text.split("\t")[index]) if w.strip()]
            if len(words) != number:
                return 0.0
    section = doc2.sections[0]
    width = section.page_width - section.left_margin - section.right_margin
    minus = 0.0
    for p1, p2 in zip(para1, para2, strict=False):
        tabs1, tabs2 = _real_tabs(p1), _real_tabs(p2)
        if len(tabs1) != len(tabs2):
            return 0.0
        difference = 0.0
        for t1, t2 in zip(tabs1, tabs2, strict=False):
            if t1.alignment != t2.alignment:
                return 0.0
            difference += abs(t1.position - t2.position)
        minus += difference / width
    return 1 - minus / len(para1)


def _color_distance(rgb: Any, reference: tuple[int, int, int]) -> float:
    from skimage.color import deltaE_ciede2000, rgb2lab

    a = rgb2lab([rgb[0] / 255.0, rgb[1] / 255.0, rgb[2] / 255.0])
    b = rgb2lab([reference[0] / 255.0, reference[1] / 255.0, reference[2] / 255.0])
    return float(deltaE_ciede2000(a, b))  # type: ignore[no-untyped-call]


@metric("evaluate_colored_words_in_tables")
def evaluate_colored_words_in_tables(result: str | None, expected: str | None, **options: Any) -> float:
    """Same text as expected, and in the tables words starting with a vowel are red, others blue.

    A colour counts when its CIEDE2000 distance to pure red (blue) is at most ``threshold`` (3.5).
    """
    if not result or not expected:
        return 0.0
    if not _same_text(result, expected):
        return 0.0
    try:
        doc = _open(result)
    except Exception:
        return 0.0
    threshold = options.get("threshold", 3.5)
    for table in doc.tables:
        for row in table.rows:
            for cell in row.cells:
                for paragraph in cell.paragraphs:
                    for run in paragraph.runs:
                        if not run.text:
                            continue
                        target = (255, 0, 0) if run.text[0].lower() in "aeiou" else (0, 0, 255)
                        if _color_distance(run.font.color.rgb, target) > threshold:
                            return 0.0
    return 1.0


@metric("evaluate_strike_through_last_paragraph")
def evaluate_strike_through_last_paragraph(result: str | None, expected: str | None) -> float:
    """Same text as expected, and every run of the last paragraph is struck through."""
    if not result or not expected:
        return 0.0
    if not _same_text(result, expected):
        return 0.0
    try:
        doc = _open(result)
    except Exception:
        return 0.0
    return float(all(run.font.strike for run in doc.paragraphs[-1].runs))


@metric("check_italic_font_size_14")
def check_italic_font_size_14(result: str | None, expected: str | None) -> float:
    """Same text as expected, and every italic run is 14 pt."""
    if not result or not expected:
        return 0.0
    if not _same_text(result, expected):
        return 0.0
    try:
        doc = _open(result)
    except Exception:
        return 0.0
    for paragraph in doc.paragraphs:
        for run in paragraph.runs:
            if run.italic and (run.font.size is None or run.font.size.pt != 14):
                return 0.0
    return 1.0


def _docx_paragraphs(result: str, expected: str) -> tuple[list[str], list[str]] | None:
    if not (result.endswith(".docx") and expected.endswith(".docx")):
        return None
    try:
        return [p.text for p in _open(result).paragraphs], [p.text for p in _open(expected).paragraphs]
    except Exception:
        return None


@metric("compare_docx_files_and_ignore_new_lines")
def compare_docx_files_and_ignore_new_lines(
    result: str | None, expected: str | None, **options: Any
) -> float:
    """Two .docx files have the same text without empty paragraphs.

    ``ignore_blanks`` (default on) also treats every whitespace run, line breaks included, as one space.
    """
    if not result or not expected:
        return 0.0
    texts = _docx_paragraphs(result, expected)
    if texts is None:
        return 0.0
    ours, gold = ([t for t in side if t != ""] for side in texts)
    if options.get("ignore_blanks", True):
        return float(
            re.sub(r"\s+", " ", "\n".join(ours)).strip() == re.sub(r"\s+", " ", "\n".join(gold)).strip()
        )
    return float(ours == gold)


@metric("compare_references")
def compare_references(result: str | None, expected: str | None, **options: Any) -> float:
    """How close the reference lists after the ``reference_indicator`` paragraph are.

    The mean fuzzy ratio of the non-blank entries (as many on both sides), rescaled so that
    ``reference_base_result`` (0.5) scores 0; documents without the heading on either side score 1.
    """
    if not result or not expected:
        return 0.0
    texts = _docx_paragraphs(result, expected)
    if texts is None:
        return 0.0
    indicator = options.get("reference_indicator", "References")
    base = options.get("reference_base_result", 0.5)
    ours, gold = texts
    if indicator not in ours and indicator not in gold:
        return 1.0
    if indicator not in ours or indicator not in gold:
        return 0.0
    refs1 = [p for p in ours[ours.index(indicator) + 1 :] if p.strip()]
    refs2 = [p for p in gold[gold.index(indicator) + 1 :] if p.strip()]
    if len(refs1) != len(refs2):
        return 0.0
    if not refs1:
        raise ZeroDivisionError("no references after the heading")  # OSWorld divides by zero here too
    mean = sum(fuzz.ratio(a, b) / 100.0 for a, b in zip(refs1, refs2, strict=False)) / len(refs1)
    if mean >= base + 0.01:
        return float((mean - base) / (1 - base))
    return 0.0


def _train_lines(path: str) -> tuple[list[str], list[str]] | None:
    try:
        doc = _open(path)
    except Exception:
        return None
    lines = [p.text.strip() for p in doc.paragraphs if p.text.strip()]
    ids = [line.split(",")[1].strip() for line in lines if len(line.split(",")) == 4]
    return lines, ids


@metric("compare_unique_train_records")
def compare_unique_train_records(result: str | None, expected: Any, **options: Any) -> float:
    """The result keeps only lines of the initial file, one per train id, the gold file's ids and count.

    ``expected`` is ``[gold file, initial file]``; records are ``a, id, b, c`` lines.
    """
    if not result or not isinstance(expected, list) or len(expected) < 2:
        return 0.0
    gold_file, initial_file = expected[0], expected[1]
    if not gold_file or not initial_file:
        return 0.0
    ours, gold, initial = _train_lines(result), _train_lines(gold_file), _train_lines(initial_file)
    if ours is None or gold is None or initial is None:
        return 0.0
    (lines, ids), (gold_lines, gold_ids) = ours, gold
    return float(
        set(lines).issubset(set(initial[0]))
        and len(ids) == len(set(ids))
        and set(ids) == set(gold_ids)
        and len(lines) == len(gold_lines)
    )


@metric("fuzzy_place_math")
def fuzzy_place_math(result: str | None, rules: dict[str, Any]) -> float:
    """The document holds exactly three words, scored by their best fuzzy match among ``expected``."""
    if result is None:
        return 0.0
    words = [word for paragraph in _open(result).paragraphs for word in paragraph.text.split()]
    if len(words) != 3:
        return 0.0
    return sum(max([fuzz.ratio(w, answer) / 100 for answer in rules["expected"]] + [0]) for w in words) / 3
