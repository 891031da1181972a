"""More LibreOffice Impress metrics, each scoring as OSWorld's function of the same name.

Slide transitions, orientation, background colours, the page number colour, a stretched and centred
image, the presenter console and auto-save settings, and whether the slide panel is shown.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
import zipfile
from typing import Any

from osw_studio.evaluation.registry import metric

_OOR = "{http://openoffice.org/2001/registry}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"


def _presentation(path: str) -> Any:
    from pptx import Presentation

    return Presentation(path)


def _registry_values(path: str, item_path: str, prop_name: str) -> list[str | None]:
    """Values of ``prop_name`` in the ``item_path`` items of a LibreOffice registry file, in order."""
    root = ET.parse(path).getroot()
    values: list[str | None] = []
    for item in root.iter("item"):
        if item is root or item.get(f"{_OOR}path") != item_path:
            continue
        for prop in item.iter("prop"):
            if prop.get(f"{_OOR}name") == prop_name:
                value = prop.find(".//value")
                values.append(None if value is None else value.text)
    return values


@metric("check_presenter_console_disable")
def check_presenter_console_disable(result: str | None) -> float:
    """LibreOffice's settings turn Impress's presenter screen off (``EnablePresenterScreen`` false)."""
    try:
        root = ET.parse(str(result)).getroot()
        for item in root.iter("item"):
            if item is root or item.get(f"{_OOR}path") != "/org.openoffice.Office.Impress/Misc/Start":
                continue
            for prop in item.findall("prop"):
                if prop.get(f"{_OOR}name") == "EnablePresenterScreen":
                    value = prop.find("value")
                    return float(value is not None and str(value.text).lower() == "false")
        return 0.0
    except Exception:
        return 0.0


@metric("check_auto_saving_time")
def check_auto_saving_time(result: str | None, rules: dict[str, Any]) -> float:
    """LibreOffice's settings save recovery information every ``rules["minutes"]`` minutes."""
    try:
        root = ET.parse(str(result)).getroot()
    except (ET.ParseError, FileNotFoundError):
        return 0.0  # OSWorld gives no score (None) for a broken or missing settings file
    interval = None
    for item in root.iter("item"):
        if item is root or item.get(f"{_OOR}path") != "/org.openoffice.Office.Common/Save/Document":
            continue
        for prop in item.iter("prop"):
            if prop is not item and prop.get(f"{_OOR}name") == "AutoSaveTimeIntervall":
                value = prop.find(".//value")
                interval = value.text if value is not None else None
                break
    if interval is None:
        return 0.0
    return float(int(interval) == rules["minutes"])


@metric("check_slide_orientation_Portrait")
def check_slide_orientation_portrait(result: str) -> float:
    """The slides are taller than wide."""
    presentation = _presentation(result)
    return float(presentation.slide_width < presentation.slide_height)


@metric("check_transition")
def check_transition(result: str, rules: dict[str, Any]) -> float:
    """Slide ``slide_idx`` (from 0) has a transition of kind ``transition_type`` (``dissolve`` ...)."""
    with zipfile.ZipFile(result) as archive:
        name = f"ppt/slides/slide{rules['slide_idx'] + 1}.xml"
        if name not in archive.namelist():
            return 0.0
        root = ET.fromstring(archive.read(name))
    transition = next(root.iter(f"{_P}transition"), None)
    if transition is None:
        return 0.0
    kinds = [e for e in transition.iter(f"{_P}{rules['transition_type']}") if e is not transition]
    return float(bool(kinds))


def _channels(hex_colour: str | None) -> tuple[int, int, int] | None:
    """``RRGGBB`` (a leading ``#`` allowed) as three channels; None when it is not six hex digits."""
    digits = (hex_colour or "").lstrip("#")
    if len(digits) != 6:
        return None
    try:
        return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)
    except ValueError:
        return None


_COLOUR_TESTS = {
    "red": lambda r, g, b: r > g + 50 and r > b + 50,
    "blue": lambda r, g, b: b > g + 50 and b > r + 50,
    "green": lambda r, g, b: g > r + 50 and g > b + 50,
    "black": lambda r, g, b: r < 50 and g < 50 and b < 50,
}


def _first_rgb(element: ET.Element) -> str | None:
    """The value of the first ``srgbClr`` inside a ``solidFill`` under ``element``."""
    for fill in element.iter(f"{_A}solidFill"):
        for colour in fill.iter(f"{_A}srgbClr"):
            return colour.get("val")
    return None


