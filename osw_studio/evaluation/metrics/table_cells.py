"""One cell of a workbook as OSWorld's table rules read it: its stored value and its style properties."""

from __future__ import annotations

import zipfile
from typing import Any

_MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def read_cell_value(xlsx: str, sheet_name: str, coordinate: str) -> Any:
    """The stored value of a cell as the file has it, or None; OSWorld's reading of the XML.

    The sheet's part is ``xl/worksheets/sheet<sheetId>.xml`` (the workbook's ``sheetId``, not its
    relationships); numbers are floats, shared and inline strings and formula strings are text, an
    error cell is its code (``#DIV/0!``); booleans, dates and rich inline strings read as None.
    """
    import lxml.etree

    ns = {"m": _MAIN_NS}
    try:
        with zipfile.ZipFile(xlsx) as z:
            shared: list[str] = []
            try:
                sst = lxml.etree.fromstring(z.read("xl/sharedStrings.xml"))
                shared = ["".join(t.text for t in si.iter(f"{{{_MAIN_NS}}}t")) for si in sst]
            except Exception:  # no (or unreadable) shared strings: none
                shared = []
            book = lxml.etree.fromstring(z.read("xl/workbook.xml"))
            ids = {s.get("name"): s.get("sheetId") for s in book.iterfind("m:sheets/m:sheet", ns)}
            root = lxml.etree.fromstring(z.read(f"xl/worksheets/sheet{ids[sheet_name]}.xml"))
    except Exception:  # not a workbook, no such sheet or part
        return None
    cells = root.xpath(f'//m:row/m:c[@r="{coordinate}"]', namespaces=ns)
    if not cells:
        return None
    cell = cells[0]
    kind = cell.get("t", "n")
    # OSWorld reads the cell through xmltodict, which strips the text of <v> and <is><t> and gives
    # None for an empty one: a formula string "ripe " reads "ripe".
    text = _stripped(cell.find("m:v", ns))
    if kind == "n":
        try:
            return float(text) if text is not None else None
        except ValueError:
            return None
    if kind == "s":
        return None if text is None else shared[int(text)]
    if kind in ("str", "e"):
        return text
    if kind == "inlineStr":
        return _stripped(cell.find("m:is/m:t", ns))
    return None


def _stripped(element: Any) -> str | None:
    if element is None:
        return None
    text: str = (element.text or "").strip()
    return text or None


def read_cell_style(name: str, cell: Any, dxf: Any = None) -> Any:
    """One style property of an openpyxl cell, named as OSWorld's rules name them.

    With ``dxf`` (the differential style of a conditional format that is active on the cell), the
    font, fill and number format are the format's; a part the format does not set reads as None.
    """
    from openpyxl.cell.cell import MergedCell

    if dxf is not None:
        return _dxf_style(name, cell, dxf)
    has_value = cell.value is not None
    if name == "number_format":
        return cell.number_format if has_value and cell.data_type == "n" else None
    font_props = {
        "font_name": "name",
        "font_family": "family",
        "font_bold": "bold",
        "font_italic": "italic",
        "font_underline": "underline",
        "font_size": "size",
    }
    if name in font_props:
        return getattr(cell.font, font_props[name]) if has_value else None
    if name == "font_color":
        return cell.font.color.rgb if has_value and cell.font.color is not None else None
    if name == "fill_type":
        return getattr(cell.fill, "tagname", None)
    if name in ("bgcolor", "fgcolor"):
        try:
            return cell.fill.fgColor.rgb
        except AttributeError:
            return None
    if name == "hyperlink":
        return (cell.hyperlink or "") if has_value else None
    if name == "merge":
        return isinstance(cell, MergedCell)
    raise ValueError(f"unsupported cell style {name!r}")


def _dxf_style(name: str, cell: Any, dxf: Any) -> Any:
    has_value = cell.value is not None
    if name == "number_format":
        fmt = dxf.numFmt
        return fmt.formatCode if has_value and cell.data_type == "n" and fmt is not None else None
    font_props = {
        "font_name": "name",
        "font_family": "family",
        "font_bold": "bold",
        "font_italic": "italic",
        "font_underline": "underline",
        "font_size": "size",
    }
    if name in font_props:
        return getattr(dxf.font, font_props[name]) if has_value and dxf.font is not None else None
    if name == "font_color":
        font = dxf.font
        return font.color.rgb if has_value and font is not None and font.color is not None else None
    if name == "fill_type":
        return getattr(dxf.fill, "tagname", None)
    if name in ("bgcolor", "fgcolor"):
        try:
            return dxf.fill.bgColor.rgb
        except AttributeError:
            return None
    return read_cell_style(name, cell)
