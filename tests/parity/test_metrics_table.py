"""Differential cases for ``compare_table`` and ``compare_csv`` on real workbooks and CSV files.

Every rule list the OSWorld tasks pass, and rule lists of our own that reach each rule type on the
generated books (freeze panes, conditional formatting, charts, data validation, sheet ids, inline
strings, error cells, printed CSVs), scored on the base book and its near-miss variants.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.parity.metric_check import Case, check, ids, made
from tests.parity.reference import Reference
from tests.parity.task_options import options_of
from tests.parity.workbooks import VARIANTS, write_workbook


def _book(variant: str) -> Any:
    return made(f"table/{variant}.xlsx", lambda p: write_workbook(p, variant))


OWN_RULES: dict[str, list[dict[str, Any]]] = {
    "data": [{"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"}],
    "data-all": [
        {"type": "sheet_data", "sheet_idx0": f"RI{i}", "sheet_idx1": f"EI{i}", "precision": 2}
        for i in range(3)
    ],
    "data-case": [
        {"type": "sheet_data", "sheet_idx0": "RNSheet1", "sheet_idx1": "ENSheet1", "ignore_case": True}
    ],
    "names": [{"type": "sheet_name"}],
    "names-data": [{"type": "sheet_name"}, {"type": "sheet_data", "sheet_idx0": "RI2", "sheet_idx1": "EI2"}],
    "print": [{"type": "sheet_print", "sheet_idx0": "RNSheet1", "sheet_idx1": "ENSheet1"}],
    "print-case": [
        {"type": "sheet_print", "sheet_idx0": "RNSheet1", "sheet_idx1": "ENSheet1", "ignore_case": True}
    ],
    "fuzzy": [
        {
            "type": "sheet_fuzzy",
            "sheet_idx0": "RNSheet1",
            "sheet_idx1": "ENSheet1",
            "rules": [
                {"range": ["A1:F6"], "type": "exact_match"},
                {"range": ["E2:E6"], "type": "fuzzy_match", "threshold": 80, "ignore_case": True},
                {"range": ["E2:E6"], "type": "includes", "trim_trailings": " "},
            ],
        }
    ],
    "style-font": [
        {"type": "style", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["font_color", "font_bold"]}
    ],
    "style-fill": [
        {"type": "style", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["bgcolor", "fill_type"]}
    ],
    "style-format": [{"type": "style", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["number_format"]}],
    "freeze": [{"type": "freeze", "sheet_idx0": 0, "sheet_idx1": "EI0"}],
    "zoom": [{"type": "zoom", "sheet_idx": 0, "method": "lt", "ref": 260}],
    "rows": [{"type": "row_props", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["hidden", "height"]}],
    "cols": [{"type": "col_props", "sheet_idx0": 0, "sheet_idx1": "EI0", "props": ["width", "hidden"]}],
    "validation": [
        {
            "type": "data_validation",
            "sheet_idx": 0,
            "dv_props": [
                {
                    "ranges": {"method": "spreadsheet_range", "ref": ["E2:E6", "E1:E1048576"]},
                    "type": {"method": "eq", "ref": "list"},
                    "formula1": {"method": "str_set_eq", "ref": ["Pass", "Fail", "Held"]},
                }
            ],
        }
    ],
    "filter": [{"type": "filter", "sheet_idx0": 0, "sheet_idx1": "EI0"}],
    "chart": [
        {
            "type": "chart",
            "sheet_idx0": "RNSheet2",
            "sheet_idx1": "ENSheet2",
            "chart_props": ["type", "title"],
        }
    ],
    "pivot": [
        {
            "type": "pivot_table",
            "sheet_idx0": "RNSheet2",
            "sheet_idx1": "ENSheet2",
            "pivot_props": ["row_fields"],
        }
    ],
    "cell": [
        {
            "type": "check_cell",
            "sheet_idx": 0,
            "coordinate": "D3",
            "props": {"value": {"method": "approx:0.001", "ref": 6.0}},
        },
        {
            "type": "check_cell",
            "sheet_idx": "RNSheet1",
            "coordinate": "A1",
            "props": {
                "font_bold": {"method": "eq", "ref": True},
                "font_color": {"method": "eq", "ref": "FFFF0000"},
            },
        },
    ],
    "cell-error": [
        {
            "type": "check_cell",
            "sheet_idx": 0,
            "coordinate": "F2",
            "props": {"value": {"method": "eq", "ref": "#DIV/0!"}},
        }
    ],
    "cell-text": [
        {
            "type": "check_cell",
            "sheet_idx": 0,
            "coordinate": "A2",
            "props": {"value": {"method": "eq", "ref": "Apple"}},
        }
    ],
    "cell-missing-sheet": [
        {
            "type": "check_cell",
            "sheet_idx": "RNNope",
            "coordinate": "A1",
            "props": {"value": {"method": "eq", "ref": "x"}},
        }
    ],
    "cell-bad-prop": [
        {
            "type": "check_cell",
            "sheet_idx": 0,
            "coordinate": "A1",
            "props": {"no_such_style": {"method": "eq", "ref": None}},
        }
    ],
    "mixed": [
        {"type": "sheet_name"},
        {"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"},
        {"type": "freeze", "sheet_idx0": 0, "sheet_idx1": "EI0"},
    ],
}

TASK_VARIANTS = ("base", "value", "sheet-ids", "uncached")
"""The variants each task's own rule list is scored on."""