def _page_number_colour(root: ET.Element) -> str | None:
    """The slide master's page-number colour, looked for where OSWorld at the tasks' commit looks.

    In order: a colour inside the first slide-number placeholder; inside a slide-number, footer or date
    placeholder; the last text run's colour that is not black; the last solid-fill colour that is not
    black; the last solid-fill colour.
    """
    placeholders = list(root.iter(f"{_P}ph"))
    numbers = [ph for ph in placeholders if ph.get("type") == "sldNum"]
    value = _first_rgb(numbers[0]) if numbers else None
    for ph in placeholders:
        if value is not None:
            break
        if ph.get("type") in ("sldNum", "ftr", "dt"):
            value = _first_rgb(ph)
    if value is not None:
        return value
    runs = [
        c.get("val")
        for r in root.iter(f"{_A}rPr")
        for f in r.iter(f"{_A}solidFill")
        for c in f.iter(f"{_A}srgbClr")
    ]
    fills = [c.get("val") for f in root.iter(f"{_A}solidFill") for c in f.iter(f"{_A}srgbClr")]
    for values in (runs, fills):
        found = next((v for v in reversed(values) if v and v != "000000"), None)
        if found is not None:
            return found
    return fills[-1] if fills else None


@metric("check_page_number_colors")
def check_page_number_colors(result: str, rules: dict[str, Any]) -> float:
    """The first slide master's page-number colour (see :func:`_page_number_colour`) is ``rules["color"]``.

    A colour that cannot be found or read scores 0; a colour name without a test passes.
    """
    with zipfile.ZipFile(result) as archive:
        root = ET.fromstring(archive.read("ppt/slideMasters/slideMaster1.xml"))
    channels = _channels(_page_number_colour(root))
    if channels is None:
        return 0.0
    test = _COLOUR_TESTS.get(rules["color"])
    return float(test is None or bool(test(*channels)))


def _solid_rgb(fill: Any) -> tuple[int, int, int] | None:
    try:
        rgb = fill.fore_color.rgb
    except Exception:
        return None
    return None if rgb is None else (int(rgb[0]), int(rgb[1]), int(rgb[2]))


@metric("evaluate_presentation_fill_to_rgb_distance")
def evaluate_presentation_fill_to_rgb_distance(result: str, rules: dict[str, Any]) -> float:
    """1 minus the mean distance of the slides' background colours to ``rgb`` (0 to 1 of the RGB cube).

    A slide without a solid background (its own, or its master's when it inherits), or still in
    ``original_rgb``, counts as the farthest distance.
    """
    target, original = rules["rgb"], rules.get("original_rgb")
    presentation = _presentation(result)

    def distance(slide: Any) -> float:
        fill = slide.background.fill
        if fill.type == 1:
            rgb = _solid_rgb(fill)
        elif fill.type == 5:
            master = slide.slide_layout.slide_master.background.fill
            rgb = _solid_rgb(master) if master.type == 1 else None
        else:
            return 1.0
        if rgb is None:
            return 1.0
        if original is not None and list(rgb) == list(original):
            return 1.0
        r, g, b = (rgb[0] - target[0]) ** 2, (rgb[1] - target[1]) ** 2, (rgb[2] - target[2]) ** 2
        return math.sqrt(r + g + b) / math.sqrt(255**2 + 255**2 + 255**2)

    slides = list(presentation.slides)
    return 1 - sum(distance(slide) for slide in slides) / len(slides)


@metric("check_image_stretch_and_center")
def check_image_stretch_and_center(result: str, original: str) -> float:
    """The first picture of the original's first slide fills the result's first slide, centred (0.5 in)."""
    from pptx.util import Inches

    before, after = _presentation(original), _presentation(result)
    pictures = [s for s in before.slides[0].shapes if s.shape_type == 13]
    if not pictures:
        return 0.0
    blob = pictures[0].image.blob
    moved = None
    for shape in after.slides[0].shapes:
        if shape.shape_type == 13 and shape.image.blob == blob:
            moved = shape
    if moved is None:
        return 0.0
    width, height = before.slide_width, before.slide_height
    tolerance = Inches(0.5)
    return float(
        abs(moved.width - width) <= tolerance
        and abs(moved.height - height) <= tolerance
        and abs(moved.left - (width - moved.width) / 2) <= tolerance
        and abs(moved.top - (height - moved.height) / 2) <= tolerance
    )


@metric("check_left_panel")
def check_left_panel(tree: str) -> float:
    """The accessibility tree shows Impress's slide panel (a ``Slides View`` document frame)."""
    root = ET.fromstring(tree)
    return float(any(frame.get("name") == "Slides View" for frame in root.iter("document-frame")))
