"""OSWorld's value rules: ``{"method": ..., "ref": ...}`` matched against a value.

Methods: ``eq ne lt le gt ge``; ``re`` with flags (``re.I``, ``re.IGNORECASE.MULTILINE``: a search);
``approx:T`` (numeric, within T); ``range.XY`` with ``X``/``Y`` in ``t`` (strict) or ``e`` (inclusive),
e.g. ``range.te`` is ``ref[0] < value <= ref[1]``; ``str_list_eq`` / ``str_set_eq`` (a comma-separated
string against a list); ``spreadsheet_range`` (a cell range between two bounds).

Examples:
    >>> match_value_to_rule(3, {"method": "gt", "ref": 2})
    True
    >>> match_value_to_rule("Total: 12", {"method": "re.I", "ref": "total"})
    True
    >>> match_value_to_rule("10.004", {"method": "approx:0.01", "ref": 10})
    True
    >>> match_value_to_rule(2, {"method": "range.te", "ref": [0, 2]})
    True
    >>> match_value_to_rule('"b,a"', {"method": "str_set_eq", "ref": ["a", "b"]})
    True
"""

from __future__ import annotations

import functools
import operator
import re
from typing import Any

from osw_studio.core import untrusted_regex
from osw_studio.core.errors import EvaluationError

_COMPARE = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt}
_COMPARE["ge"] = operator.ge


def match_value_to_rule(value: Any, rule: dict[str, Any]) -> bool:
    """Whether ``value`` satisfies ``rule`` (see the module docstring for the methods)."""
    method: str = rule["method"]
    ref: Any = rule.get("ref")
    if method.startswith("re"):
        flags = functools.reduce(
            operator.or_, (getattr(re, f) for f in method.split(".")[1:]), re.RegexFlag(0)
        )
        return untrusted_regex.search(ref, value, flags, where=f"the rule's {method} pattern")
    if method in _COMPARE:
        return bool(_COMPARE[method](value, ref))
    if method.startswith("approx:"):
        try:
            return abs(float(value) - float(ref)) <= float(method.split(":", 1)[1])
        except (TypeError, ValueError):
            return False
    if method == "spreadsheet_range":
        from openpyxl.worksheet.cell_range import MultiCellRange

        inner, outer = MultiCellRange(ref[0]), MultiCellRange(ref[1])
        return all(r in value for r in inner) and all(r in outer for r in value)
    if method.startswith("range."):
        left = _COMPARE["l" + method[6]]
        right = _COMPARE["l" + method[7]]
        return bool(left(ref[0], value)) and bool(right(value, ref[1]))
    if method in ("str_list_eq", "str_set_eq"):
        items = str(value).strip("\"'").split(",")
        if method == "str_list_eq":
            return items == list(ref)
        return set(items) == set(ref)
    raise EvaluationError(f"unknown rule method {method!r}", hint="see OSWorld's _match_value_to_rule")
