"""Summaries of a worksheet's auto-filter, charts and pivot tables, as OSWorld's rules compare them."""

from __future__ import annotations

import itertools
from typing import Any


def filters(sheet: Any, rule: dict[str, Any]) -> dict[str, Any]:
    """The auto-filter range, its column filters and its sort state."""
    if sheet is None:
        return {}
    auto = sheet.auto_filter
    columns = []
    for col in auto.filterColumn:
        entry: dict[str, Any] = {
            "col_id": col.colId,
            "hidden_button": col.hiddenButton,
            "show_button": col.showButton,
        }
        if col.filters is not None:
            entry["filters_blank"] = col.filters.blank
            entry["filters"] = set(col.filters.filter)
        if col.customFilters is not None:
            entry["custom_filters_op"] = col.customFilters._and
            entry["custom_filters"] = {(f.operator, f.val) for f in col.customFilters.customFilter}
        columns.append(entry)
    out: dict[str, Any] = {"ref": auto.ref, "filter_column": sorted(columns, key=lambda d: d["col_id"])}
    sort = auto.sortState
    if sort is not None:
        out["sort_state"] = {
            "sort": sort.columnSort,
            "case": sort.caseSensitive,
            "method": sort.sortMethod,
            "ref": sort.ref,
            "condition": [
                {
                    "descending": c.descending,
                    "key": c.sortBy,
                    "ref": c.ref,
                    "custom_list": c.customList,
                    "dxf_id": c.dxfId,
                    "icon": c.iconSet,
                    "iconid": c.iconId,
                }
                for c in sort.sortCondition
            ],
        }
    return out


def _ref(source: Any) -> str:
    for kind in ("numRef", "strRef"):
        ref = getattr(source, kind, None)
        if ref is not None and getattr(ref, "f", None) is not None:
            return str(ref.f)
    return ""


def _title(title: Any) -> Any:
    try:
        return title.tx.rich.p[0].r[0].t
    except (AttributeError, IndexError, TypeError):
        return None


def charts(sheet: Any, rule: dict[str, Any]) -> dict[str, Any]:
    """Charts keyed by their data series (``values,categories;...``) with the ``chart_props`` asked."""
    if sheet is None:
        return {}
    props = set(rule.get("chart_props", []))
    out: dict[str, Any] = {}
    for chart in sheet._charts:
        key = ";".join(f"{_ref(s.val)},{_ref(s.cat)}" for s in chart.series)
        info: dict[str, Any] = {}
        if "title" in props:
            info["title"] = _title(chart.title)
        if "legend" in props:
            info["legend"] = chart.legend.position if chart.legend is not None else None
        if "anchor" in props:
            a = chart.anchor
            info["anchor"] = [a.editAs, a._from.col, a.to.row, a.to.col, a.to.row]
        if "width" in props:
            info["width"] = chart.width
        if "height" in props:
            info["height"] = chart.height
        if "type" in props:
            info["type"] = chart.tagname
        if "direction" in props:
            info["direction"] = getattr(chart, "barDir", None)
        for axis in ("x", "y", "z"):
            if f"{axis}title" in props:
                ax = getattr(chart, f"{axis}_axis", None)
                info[f"{axis}title"] = _title(getattr(ax, "title", None))
        out[key] = info
    return out


def pivots(sheet: Any, rule: dict[str, Any]) -> dict[str, Any]:
    """Pivot tables keyed by their source range with the ``pivot_props`` asked."""
    from openpyxl.utils import coordinate_to_tuple

    if sheet is None:
        return {}
    props = set(rule.get("pivot_props", []))
    out: dict[str, Any] = {}
    for pivot in sheet._pivots:
        raw = [
            [(item.h, item.x) for item in field.items if item.x is not None] for field in pivot.pivotFields
        ]
        trimmed = list(itertools.dropwhile(lambda r: not r, raw))
        left = len(raw) - len(trimmed)
        selection = list(itertools.dropwhile(lambda r: not r, reversed(trimmed)))[::-1]
        right = len(trimmed) - len(selection)
        source = pivot.cache.cacheSource
        first, last = source.worksheetSource.ref.split(":")
        r1, c1 = coordinate_to_tuple(first)
        r2, c2 = coordinate_to_tuple(last)
        key = f"{source.type};{(r1, c1 + left)}:{(r2, c2 - right)};{source.worksheetSource.sheet}"
        info: dict[str, Any] = {}
        simple = {
            "name": "name",
            "show_total": "visualTotals",
            "show_empty_row": "showEmptyRow",
            "show_empty_col": "showEmptyCol",
            "show_headers": "showHeaders",
            "location": "location",
        }
        for prop, attr in simple.items():
            if prop in props:
                info[prop] = getattr(pivot, attr)
        if "filter" in props or "selection" in props:
            info["selection"] = selection if "ordered" in props else [set(r) for r in selection]
        if "filter" in props:
            info["filter_fields"] = {f.fld for f in pivot.pageFields}
        if "col_fields" in props:
            info["col_fields"] = [f.x - left for f in pivot.colFields]
        if "row_fields" in props:
            info["row_fields"] = [f.x - left for f in pivot.rowFields]
        if "data_fields" in props:
            named = "data_fields_name" in props
            info["data_fields"] = [
                f"{f.fld - left:d};{f.name if named else ''};{f.subtotal};{f.showDataAs}"
                for f in pivot.dataFields
            ]
        out[key] = info
    return out
