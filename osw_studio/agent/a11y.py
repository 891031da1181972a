r"""OSWorld's accessibility XML, linearised to the table its prompt agents read, trimmed to a budget.

Each kept node becomes one tab-separated row under the header
``tag  name  text  class  description  position (top-left x&y)  size (w&h)``, exactly as OSWorld's
``linearize_accessibility_tree`` writes it for Ubuntu guests. A node is kept, as in its ``filter_nodes``,
when its tag is one people act on or read (buttons, items, text, ...), it is showing and visible, it is
enabled, editable, expandable or checkable, it has a name or text, and its position is not negative and its
size not empty. The text cell is the node's text, quoted (with doubled quotes) only when it holds a
quote; position and size are the attributes as the guest wrote them. OSWorld reads class and description
from its Windows attribute namespace even on Ubuntu, so on Ubuntu trees those cells stay empty: they do
here too, or the model would not see the table OSWorld's agents see. Where OSWorld ``eval``s the position
and size, this module parses two numbers and skips a node it cannot read.

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

import functools
import math
from typing import Any

from lxml import etree

from osw_studio.guest.atspi_dump import NAMESPACES

STATE = "{" + NAMESPACES["st"] + "}"
COMPONENT = "{" + NAMESPACES["cp"] + "}"
ATTRIBUTES = "{" + NAMESPACES["attr"] + "}"
VALUE = "{" + NAMESPACES["val"] + "}"

HEADER = "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)"
HEADER_SOM = "index\ttag\tname\ttext"
"""The header of the set-of-marks table (:mod:`osw_studio.agent.som`)."""

_KEEP_SUFFIXES = (
    "item", "button", "heading", "label", "scrollbar", "searchbox", "textbox", "link", "tabelement",
    "textfield", "textarea", "menu",
)  # fmt: skip
_KEEP_TAGS = frozenset(
    {
        "alert", "canvas", "check-box", "combo-box", "entry", "icon", "image", "paragraph", "scroll-bar",
        "section", "slider", "static", "table-cell", "terminal", "text", "netuiribbontab", "start",
        "trayclockwclass", "traydummysearchcontrol", "uiimage", "uiproperty", "uiribboncommandbar",
    }
)  # fmt: skip
_ABLE = ("enabled", "editable", "expandable", "checkable")
# OSWorld's agent reads class and description in this namespace for Ubuntu trees too.
OSWORLD_ATTRIBUTES = "{https://accessibility.windows.example.org/ns/attributes}"

CHARS_PER_TOKEN = 4
"""A plain estimate of characters per token (OSWorld counts GPT-4's tokens with tiktoken, whose tables
are downloaded at run time; UI tables tokenise at about this rate)."""
TRIM_MARK = "[...]\n"
"""What follows a table cut to its budget, as in OSWorld."""

# lxml parses a large tree several times faster than ElementTree (the table is built every step); no
# entities are expanded and nothing is fetched, as trees come from the guest.
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
_SHOWING, _VISIBLE = STATE + "showing", STATE + "visible"
_ABLE_KEYS = tuple(STATE + name for name in _ABLE)
_POSITION, _SIZE = COMPONENT + "screencoord", COMPONENT + "size"


@functools.lru_cache(maxsize=4096)  # sizes and positions repeat across a tree and across steps
def _pair(value: str | None) -> tuple[float, float] | None:
    """``"(x, y)"`` as two numbers; None for anything else (OSWorld ``eval``s it; this reads numbers only).

    >>> _pair("(10, -2)"), _pair("(nan, 2)"), _pair("__import__('os')")
    ((10.0, -2.0), None, None)
    """
    if not value:
        return None
    text = value.strip()
    if not (text.startswith("(") and text.endswith(")")):
        return None
    parts = text[1:-1].split(",")
    if len(parts) != 2:
        return None
    try:
        x, y = float(parts[0]), float(parts[1])
    except ValueError:
        return None
    return (x, y) if math.isfinite(x) and math.isfinite(y) else None


def keep_node(element: Any, *, images: bool = False) -> bool:
    """Whether OSWorld's filter keeps this node (``images``: also a nameless node marked as an image)."""
    tag = element.tag
    if not (tag.startswith("document") or tag.endswith(_KEEP_SUFFIXES) or tag in _KEEP_TAGS):
        return False
    get = element.get
    if get(_SHOWING) != "true" or get(_VISIBLE) != "true":
        return False
    if not any(get(key) == "true" for key in _ABLE_KEYS):
        return False
    if not (get("name") or element.text or (images and get("image") == "true")):
        return False
    position = _pair(get(_POSITION, "(-1, -1)"))
    size = _pair(get(_SIZE, "(-1, -1)"))
    if position is None or size is None:
        return False
    return position[0] >= 0 and position[1] >= 0 and size[0] > 0 and size[1] > 0


def quoted(text: str) -> str:
    """A table cell: the text, quoted with doubled quotes only when it holds a quote."""
    return text if '"' not in text else '"' + text.replace('"', '""') + '"'


def linearize_accessibility_tree(xml: str) -> str:
    """The table of kept nodes (header first). Unparsable XML gives just the header and a note."""
    try:
        root = etree.fromstring(xml.encode("utf-8"), _PARSER)
    except (etree.XMLSyntaxError, ValueError) as exc:
        return f"{HEADER}\n(the accessibility tree could not be read: {exc})"
    rows = [HEADER]
    for element in root.iter(etree.Element):  # elements only: no comments or processing instructions
        if not keep_node(element):
            continue
        rows.append(
            "\t".join(
                [
                    element.tag,
                    element.get("name", ""),
                    quoted(element.text) if element.text else '""',
                    element.get(OSWORLD_ATTRIBUTES + "class", ""),
                    element.get(OSWORLD_ATTRIBUTES + "description", ""),
                    element.get(COMPONENT + "screencoord", ""),
                    element.get(COMPONENT + "size", ""),
                ]
            )
        )
    return "\n".join(rows)


def trim_to_budget(table: str, max_tokens: int) -> str:
    r"""Cut ``table`` after about ``max_tokens`` tokens and mark the cut, as OSWorld does.

    >>> trim_to_budget("h\n" + "\n".join(f"row {i}" for i in range(100)), 5)[-12:]
    'row 2\n[...]\n'
    >>> trim_to_budget("short", 10)
    'short'
    """
    budget = max_tokens * CHARS_PER_TOKEN
    if len(table) <= budget:
        return table
    return table[:budget] + TRIM_MARK