COMMON = ("base", "value", "sheet-ids", "inline")
SPECIFIC = {
    "data": ("case", "spaces", "formula", "renamed", "order", "extra-sheet", "uncached"),
    "data-all": ("renamed", "formula"),
    "data-case": ("case", "spaces"),
    "print": ("case", "print-trailing", "renamed"),
    "print-case": ("case", "spaces"),
    "fuzzy": ("case", "spaces"),
    "style-font": ("style", "cf-cellis", "cf-cellis-miss", "cf-text", "format"),
    "style-fill": ("fill", "cf-cellis", "cf-cellis-miss", "cf-between", "cf-text"),
    "style-format": ("format", "cf-between"),
    "freeze": ("freeze", "no-freeze", "freeze-scrolled", "renamed"),
    "zoom": ("zoom",),
    "rows": ("hidden-row",),
    "cols": ("width",),
    "validation": ("validation",),
    "filter": ("filter",),
    "chart": ("chart-type", "chart-title"),
    "cell": ("style", "formula"),
    "cell-error": ("formula",),
    "mixed": ("freeze", "renamed", "order"),
    "names": ("order", "renamed", "extra-sheet"),
    "names-data": ("order", "renamed"),
    "cell-text": ("uncached", "order"),
}
"""The own rule lists are scored on the common variants and on the ones their rule type looks at."""


def _table_cases() -> list[Case]:
    out = []
    expected = _book("base")
    assert set(VARIANTS) >= {v for vs in SPECIFIC.values() for v in vs}
    for name, rules in OWN_RULES.items():
        for variant in COMMON + SPECIFIC.get(name, ()):
            out.append(
                Case(f"table-{name}-{variant}", "compare_table", (_book(variant), expected), {"rules": rules})
            )
    seen: set[str] = set()
    for tid, options in options_of("compare_table"):
        key = json.dumps(options.get("rules"), sort_keys=True)
        if key in seen or "rules" not in options:
            continue
        seen.add(key)
        for variant in TASK_VARIANTS:
            out.append(
                Case(f"table-task{tid}-{variant}", "compare_table", (_book(variant), expected), options)
            )
    out.append(Case("table-no-result", "compare_table", (None, expected), {"rules": OWN_RULES["data"]}))
    out.append(
        Case(
            "table-not-a-book",
            "compare_table",
            (_text("table/not-a-book.xlsx", b"plain text"), expected),
            {"rules": OWN_RULES["data"]},
        )
    )
    out.append(Case("table-result-only", "compare_table", (_book("base"),), {"rules": OWN_RULES["cell"]}))
    return out


def _text(name: str, data: bytes) -> Any:
    return made(name, lambda p: p.write_bytes(data))


CSV_TEXT = "Name,Qty,Price\nApple,3,1.25\nBanana,12,0.5\nCrème brûlée,1,4.5\n"


def _csv_cases() -> list[Case]:
    out = []
    utf8 = _text("csv/utf8.csv", CSV_TEXT.encode("utf-8"))
    files = {
        "utf8": utf8,
        "bom": _text("csv/bom.csv", CSV_TEXT.encode("utf-8-sig")),
        "latin1": _text("csv/latin1.csv", CSV_TEXT.encode("latin-1")),
        "cp1252": _text("csv/cp1252.csv", (CSV_TEXT + "Euro,1,€\n").encode("cp1252")),
        "crlf": _text("csv/crlf.csv", CSV_TEXT.replace("\n", "\r\n").encode("utf-8")),
        "upper": _text("csv/upper.csv", CSV_TEXT.upper().encode("utf-8")),
        "spaces": _text("csv/spaces.csv", CSV_TEXT.replace("\n", "  \n").encode("utf-8")),
        "trailing": _text("csv/trailing.csv", (CSV_TEXT + "\n").encode("utf-8")),
        "value": _text("csv/value.csv", CSV_TEXT.replace("1.25", "1.26").encode("utf-8")),
        "empty": _text("csv/empty.csv", b""),
    }
    option_sets = [
        ("plain", {}),
        ("loose", {"strict": False}),
        ("case", {"ignore_case": True}),
        ("both", {"strict": False, "ignore_case": True}),
    ]
    for name, path in files.items():
        for opt, options in option_sets:
            out.append(Case(f"csv-{name}-{opt}", "compare_csv", (path, utf8), options))
    latin = files["latin1"]
    out.append(Case("csv-latin1-vs-latin1", "compare_csv", (latin, latin)))
    out.append(Case("csv-list-second", "compare_csv", (files["upper"], [utf8, files["upper"]])))
    out.append(Case("csv-list-none", "compare_csv", (files["value"], [utf8, files["upper"]])))
    out.append(Case("csv-list-missing-file", "compare_csv", (utf8, ["/nonexistent/x.csv", utf8])))
    out.append(Case("csv-missing-result", "compare_csv", ("/nonexistent/r.csv", utf8)))
    out.append(Case("csv-none", "compare_csv", (None, utf8)))
    return out


CASES = [*_table_cases(), *_csv_cases()]


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_table_metric_agrees(metric_reference: Reference, metric_files: Path, case: Case) -> None:
    check(metric_reference, case, metric_files)
