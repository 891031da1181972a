"""Which cells a worksheet's conditional formats make active, as OSWorld's ``style`` rule decides it.

A ``cellIs`` rule compares each cell's stored value with its formulas' constant values (a formula that
needs other cells makes the rule inert); ``expression`` and the text and error rules evaluate their
first formula with the cell's value as its one reference. Formulas are evaluated by the ``formulas``
library, as OSWorld does; a comparison of values of different types is false. Other rule types
(``top10``, ``duplicateValues``, colour scales...) reuse the test of the sheet's previous rule, or
activate nothing when there is none. In each rule, the test stops after more than 50 empty cells.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any

_ABSOLUTE = re.compile(r"\$[A-Z]{1,3}\$\d+")
_FORMULA_TYPES = frozenset(
    {
        "expression",
        "containsText",
        "notContainsText",
        "endsWith",
        "beginsWith",
        "containsErrors",
        "notContainsErrors",
    }
)
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "lessThanOrEqual": operator.le,
    "lessThan": operator.lt,
    "equal": operator.eq,
    "greaterThanOrEqual": operator.ge,
    "notEqual": operator.ne,
    "greaterThan": operator.gt,
}
_MAX_EMPTY = 50

Test = Callable[[Any], Any]


def _cell_is(op: str, refs: list[Any]) -> Test:
    def test(value: Any) -> Any:
        if op in _COMPARE:
            return _COMPARE[op](value, refs[0])
        if op in ("between", "notBetween"):
            low, high = min(refs), max(refs)
            inside = low <= value <= high
            return inside if op == "between" else not inside
        return False

    return test


def _rule_test(rule: Any, parser: Any) -> Test | None:
    """The test of one rule, or None when its formulas cannot be compiled or computed (it is skipped)."""
    compiled = []
    for formula in rule.formula:
        if _ABSOLUTE.search(formula):
            raise ValueError(
                f"conditional format formula {formula!r} refers to absolute cells, which OSWorld's "
                "style rule cannot evaluate either"
            )
        try:
            compiled.append(parser.ast("=" + formula)[1].compile())
        except Exception:
            return None
    if rule.type in _FORMULA_TYPES:
        condition = compiled[0]
        return lambda value: condition(value)
    if rule.type == "cellIs":
        try:
            refs = [f() for f in compiled]
        except Exception:
            return None
        return _cell_is(rule.operator, refs)
    return _UNSUPPORTED


def _unsupported(value: Any) -> Any:  # pragma: no cover - a marker, never called
    raise NotImplementedError


_UNSUPPORTED: Test = _unsupported


def conditional_styles(sheet: Any, book_path: str, props: list[str]) -> dict[str, list[Any]]:
    """``{coordinate: props}`` of the cells a conditional format of ``sheet`` makes active."""
    import formulas
    from openpyxl.utils import get_column_letter

    from osw_studio.evaluation.metrics.table_cells import read_cell_style, read_cell_value

    parser = formulas.Parser()
    out: dict[str, list[Any]] = {}
    last: Test | None = None
    for fmt in sheet.conditional_formatting:
        for rule in fmt.rules:
            test = _rule_test(rule, parser)
            if test is None:
                continue
            if test is _UNSUPPORTED:
                test = last
            else:
                last = test
            empty = 0
            for cell_range in fmt.cells:
                for row, col in cell_range.cells:
                    value = read_cell_value(book_path, sheet.title, f"{get_column_letter(col)}{row}")
                    if value is None:
                        empty += 1
                        if empty > _MAX_EMPTY:
                            break
                        continue
                    try:
                        active = bool(test(value)) if test is not None else False
                    except Exception:  # a formula that fails on this value: not active
                        active = False
                    if active:
                        cell = sheet.cell(row=row, column=col)
                        out[cell.coordinate] = [read_cell_style(p, cell, rule.dxf) for p in props]
    return out
