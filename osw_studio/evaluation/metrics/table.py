"""Spreadsheet metrics: ``compare_table`` with OSWorld's rules, and ``compare_csv``.

A sheet is named as OSWorld does: an int or ``RI<n>`` (result, by index), ``RN<name>`` (result, by
name), ``EI<n>`` / ``EN<name>`` (expected). Rules run in order and the first failing one scores 0.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from osw_studio.evaluation.metrics.table_cells import read_cell_style, read_cell_value
from osw_studio.evaluation.metrics.table_format import conditional_styles
from osw_studio.evaluation.registry import Verdict, metric
from osw_studio.evaluation.rules import match_value_to_rule

RULE_TYPES = frozenset(
    {
        "sheet_name",
        "sheet_data",
        "sheet_print",
        "sheet_fuzzy",
        "style",
        "freeze",
        "zoom",
        "data_validation",
        "row_props",
        "col_props",
        "check_cell",
        "filter",
        "chart",
        "pivot_table",
    }
)
"""The ``compare_table`` rule types implemented here (OSWorld also has ``sparkline``)."""


def _unsupported_rules(options: dict[str, Any]) -> list[str]:
    return sorted({r.get("type", "?") for r in options.get("rules", [])} - RULE_TYPES)


class _Books:
    """The result and expected workbooks, each as a path, an openpyxl book and a pandas book."""

    def __init__(self, result: str) -> None:
        import openpyxl
        import pandas as pd

        self.paths: dict[str, str | None] = {"R": result, "E": None}
        self.pd: dict[str, Any] = {}
        self.xl: dict[str, Any] = {"R": openpyxl.load_workbook(result)}
        self.pd["R"] = pd.ExcelFile(result)

    def add_expected(self, expected: str) -> None:
        """Open the expected workbook too."""
        import openpyxl
        import pandas as pd

        self.paths["E"] = expected
        self.xl["E"] = openpyxl.load_workbook(expected)
        self.pd["E"] = pd.ExcelFile(expected)

    def close(self) -> None:
        """Release the files pandas keeps open."""
        for book in self.pd.values():
            book.close()

    def locate(self, idx: int | str) -> tuple[str, str]:
        """``(book key, sheet name)`` for an OSWorld sheet index; an unknown index gives name ''."""
        if isinstance(idx, int):
            side, how, ref = "R", "I", str(idx)
        elif len(idx) >= 2 and idx[0] in "RE" and idx[1] in "IN":
            side, how, ref = idx[0], idx[1], idx[2:]
        else:
            raise ValueError(f"unrecognized sheet index {idx!r}")
        if how == "N":
            return side, ref
        names: list[str] = list(self.pd[side].sheet_names) if side in self.pd else []
        try:
            return side, names[int(ref)]
        except IndexError:
            return side, ""

    def frame(self, idx: int | str) -> Any:
        import pandas as pd

        side, name = self.locate(idx)
        try:
            return pd.read_excel(self.pd[side], name)
        except (KeyError, ValueError):
            return None

    def sheet(self, idx: int | str) -> Any:
        side, name = self.locate(idx)
        try:
            return self.xl[side][name]
        except KeyError:
            return None

    def printed(self, idx: int | str) -> list[str] | None:
        # OSWorld compares the CSV export LibreOffice writes next to the book: <book>-<sheet>.csv.
        side, name = self.locate(idx)
        path = self.paths[side]
        if path is None:
            return None
        csv_path = Path(path).with_suffix("").as_posix() + f"-{name}.csv"
        try:
            lines = read_lines(csv_path)
        except OSError:
            return None
        return list(itertools.dropwhile(lambda line: not line, (x.strip() for x in reversed(lines))))

    def path_of(self, idx: int | str) -> str | None:
        """The file of the book ``idx`` names."""
        return self.paths[self.locate(idx)[0]]

    def cell_value(self, idx: int | str, coordinate: str) -> Any:
        side, name = self.locate(idx)
        path = self.paths[side]
        return None if path is None else read_cell_value(path, name, coordinate)


ENCODINGS = ("utf-8", "utf-8-sig", "latin-1")
"""The encodings a text file is tried in (latin-1 decodes any bytes, so it is the last one tried)."""


def read_lines(path: str) -> list[str]:
    """The lines of a text file in the first encoding of :data:`ENCODINGS` that decodes it.

    A UTF-8 byte-order mark is kept as ``\ufeff`` at the start of the first line (as OSWorld reads
    it: plain UTF-8 is tried first and decodes it).

    Raises:
        OSError: The file cannot be read.
    """
    with open(path, "rb") as f:
        data = f.read()
    for encoding in ENCODINGS:
        try:
            return data.decode(encoding).splitlines()
        except UnicodeDecodeError:
            continue
    raise AssertionError("latin-1 decodes any bytes")  # pragma: no cover


def _styles(sheet: Any, props: list[str], book_path: str | None) -> dict[str, list[Any]]:
    """Each cell's ``props``; a cell a conditional format makes active shows the format's style."""
    if sheet is None:
        return {}
    styles = {c.coordinate: [read_cell_style(p, c) for p in props] for col in sheet.iter_cols() for c in col}
    if book_path is not None and any(fmt.rules for fmt in sheet.conditional_formatting):
        styles.update(conditional_styles(sheet, book_path, props))
    return styles


def _dimensions(sheet: Any, obj: str, props: list[str]) -> dict[Any, dict[str, Any]]:
    if sheet is None:
        return {}
    holder = getattr(sheet, f"{obj}_dimensions")
    return {key: {p: getattr(dim, p) for p in props} for key, dim in holder.items()}


def _fuzzy(books: _Books, rule: dict[str, Any]) -> bool:
    from openpyxl.utils import get_column_letter
    from openpyxl.worksheet.cell_range import MultiCellRange
    from rapidfuzz import fuzz

    ok = True
    for sub in rule["rules"]:
        for rng in MultiCellRange(sub["range"]):
            for row, col in rng.cells:
                coordinate = f"{get_column_letter(col)}{row}"
                a = str(books.cell_value(rule["sheet_idx0"], coordinate))
                b = str(books.cell_value(rule["sheet_idx1"], coordinate))
                for old, new in sub.get("normalization", []):
                    a, b = a.replace(old, new), b.replace(old, new)
                if "trim_leadings" in sub:
                    a, b = a.lstrip(sub["trim_leadings"]), b.lstrip(sub["trim_leadings"])
                if "trim_trailings" in sub:
                    a, b = a.rstrip(sub["trim_trailings"]), b.rstrip(sub["trim_trailings"])
                if "ignore_chars" in sub:
                    drop = set(sub["ignore_chars"])
                    a = "".join(ch for ch in a if ch not in drop)
                    b = "".join(ch for ch in b if ch not in drop)
                if sub.get("ignore_case", False):
                    a, b = a.lower(), b.lower()
                kind = sub["type"]
                if kind == "includes":
                    ok = ok and b in a
                elif kind == "included_by":
                    ok = ok and a in b
                elif kind == "fuzzy_match":
                    ok = ok and fuzz.ratio(a, b) >= sub.get("threshold", 85.0)
                elif kind == "exact_match":
                    ok = ok and a == b
                else:
                    raise ValueError(f"unknown sheet_fuzzy type {kind!r}")
    return ok


def _frames_equal(books: _Books, rule: dict[str, Any]) -> bool | None:
    a, b = books.frame(rule["sheet_idx0"]), books.frame(rule["sheet_idx1"])
    if a is None:
        return None
    if b is None:
        return False
    # OSWorld takes no ignore_case for sheet data (tasks that pass it are compared case-sensitively).
    digits = rule.get("precision", 4)
    return bool(a.round(digits).equals(b.round(digits)))


def _check_cell(books: _Books, sheet: Any, rule: dict[str, Any]) -> bool:
    cell = sheet[rule["coordinate"]]
    ok = True
    for prop, value_rule in rule["props"].items():
        if prop == "value":
            value = books.cell_value(rule["sheet_idx"], rule["coordinate"])
        else:
            try:
                value = read_cell_style(prop, cell)
            except Exception:  # an unknown property reads as None
                value = None
        ok = ok and match_value_to_rule(value, value_rule)
    return ok


def _check_rule(books: _Books, rule: dict[str, Any]) -> bool | None:
    """Whether one rule holds; None when the sheet it names cannot be loaded (OSWorld scores 0)."""
    from osw_studio.evaluation.metrics.table_objects import charts, filters, pivots

    kind = rule["type"]
    if kind == "sheet_name":
        return list(books.pd["R"].sheet_names) == list(books.pd["E"].sheet_names)
    if kind == "sheet_data":
        return _frames_equal(books, rule)
    if kind == "sheet_print":
        printed0, printed1 = books.printed(rule["sheet_idx0"]), books.printed(rule["sheet_idx1"])
        if printed0 is None:
            return None
        if rule.get("ignore_case", False) and printed1 is not None:
            printed0, printed1 = [x.lower() for x in printed0], [x.lower() for x in printed1]
        return printed0 == printed1
    if kind == "sheet_fuzzy":
        return _fuzzy(books, rule)
    if kind == "style":
        props = rule.get("props", [])
        styles0 = _styles(books.sheet(rule["sheet_idx0"]), props, books.path_of(rule["sheet_idx0"]))
        return styles0 == _styles(books.sheet(rule["sheet_idx1"]), props, books.path_of(rule["sheet_idx1"]))
    if kind == "freeze":
        a, b = books.sheet(rule["sheet_idx0"]), books.sheet(rule["sheet_idx1"])
        if a is None:
            return None
        return b is not None and _freeze_key(a) == _freeze_key(b)
    if kind == "zoom":
        sheet = books.sheet(rule["sheet_idx"])
        if sheet is None:
            return None
        return match_value_to_rule(sheet.sheet_view.zoomScale or 100.0, rule)
    if kind == "data_validation":
        sheet = books.sheet(rule["sheet_idx"])
        if sheet is None:
            return None
        validators = sheet.data_validations.dataValidation
        if len(validators) < len(rule["dv_props"]):
            return False
        return all(
            any(all(match_value_to_rule(getattr(dv, k), m) for k, m in p.items()) for p in rule["dv_props"])
            for dv in validators
        )
    if kind in ("row_props", "col_props"):
        obj = "row" if kind == "row_props" else "column"
        props = rule.get("props", [])
        a = _dimensions(books.sheet(rule["sheet_idx0"]), obj, props)
        return a == _dimensions(books.sheet(rule["sheet_idx1"]), obj, props)
    if kind == "check_cell":
        sheet = books.sheet(rule["sheet_idx"])
        if sheet is None:
            return None
        try:
            return _check_cell(books, sheet, rule)
        except Exception:  # as OSWorld: a cell or rule that cannot be read fails the check
            return False
    loaders = {"filter": filters, "chart": charts, "pivot_table": pivots}
    if kind in loaders:
        load = loaders[kind]
        return load(books.sheet(rule["sheet_idx0"]), rule) == load(books.sheet(rule["sheet_idx1"]), rule)
    raise NotImplementedError(f"compare_table rule {kind!r} is not implemented")


@metric("compare_table", unsupported=_unsupported_rules)
def compare_table(result: str | None, expected: str | None = None, **options: Any) -> Verdict:
    """Check a result workbook against rules, most comparing it with an expected workbook."""
    if result is None:
        return Verdict(0.0, "no result workbook")
    try:
        books = _Books(result)
    except Exception as exc:  # OSWorld scores an unreadable result 0
        return Verdict(0.0, f"cannot read the result workbook: {type(exc).__name__}: {exc}")
    try:
        if expected is not None:
            books.add_expected(expected)
        for i, rule in enumerate(options["rules"]):
            ok = _check_rule(books, rule)
            if not ok:
                what = "cannot load the sheet for" if ok is None else "failed"
                return Verdict(0.0, f"rule {i} ({rule['type']}) {what}")
    finally:
        books.close()
    return Verdict(1.0, f"all {len(options['rules'])} rules hold")


def _freeze_key(sheet: Any) -> tuple[Any, ...]:
    """What a sheet freezes: the frozen column and row counts, whatever cell the user scrolled to.

    openpyxl's ``freeze_panes`` is the pane's top-left visible cell, which moves with scrolling; a
    frozen pane's boundary is its ``xSplit``/``ySplit``. Panes that are split, not frozen, keep the cell.
    """
    pane = sheet.sheet_view.pane
    if pane is None:
        return ("none",)
    columns = int(pane.xSplit) if pane.xSplit is not None else 0
    rows = int(pane.ySplit) if pane.ySplit is not None else 0
    if (pane.state or "").lower() in ("frozen", "frozensplit"):
        return ("frozen", columns, rows)
    return ("other", columns, rows, pane.topLeftCell)


@metric("compare_csv")
def compare_csv(result: str | None, expected: str | list[str], **options: Any) -> Verdict:
    """A CSV file has the same lines as the expected one (or as any of a list of expected files).

    Files are read in the first of :data:`ENCODINGS` that decodes them; ``strict: false`` strips each
    line, ``ignore_case`` folds case. An expected file that cannot be read is skipped.
    """
    if result is None:
        return Verdict(0.0, "no result file")
    try:
        a = read_lines(result)
    except OSError as exc:
        return Verdict(0.0, f"cannot read the result: {exc}")
    expecteds = [expected] if isinstance(expected, str) else list(expected)
    for i, path in enumerate(expecteds):
        try:
            b = read_lines(path)
        except OSError:
            continue
        x, y = a, b
        if not options.get("strict", True):
            x, y = [line.strip() for line in x], [line.strip() for line in y]
        if options.get("ignore_case", False):
            x, y = [line.lower() for line in x], [line.lower() for line in y]
        if x == y:
            return Verdict(1.0, "the lines match" if len(expecteds) == 1 else f"matches expected file {i}")
    return Verdict(0.0, "the lines differ")
