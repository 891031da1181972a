"""Real ``.xlsx`` workbooks for the spreadsheet cases: one base book and its near-miss variants.

The base has three sheets: ``Sheet1`` (text, numbers with number formats, formulas with their cached
values as LibreOffice stores them, an error cell, freeze panes, a hidden row, a data validation, an
auto-filter), ``Sheet2`` (a bar chart over Sheet1's data) and ``Sheet3`` (a small table). Each
variant changes one thing. Next to each book, ``<book>-<sheet>.csv`` holds the sheet as LibreOffice
prints it (what ``sheet_print`` compares).
"""

from __future__ import annotations

import csv
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROWS = [
    ["Name", "Qty", "Price", "Total", "Note"],
    ["Apple", 3, 1.25, None, "fresh"],
    ["Banana", 12, 0.5, None, "ripe "],
    ["Cherry", 200, 0.1, None, "Sour"],
    ["Date", 7, 3.3333333, None, None],
    ["Elder", 0, 9.99, None, "none"],
]

Variant = Callable[[Any], None]


def _base(variant: str) -> Any:
    import openpyxl
    from openpyxl.chart import BarChart, LineChart, Reference
    from openpyxl.styles import Font, PatternFill
    from openpyxl.worksheet.datavalidation import DataValidation

    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Sheet1"
    for row in ROWS:
        ws.append(row)
    for r in range(2, len(ROWS) + 1):
        ws.cell(r, 4, f"=B{r}*C{r}")
        ws.cell(r, 3).number_format = "0.00"
        ws.cell(r, 4).number_format = "#,##0.00"
    ws["F1"] = "Ratio"
    ws["F2"] = "=B2/B6"  # B6 is 0: an error
    ws["A1"].font = Font(bold=True, color="FFFF0000")
    ws["B1"].fill = PatternFill("solid", fgColor="FFFFFF00")
    ws.freeze_panes = "B2"
    ws.row_dimensions[4].hidden = True
    ws.column_dimensions["A"].width = 18
    dv = DataValidation(type="list", formula1='"Pass,Fail,Held"', allow_blank=True)
    dv.add("E2:E6")
    ws.add_data_validation(dv)
    ws.auto_filter.ref = "A1:E6"
    ws.sheet_view.zoomScale = 120

    chart_sheet = book.create_sheet("Sheet2")
    chart_sheet["A1"] = "Chart of Sheet1"
    chart = LineChart() if variant == "chart-type" else BarChart()
    chart.title = "Totals by fruit" if variant != "chart-title" else "Totals"
    data = Reference(ws, min_col=2, min_row=1, max_row=len(ROWS))
    cats = Reference(ws, min_col=1, min_row=2, max_row=len(ROWS))
    chart.add_data(data, titles_from_data=True)
    chart.set_categories(cats)
    chart_sheet.add_chart(chart, "B3")

    third = book.create_sheet("Sheet3")
    for row in [["k", "v"], ["a", 1], ["b", 2]]:
        third.append(row)
    return book


def _edit(variant: str, book: Any) -> None:
    from openpyxl.formatting.rule import CellIsRule, FormulaRule
    from openpyxl.styles import Font, PatternFill

    ws = book["Sheet1"]
    if variant == "value":
        ws["B3"] = 13
    elif variant == "case":
        ws["E4"] = "sour"
    elif variant == "spaces":
        ws["E3"] = "ripe"
    elif variant == "format":
        ws["C2"].number_format = "0.000"
    elif variant == "freeze":
        ws.freeze_panes = "A2"
    elif variant == "no-freeze":
        ws.freeze_panes = None
    elif variant == "freeze-scrolled":  # the same frozen B2, the view scrolled down and right
        ws.sheet_view.pane.topLeftCell = "D30"
    elif variant == "order":
        book.move_sheet("Sheet3", offset=-2)
    elif variant == "renamed":
        book["Sheet3"].title = "Data"
    elif variant == "extra-sheet":
        book.create_sheet("Sheet4")["A1"] = "x"
    elif variant == "style":
        ws["A1"].font = Font(bold=True, color="FF0000FF")
    elif variant == "fill":
        ws["B2"].fill = PatternFill("solid", fgColor="FFFF0000")
    elif variant in ("cf-cellis", "cf-cellis-miss"):
        fill = PatternFill("solid", bgColor="FFFF0000")
        bound = "10" if variant == "cf-cellis" else "1000"
        ws.conditional_formatting.add(
            "B2:B6",
            CellIsRule(operator="greaterThan", formula=[bound], fill=fill, font=Font(color="FFFF0000")),
        )
    elif variant == "cf-between":
        ws.conditional_formatting.add(
            "C2:C6",
            CellIsRule(operator="between", formula=["0.4", "2"], fill=PatternFill(bgColor="FF00FF00")),
        )
    elif variant == "cf-text":
        ws.conditional_formatting.add(
            "E2:E6",
            FormulaRule(formula=['NOT(ISERROR(SEARCH("r",E2)))'], fill=PatternFill(bgColor="FF0000FF")),
        )
    elif variant == "hidden-row":
        ws.row_dimensions[4].hidden = False
    elif variant == "zoom":
        ws.sheet_view.zoomScale = 300
    elif variant == "validation":
        ws.data_validations.dataValidation[0].formula1 = '"Pass,Fail"'
    elif variant == "filter":
        ws.auto_filter.ref = "A1:D6"
    elif variant == "formula":
        ws["D3"] = "=B3+C3"
    elif variant == "width":
        ws.column_dimensions["A"].width = 30


