r"""OSWorld's accessibility XML, linearised to the table its prompt agents read, trimmed to a budget.

Each kept node becomes one tab-separated row under the header
``tag  name  text  class  description  position (top-left x&y)  size (w&h)``. A node is kept, as in
OSWorld's ``filter_nodes``, when it is an element people act on or read (buttons, items, text, ...),
is showing and visible on the screen, has a name, text or is an image, and has a non-empty box.

Examples:
    >>> xml = (
    ...     '<desktop-frame xmlns:st="https://accessibility.ubuntu.example.org/ns/state" '
    ...     'xmlns:cp="https://accessibility.ubuntu.example.org/ns/component">'
    ...     '<push-button name="Save" st:showing="true" st:visible="true" st:enabled="true" '
    ...     'cp:screencoord="(10, 20)" cp:size="(80, 30)"/>'
    ...     '<push-button name="Hidden" st:showing="false" st:visible="true" '
    ...     'cp:screencoord="(0, 0)" cp:size="(8, 8)"/></desktop-frame>')
    >>> print(linearize_accessibility_tree(xml).replace("\t", " | "))
    tag | name | text | class | description | position (top-left x&y) | size (w&h)
    push-button | Save | "" |  |  | (10, 20) | (80, 30)
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from osw_studio.guest.atspi_dump import NAMESPACES

STATE = "{" + NAMESPACES["st"] + "}"
COMPONENT = "{" + NAMESPACES["cp"] + "}"
ATTRIBUTES = "{" + NAMESPACES["attr"] + "}"
VALUE = "{" + NAMESPACES["val"] + "}"

HEADER = "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)"

_KEEP_SUFFIXES = (
    "item",
    "button",
    "heading",
    "label",
    "scrollbar",
    "searchbox",
    "textbox",
    "link",
    "tabelement",
)
_KEEP_TAGS = frozenset(
    {
        "alert", "canvas", "check-box", "checkbox", "combo-box", "entry", "icon", "image", "paragraph",
        "scroll-bar", "section", "slider", "static", "table-cell", "terminal", "text", "textfield",
        "textarea", "menu",
    }
)  # fmt: skip
_IMAGE_TAGS = frozenset({"image", "icon", "canvas"})
_PAIR = re.compile(r"\(\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*\)")

CHARS_PER_TOKEN = 4
"""A plain estimate of characters per token; tables of UI names tokenise at about this rate."""


def _pair(value: str | None) -> tuple[int, int] | None:
    match = _PAIR.fullmatch(value.strip()) if value else None
    return (round(float(match.group(1))), round(float(match.group(2)))) if match else None


def _tag(element: ET.Element) -> str:
    return element.tag.rsplit("}", 1)[-1]


def _keep(element: ET.Element, screen: tuple[int, int] | None) -> bool:
    tag = _tag(element)
    if not (tag.startswith("document") or tag.endswith(_KEEP_SUFFIXES) or tag in _KEEP_TAGS):
        return False
    if element.get(STATE + "showing") != "true" or element.get(STATE + "visible") != "true":
        return False
    named = bool(element.get("name")) or bool((element.text or "").strip()) or tag in _IMAGE_TAGS
    if not named:
        return False
    position, size = _pair(element.get(COMPONENT + "screencoord")), _pair(element.get(COMPONENT + "size"))
    if position is None or size is None or size[0] <= 0 or size[1] <= 0:
        return False
    if position[0] < 0 or position[1] < 0:
        return False
    return not (screen is not None and (position[0] >= screen[0] or position[1] >= screen[1]))


def _cell(value: str | None) -> str:
    text = " ".join((value or "").split())
    return text


def _text(element: ET.Element) -> str:
    text = (element.text or "").strip() or (element.get(VALUE + "value") or "")
    text = _cell(text)
    # Quoted like OSWorld's table, so an empty or tab-like text stays one cell.
    return '"' + text.replace('"', '""') + '"'


def linearize_accessibility_tree(xml: str, *, screen: tuple[int, int] | None = None) -> str:
    """The table of kept nodes (header first). Unparsable XML gives just the header and a note."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        return f"{HEADER}\n(the accessibility tree could not be read: {exc})"
    rows = [HEADER]
    for element in root.iter():
        if not _keep(element, screen):
            continue
        position = _pair(element.get(COMPONENT + "screencoord"))
        size = _pair(element.get(COMPONENT + "size"))
        assert position is not None and size is not None  # checked by _keep
        rows.append(
            "\t".join(
                [
                    _tag(element),
                    _cell(element.get("name")),
                    _text(element),
                    _cell(element.get(ATTRIBUTES + "class") or element.get("class")),
                    _cell(element.get(ATTRIBUTES + "description") or element.get("description")),
                    f"({position[0]}, {position[1]})",
                    f"({size[0]}, {size[1]})",
                ]
            )
        )
    return "\n".join(rows)


def trim_to_budget(table: str, max_tokens: int) -> str:
    r"""Keep whole rows of ``table`` until about ``max_tokens`` tokens, then say how many were cut.

    >>> trimmed = trim_to_budget("h\n" + "\n".join(f"row {i}" for i in range(100)), 20)
    >>> trimmed.splitlines()[-2:]
    ['row 11', '[... 88 more rows cut to fit the token budget]']
    """
    budget = max_tokens * CHARS_PER_TOKEN
    if len(table) <= budget:
        return table
    lines = table.split("\n")
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > budget and kept:
            break
        kept.append(line)
        used += len(line) + 1
    cut = len(lines) - len(kept)
    return "\n".join([*kept, f"[... {cut} more rows cut to fit the token budget]"])
