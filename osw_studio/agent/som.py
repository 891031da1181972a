r"""Set-of-marks: the screenshot tagged with numbered boxes from the accessibility tree, as OSWorld's ``som``.

OSWorld's PromptAgent in its ``som`` observation type draws, on the screenshot, a box around each node of
the accessibility tree that its filter keeps (the same filter as its table, also keeping nodes marked as
images), skipping a box whose area is a single colour; under each box's bottom-left corner it writes the
box's number, white on black, in Pillow's default font. The model is shown the tagged image and a table
``index  tag  name  text`` of the boxes, and answers with pyautogui code that may name ``tag_N``: the
centre of box N (``x + w // 2``, ``y + h // 2``).

Boxes are drawn in order on the same image, so a later box's single-colour test sees the earlier boxes'
lines, as in OSWorld. Position and size are read as two integers (OSWorld's ``int()``); a node with
other numbers is not tagged.

Examples:
    >>> import io
    >>> from PIL import Image
    >>> shot = io.BytesIO()
    >>> Image.new("RGB", (200, 100), (255, 255, 255)).save(shot, "PNG")
    >>> xml = (
    ...     '<desktop-frame xmlns:st="https://accessibility.ubuntu.example.org/ns/state" '
    ...     'xmlns:cp="https://accessibility.ubuntu.example.org/ns/component">'
    ...     '<push-button name="OK" st:showing="true" st:visible="true" st:enabled="true" '
    ...     'cp:screencoord="(10, 20)" cp:size="(80, 30)"/></desktop-frame>')
    >>> marks = tag_screenshot(shot.getvalue(), xml)
    >>> marks.boxes  # a plain white area is not tagged
    []
    >>> tag_names([(10, 20, 80, 31)])
    {'tag_1': (50, 35)}
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from lxml import etree
from PIL import Image, ImageDraw, ImageFont

from osw_studio.agent.a11y import COMPONENT, HEADER_SOM, keep_node, quoted

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


@dataclass(frozen=True)
class Marks:
    """A tagged screenshot.

    Attributes:
        image: The tagged screenshot, PNG.
        boxes: Each tagged box as ``(x, y, width, height)`` in screen pixels; box N is ``boxes[N - 1]``.
        table: The boxes as OSWorld's table: a header, then ``index  tag  name  text`` per box.
    """

    image: bytes
    boxes: list[tuple[int, int, int, int]]
    table: str


def _integers(value: str | None) -> tuple[int, int] | None:
    if not value:
        return None
    parts = value.strip("()").split(", ")
    if len(parts) != 2:
        return None
    try:
        return int(parts[0]), int(parts[1])
    except ValueError:
        return None


def _font() -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.truetype("arial.ttf", 15)  # what OSWorld asks for first, where it is installed
    except OSError:
        return ImageFont.load_default()


def tag_screenshot(screenshot: bytes, tree: str) -> Marks:
    """Tag ``screenshot`` with the boxes of ``tree``'s kept nodes (see the module docs).

    An unreadable tree tags nothing (the image comes back re-encoded, with an empty table).
    """
    image = Image.open(io.BytesIO(screenshot))
    image.load()
    draw = ImageDraw.Draw(image)
    font = _font()
    boxes: list[tuple[int, int, int, int]] = []
    rows = [HEADER_SOM]
    try:
        root = etree.fromstring(tree.encode("utf-8"), _PARSER)
        nodes = [e for e in root.iter(etree.Element) if keep_node(e, images=True)]
    except (etree.XMLSyntaxError, ValueError):
        nodes = []
    for node in nodes:
        position = _integers(node.get(COMPONENT + "screencoord"))
        size = _integers(node.get(COMPONENT + "size"))
        if position is None or size is None or size[0] <= 0 or size[1] <= 0:
            continue
        left, top = position
        right, bottom = left + size[0], top + size[1]
        extrema = image.crop((left, top, right, bottom)).getextrema()
        bands = extrema if isinstance(extrema[0], tuple) else (extrema,)
        if all(low == high for low, high in bands):
            continue  # a single colour: nothing to see there
        draw.rectangle([(left, top), (right, bottom)], outline="red", width=1)
        number = str(len(boxes) + 1)
        label = draw.textbbox((left, bottom), number, font=font, anchor="lb")
        draw.rectangle(label, fill="black")
        draw.text((left, bottom), number, font=font, anchor="lb", fill="white")
        boxes.append((left, top, size[0], size[1]))
        text = quoted(node.text) if node.text else '""'
        rows.append(f"{number}\t{node.tag}\t{node.get('name', '')}\t{text}")
    out = io.BytesIO()
    image.save(out, format="PNG")
    return Marks(image=out.getvalue(), boxes=boxes, table="\n".join(rows))


def tag_names(boxes: list[tuple[int, int, int, int]]) -> dict[str, tuple[int, int]]:
    """``tag_N`` for each box: its centre in screen pixels, as OSWorld defines it for the model's code."""
    return {f"tag_{i}": (x + w // 2, y + h // 2) for i, (x, y, w, h) in enumerate(boxes, 1)}