def cached_values(variant: str) -> dict[str, str]:
    """The values LibreOffice would store for Sheet1's formulas (cells without ``t`` are numbers)."""
    values = {}
    for r in range(2, len(ROWS) + 1):
        qty = 13 if variant == "value" and r == 3 else ROWS[r - 1][1]
        price = ROWS[r - 1][2]
        assert isinstance(qty, int) and isinstance(price, float)
        total = qty + price if variant == "formula" and r == 3 else qty * price
        values[f"D{r}"] = repr(float(total))
    return values


_INLINE = re.compile(
    r'<c r="([A-Z]+\d+)"([^>]*?) t="inlineStr"([^>]*)><is><t(?: xml:space="preserve")?>([^<]*)</t></is></c>'
)
_SST = "application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"
_SST_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings"


def _patch(path: Path, variant: str) -> None:
    """Make the file look like LibreOffice's: cached formula results, shared strings; and the variants
    openpyxl cannot make (inline strings, sheet ids that differ from the part numbers)."""
    with zipfile.ZipFile(path) as z:
        parts = {name: z.read(name) for name in z.namelist()}
    strings: list[str] = []

    def shared(m: re.Match[str]) -> str:
        if variant == "inline":
            return f'<c r="{m[1]}"{m[2]} t="inlineStr"{m[3]}><is><t>{m[4]}</t></is></c>'
        if m[4] not in strings:
            strings.append(m[4])
        return f'<c r="{m[1]}"{m[2]} t="s"{m[3]}><v>{strings.index(m[4])}</v></c>'

    first = f"xl/worksheets/sheet{_order(parts).index('Sheet1') + 1}.xml"
    for name in sorted(parts):
        if not name.startswith("xl/worksheets/sheet"):
            continue
        sheet = _INLINE.sub(shared, parts[name].decode())
        if name == first and variant != "uncached":
            for ref, value in cached_values(variant).items():
                sheet = re.sub(
                    rf'(<c r="{ref}"[^>]*>)<f>([^<]*)</f><v>\s*</v>', rf"\1<f>\2</f><v>{value}</v>", sheet
                )
            sheet = re.sub(
                r'<c r="F2"([^>]*)><f>([^<]*)</f><v>\s*</v>',
                r'<c r="F2" t="e"\1><f>\2</f><v>#DIV/0!</v>',
                sheet,
            )
        parts[name] = sheet.encode()
    if strings:
        items = "".join(f'<si><t xml:space="preserve">{t}</t></si>' for t in strings)
        parts["xl/sharedStrings.xml"] = (
            '<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/'
            f'spreadsheetml/2006/main" count="{len(strings)}" uniqueCount="{len(strings)}">{items}</sst>'
        ).encode()
        types = parts["[Content_Types].xml"].decode()
        types = types.replace(
            "</Types>", f'<Override PartName="/xl/sharedStrings.xml" ContentType="{_SST}"/></Types>'
        )
        parts["[Content_Types].xml"] = types.encode()
        rels = parts["xl/_rels/workbook.xml.rels"].decode()
        rels = rels.replace(
            "</Relationships>",
            f'<Relationship Id="rIdSst" Type="{_SST_REL}" Target="sharedStrings.xml"/></Relationships>',
        )
        parts["xl/_rels/workbook.xml.rels"] = rels.encode()
    if variant == "sheet-ids":
        # The workbook lists Sheet1 with sheetId 3: OSWorld's cell reader then opens sheet3.xml.
        book = parts["xl/workbook.xml"].decode()
        book = re.sub(r'(name="Sheet1" sheetId=")1"', r'\g<1>3"', book)
        book = re.sub(r'(name="Sheet3" sheetId=")3"', r'\g<1>1"', book)
        parts["xl/workbook.xml"] = book.encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in parts.items():
            z.writestr(name, data)


def _order(parts: dict[str, bytes]) -> list[str]:
    return re.findall(r'<sheet\b[^>]*?\bname="([^"]+)"', parts["xl/workbook.xml"].decode())


def _printed(book: Any, path: Path, variant: str) -> None:
    for ws in book.worksheets:
        target = path.with_suffix("").as_posix() + f"-{ws.title}.csv"
        with open(target, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            for row in ws.iter_rows(values_only=True):
                writer.writerow(["" if v is None else v for v in row])
            if variant == "print-trailing":
                f.write("\n\n")


VARIANTS = (
    "base",
    "value",
    "case",
    "spaces",
    "format",
    "freeze",
    "no-freeze",
    "freeze-scrolled",
    "order",
    "renamed",
    "extra-sheet",
    "style",
    "fill",
    "cf-cellis",
    "cf-cellis-miss",
    "cf-between",
    "cf-text",
    "hidden-row",
    "zoom",
    "validation",
    "filter",
    "formula",
    "width",
    "chart-type",
    "chart-title",
    "inline",
    "sheet-ids",
    "print-trailing",
    "uncached",
)
"""Every workbook variant; ``base`` is the expected book."""


def write_workbook(path: Path, variant: str) -> None:
    """Write the ``variant`` workbook at ``path`` (and its printed CSVs beside it).

    ``uncached`` keeps openpyxl's empty formula results (``<v></v>``), as a book an agent saved with
    openpyxl has them.
    """
    book = _base(variant)
    _edit(variant, book)
    book.save(path)
    _patch(path, variant)
    _printed(book, path, variant)
