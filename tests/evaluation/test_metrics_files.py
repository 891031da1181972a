"""Each metric on real files made here (xlsx, csv, docx, pptx, pdf, png, json), passing and failing."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl
import pytest
from docx import Document
from PIL import Image, ImageDraw
from pptx import Presentation
from pptx.util import Inches, Pt

from osw_studio.evaluation.registry import METRICS, Verdict


def score(name: str, *args: object, **options: object) -> float:
    verdict = METRICS.get(name)(*args, **options)
    return verdict.score if isinstance(verdict, Verdict) else float(verdict)


# --- spreadsheets ------------------------------------------------------------------------------------


def make_xlsx(
    path: Path, rows: list[list[object]], *, bold_a1: bool = False, freeze: str | None = None
) -> str:
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Sheet1"
    for row in rows:
        ws.append(row)
    if bold_a1:
        ws["A1"].font = openpyxl.styles.Font(bold=True)
    if freeze:
        ws.freeze_panes = freeze
    wb.save(path)
    return str(path)


ROWS = [["Name", "Total"], ["a", 1.00001], ["b", 2.5]]


def test_compare_table_sheet_data(tmp_path: Path) -> None:
    got = make_xlsx(tmp_path / "got.xlsx", ROWS)
    want = make_xlsx(tmp_path / "want.xlsx", [["Name", "Total"], ["a", 1.0], ["b", 2.5]])
    wrong = make_xlsx(tmp_path / "wrong.xlsx", [["Name", "Total"], ["a", 1.0], ["b", 3.5]])
    rules = {"rules": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}]}
    assert score("compare_table", got, want, **rules) == 1.0  # equal at 4 decimals, as OSWorld rounds
    assert score("compare_table", wrong, want, **rules) == 0.0
    assert score("compare_table", None, want, **rules) == 0.0
    (tmp_path / "broken.xlsx").write_text("not a workbook")
    assert score("compare_table", str(tmp_path / "broken.xlsx"), want, **rules) == 0.0


def test_compare_table_check_cell_style_and_freeze(tmp_path: Path) -> None:
    got = make_xlsx(tmp_path / "got.xlsx", ROWS, bold_a1=True, freeze="A2")
    plain = make_xlsx(tmp_path / "plain.xlsx", ROWS)
    cell = {
        "type": "check_cell",
        "sheet_idx": 0,
        "coordinate": "A1",
        "props": {"font_bold": {"method": "eq", "ref": True}, "value": {"method": "eq", "ref": "Name"}},
    }
    assert score("compare_table", got, rules=[cell]) == 1.0
    assert score("compare_table", plain, rules=[cell]) == 0.0
    freeze = {"type": "freeze", "sheet_idx0": "RNSheet1", "sheet_idx1": "ENSheet1"}
    assert score("compare_table", got, got, rules=[freeze]) == 1.0
    assert score("compare_table", got, plain, rules=[freeze]) == 0.0


def test_compare_table_sheet_fuzzy(tmp_path: Path) -> None:
    got = make_xlsx(tmp_path / "got.xlsx", [["  Main Rd. "]])
    want = make_xlsx(tmp_path / "want.xlsx", [["main road"]])
    rule = {
        "type": "sheet_fuzzy",
        "sheet_idx0": "RI0",
        "sheet_idx1": "EI0",
        "rules": [
            {
                "range": ["A1"],
                "type": "exact_match",
                "ignore_case": True,
                "trim_leadings": " ",
                "trim_trailings": " ",
                "ignore_chars": ".",
                "normalization": [["Rd", "Road"]],
            }
        ],
    }
    assert score("compare_table", got, want, rules=[rule]) == 1.0
    rule["rules"][0]["normalization"] = []
    assert score("compare_table", got, want, rules=[rule]) == 0.0


def test_compare_table_sheet_print_reads_the_csv_exports(tmp_path: Path) -> None:
    got = make_xlsx(tmp_path / "got.xlsx", ROWS)
    want = make_xlsx(tmp_path / "want.xlsx", ROWS)
    (tmp_path / "got-Sheet1.csv").write_text("Name,Total\na,1\n\n")
    (tmp_path / "want-Sheet1.csv").write_text("Name,Total\na,1\n")
    rule = {"type": "sheet_print", "sheet_idx0": "RNSheet1", "sheet_idx1": "ENSheet1"}
    assert score("compare_table", got, want, rules=[rule]) == 1.0
    (tmp_path / "got-Sheet1.csv").write_text("Name,Total\na,2\n")
    assert score("compare_table", got, want, rules=[rule]) == 0.0


def test_compare_csv(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    a.write_text("x,y\n1,2\n")
    b.write_text("X,Y \n1,2\n")
    c.write_text("x,y\n1,3\n")
    assert score("compare_csv", str(a), str(b), strict=False, ignore_case=True) == 1.0
    assert score("compare_csv", str(a), str(b)) == 0.0
    assert score("compare_csv", str(a), str(c), strict=False, ignore_case=True) == 0.0


# --- documents ---------------------------------------------------------------------------------------


def make_docx(path: Path, paragraphs: list[str], table: list[list[str]] | None = None) -> str:
    doc = Document()
    for text in paragraphs:
        doc.add_paragraph(text)
    if table:
        t = doc.add_table(rows=len(table), cols=len(table[0]))
        for i, row in enumerate(table):
            for j, value in enumerate(row):
                t.cell(i, j).text = value
    doc.save(str(path))
    return str(path)


def test_compare_docx_files(tmp_path: Path) -> None:
    got = make_docx(tmp_path / "got.docx", ["Hello   world", "Second"])
    want = make_docx(tmp_path / "want.docx", ["Hello world", "Second"])
    other = make_docx(tmp_path / "other.docx", ["Hello world", "Third"])
    assert score("compare_docx_files", got, want) == 1.0  # blanks ignored by default
    assert score("compare_docx_files", got, want, ignore_blanks=False) == 0.0
    assert score("compare_docx_files", other, want) == 0.0
    assert 0.5 < score("compare_docx_files", other, want, content_only=True) < 1.0
    shuffled = make_docx(tmp_path / "shuffled.docx", ["second", "Hello world"])
    assert score("compare_docx_files", shuffled, want, ignore_order=True, ignore_case=True) == 1.0


def test_compare_docx_tables(tmp_path: Path) -> None:
    got = make_docx(tmp_path / "got.docx", ["t"], [["a", "b"], ["1", "2 "]])
    want = make_docx(tmp_path / "want.docx", ["t"], [["a", "b"], ["1", "2"]])
    wrong = make_docx(tmp_path / "wrong.docx", ["t"], [["a", "b"], ["1", "3"]])
    assert score("compare_docx_tables", got, want) == 1.0
    assert score("compare_docx_tables", wrong, want) == 0.0


# --- presentations -----------------------------------------------------------------------------------


def make_pptx(path: Path, title: str, *, bold: bool = False, left: float = 1.0) -> str:
    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[6])
    box = slide.shapes.add_textbox(Inches(left), Inches(1), Inches(4), Inches(1))
    run = box.text_frame.paragraphs[0].add_run()
    run.text = title
    run.font.size = Pt(24)
    run.font.bold = bold
    prs.save(str(path))
    return str(path)


def test_compare_pptx_files(tmp_path: Path) -> None:
    want = make_pptx(tmp_path / "want.pptx", "Quarterly report", bold=True)
    assert (
        score("compare_pptx_files", make_pptx(tmp_path / "same.pptx", "Quarterly report", bold=True), want)
        == 1.0
    )
    assert (
        score("compare_pptx_files", make_pptx(tmp_path / "text.pptx", "Quarterly rep0rt", bold=True), want)
        == 0.0
    )
    plain = make_pptx(tmp_path / "plain.pptx", "Quarterly report")
    assert score("compare_pptx_files", plain, want) == 0.0
    assert score("compare_pptx_files", plain, want, examine_font_bold=False) == 1.0
    moved = make_pptx(tmp_path / "moved.pptx", "Quarterly report", bold=True, left=2.0)
    assert score("compare_pptx_files", moved, want) == 0.0
    assert score("compare_pptx_files", moved, want, examine_shape=False) == 1.0


# --- pdf ---------------------------------------------------------------------------------------------


def make_pdf(path: Path, text: str) -> str:
    """A one-page PDF with one line of Helvetica text, written by hand (no PDF writer needed)."""
    stream = f"BT /F1 24 Tf 72 700 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))
    return str(path)


def test_compare_pdfs(tmp_path: Path) -> None:
    want = make_pdf(tmp_path / "want.pdf", "Invoice 2312 total 42")
    assert score("compare_pdfs", make_pdf(tmp_path / "same.pdf", "Invoice 2312 total 42"), want) == 1.0
    partial = score("compare_pdfs", make_pdf(tmp_path / "near.pdf", "Invoice 2312 total 43"), want)
    assert 0.9 < partial < 1.0
    assert score("compare_pdfs", make_pdf(tmp_path / "other.pdf", "zzzz"), want) < 0.2
    assert score("compare_pdfs", None, want) == 0.0


# --- images ------------------------------------------------------------------------------------------


def make_png(path: Path, *, square: tuple[int, int, int, int], size: tuple[int, int] = (64, 64)) -> str:
    img = Image.new("RGB", size, "white")
    ImageDraw.Draw(img).rectangle(square, fill="black")
    img.save(path)
    return str(path)


def test_compare_images(tmp_path: Path) -> None:
    want = make_png(tmp_path / "want.png", square=(10, 10, 30, 30))
    assert score(
        "compare_images", make_png(tmp_path / "same.png", square=(10, 10, 30, 30)), want
    ) == pytest.approx(1.0)
    moved = make_png(tmp_path / "moved.png", square=(34, 34, 54, 54))
    assert score("compare_images", moved, want) < 0.8
    # With a base score, only an improvement over the base counts.
    assert score("compare_images", moved, want, reference_base_result=0.99) == 0.0


def test_ssim_matches_scikit_image_definition() -> None:
    """A hand-computed case: a constant image against itself is 1, against another constant lower."""
    import numpy as np

    from osw_studio.evaluation.metrics.files import ssim

    flat = np.full((8, 8), 100, dtype=np.uint8)
    other = np.full((8, 8), 150, dtype=np.uint8)
    assert ssim(flat, flat) == pytest.approx(1.0)
    c1 = (0.01 * 255) ** 2
    assert ssim(flat, other) == pytest.approx((2 * 100 * 150 + c1) / (100**2 + 150**2 + c1))


# --- json and text -----------------------------------------------------------------------------------


def test_check_json_settings_and_check_json(tmp_path: Path) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"editor.fontSize": 14, "files.autoSave": "afterDelay"}))
    assert score("check_json_settings", str(settings), {"expected": {"editor.fontSize": 14}}) == 1.0
    assert score("check_json_settings", str(settings), {"expected": {"editor.fontSize": 16}}) == 0.0
    rules = {"expect": [{"key": ["files.autoSave"], "method": "eq", "ref": "afterDelay"}]}
    assert score("check_json", str(settings), rules) == 1.0
    rules = {"unexpect": [{"key": ["editor.fontSize"], "method": "gt", "ref": 12}]}
    assert score("check_json", str(settings), rules) == 0.0


def test_text_file_metrics(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("one\ntwo  three\n")
    b.write_text("one two three")
    assert score("compare_text_file", str(a), str(b)) == 0.0
    assert score("compare_text_file", str(a), str(b), ignore_blanks=True) == 1.0
    assert score("diff_text_file", str(a), str(a)) == 1.0
    assert score("diff_text_file", str(a), str(b)) == 0.0
    assert score("file_contains", str(a), {"expected": ["two", "three"]}) == 1.0
    assert score("file_contains", str(a), {"expected": ["four"]}) == 0.0
    assert score("check_list", str(a), {"expect": [r"^two\s+three"]}) == 1.0
    assert score("check_list", str(a), {"expect": ["two"], "unexpect": ["^one"]}) == 0.0


def test_check_accessibility_tree() -> None:
    xml = (
        '<desktop-frame xmlns:st="https://accessibility.ubuntu.example.org/ns/state">'
        '<application name="gedit"><label name="status" st:visible="true">Saved</label></application>'
        "</desktop-frame>"
    )
    assert (
        score("check_accessibility_tree", xml, [{"selectors": ["label[name=status]"], "text": "Saved"}])
        == 1.0
    )
    assert score("check_accessibility_tree", xml, [{"xpath": "//label", "text": "Unsaved"}]) == 0.0
    assert score("check_accessibility_tree", xml, [{"xpath": "//button"}]) == 0.0


def test_string_metrics() -> None:
    assert score("exact_match", "true\n", {"expected": "true\n"}) == 1.0
    assert score("exact_match", "false", {"expected": "true"}) == 0.0
    assert score("check_include_exclude", "ok: 3 files", {"include": ["ok"], "exclude": ["error"]}) == 1.0
    assert score("check_include_exclude", "error", {"include": [], "exclude": ["error"]}) == 0.0
    assert score("match_in_list", "Dark", {"expected": ["Dark", "Black"]}) == 1.0
    assert score("is_in_list", ["a", "b"], {"expected": "c"}) == 0.0
    assert score("literal_match", "ABC", "abc", type="str", ignore_case=True) == 1.0
    assert score("literal_match", "ABC", "abd", type="str", ignore_case=True) == 0.0
    assert score("check_direct_json_object", {"a": [2, 1]}, {"expected": {"a": [2, 1]}}) == 1.0
    assert score("check_direct_json_object", {"a": 1}, {"expected": {"a": 2}}) == 0.0
    assert score("is_expected_url_pattern_match", "https://a.org/x", {"expected": ["b\\.org"]}) == 0.0
