"""Differential tests: the added Impress metrics and the slide background getter against OSWorld's."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from pptx import Presentation
from pptx.dml.color import RGBColor
from pptx.util import Inches

from osw_studio.core.errors import EvaluationError
from osw_studio.envs.guest_client import GuestClient
from osw_studio.evaluation.registry import GETTERS, GetterContext
from tests.fakes.desktop import Desktop
from tests.parity.guest_env import agree, both, call_getter, stub_missing
from tests.parity.reference import Reference, ReferenceError

SLIDES = "slides"
P_NS = "http://schemas.openxmlformats.org/presentationml/2006/main"


@pytest.fixture(scope="module")
def ref(reference: Reference) -> Reference:
    stub_missing(reference)
    return reference


def deck(path: Path, *, slides: int = 2, portrait: bool = False, backgrounds: list[Any] | None = None) -> str:
    prs = Presentation()
    if portrait:
        prs.slide_width, prs.slide_height = prs.slide_height, prs.slide_width
    for i in range(slides):
        slide = prs.slides.add_slide(prs.slide_layouts[6])
        colour = (backgrounds or [None] * slides)[i]
        if colour is not None:
            slide.background.fill.solid()
            slide.background.fill.fore_color.rgb = RGBColor(*colour)
    prs.save(path)
    return str(path)


def rewrite(path: str, member: str, edit: Any) -> None:
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    members[member] = edit(members[member].decode()).encode()
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)


@pytest.mark.parametrize("portrait", [True, False])
def test_check_slide_orientation_portrait(ref: Reference, tmp_path: Path, portrait: bool) -> None:
    agree(ref, SLIDES, "check_slide_orientation_Portrait", deck(tmp_path / "d.pptx", portrait=portrait))


@pytest.mark.parametrize(
    "transition",
    ["<p:transition><p:dissolve/></p:transition>", '<p:transition spd="slow"><p:fade/></p:transition>', ""],
)
@pytest.mark.parametrize(
    ("slide_idx", "kind"), [(0, "dissolve"), (0, "fade"), (1, "dissolve"), (5, "dissolve")]
)
def test_check_transition(ref: Reference, tmp_path: Path, transition: str, slide_idx: int, kind: str) -> None:
    path = deck(tmp_path / "d.pptx")
    rewrite(path, "ppt/slides/slide1.xml", lambda xml: xml.replace("</p:sld>", f"{transition}</p:sld>"))
    agree(ref, SLIDES, "check_transition", path, {"slide_idx": slide_idx, "transition_type": kind})


@pytest.mark.parametrize(
    "colours", [["00FF0000", "FF0000"], ["FF0000", "0000FF"], ["000000", "00AA00"], ["FFFFFF", "101010"]]
)
@pytest.mark.parametrize("colour", ["red", "blue", "green", "black", "purple"])
@pytest.mark.parametrize("where", ["fills", "placeholder", "runs"])
def test_check_page_number_colors(
    ref: Reference, tmp_path: Path, colours: list[str], colour: str, where: str
) -> None:
    path = deck(tmp_path / "d.pptx")
    fills = "".join(f'<a:solidFill><a:srgbClr val="{c}"/></a:solidFill>' for c in colours)
    if where == "placeholder":  # the colour inside a date placeholder, then a slide-number one
        fills = "".join(
            f'<p:ph type="{t}">{f}</p:ph>'
            for t, f in zip(("dt", "sldNum"), fills.split("</a:solidFill>")[:2], strict=True)
        ).replace("</p:ph>", "</a:solidFill></p:ph>")
    if where == "runs":  # colours of text runs
        fills = "".join(f'<a:rPr><a:solidFill><a:srgbClr val="{c}"/></a:solidFill></a:rPr>' for c in colours)
    extra = (
        f'<p:extra xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main">{fills}'
        '<a:solidFill><a:srgbClr val="123456"/></a:solidFill></p:extra>'
    )
    rewrite(
        path,
        "ppt/slideMasters/slideMaster1.xml",
        lambda xml: xml.replace("</p:sldMaster>", f"{extra}</p:sldMaster>"),
    )
    agree(ref, SLIDES, "check_page_number_colors", path, {"color": colour})


@pytest.mark.parametrize(
    "backgrounds",
    [
        [(0, 0, 255), (0, 0, 255)],
        [(0, 0, 250), (10, 10, 200)],
        [(255, 255, 255), (0, 0, 255)],
        [None, (0, 0, 255)],
        [None, None],
    ],
)
@pytest.mark.parametrize(
    "rules", [{"rgb": [0, 0, 255]}, {"rgb": [0, 0, 255], "original_rgb": [255, 255, 255]}]
)
def test_evaluate_presentation_fill_to_rgb_distance(
    ref: Reference, tmp_path: Path, backgrounds: list[Any], rules: dict[str, Any]
) -> None:
    path = deck(tmp_path / "d.pptx", backgrounds=backgrounds)
    ours, theirs = both(
        ref, SLIDES, "evaluate_presentation_fill_to_rgb_distance", path, json.loads(json.dumps(rules))
    )
    assert ours == pytest.approx(theirs)


def _picture_deck(path: Path, picture: bytes, place: tuple[float, float, float, float] | None) -> str:
    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[6])
    if place is not None:
        left, top, width, height = place
        slide.shapes.add_picture(
            io.BytesIO(picture), Inches(left), Inches(top), Inches(width), Inches(height)
        )
    prs.save(path)
    return str(path)


def _png(colour: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (40, 30), colour).save(out, "PNG")
    return out.getvalue()


@pytest.mark.parametrize(
    "place",
    [(0, 0, 10, 7.5), (0.2, 0.1, 9.7, 7.3), (1, 1, 8, 5.5), (0, 0, 10, 6), None],
)
@pytest.mark.parametrize("same_picture", [True, False])
def test_check_image_stretch_and_center(
    ref: Reference, tmp_path: Path, place: Any, same_picture: bool
) -> None:
    original = _picture_deck(tmp_path / "o.pptx", _png("red"), (2, 2, 3, 2))
    result = _picture_deck(tmp_path / "r.pptx", _png("red" if same_picture else "blue"), place)
    agree(ref, SLIDES, "check_image_stretch_and_center", result, original)
    agree(
        ref,
        SLIDES,
        "check_image_stretch_and_center",
        result,
        _picture_deck(tmp_path / "n.pptx", _png("red"), None),
    )


XCU = '<?xml version="1.0"?><oor:items xmlns:oor="http://openoffice.org/2001/registry">{}</oor:items>'
PRESENTER = (
    '<item oor:path="/org.openoffice.Office.Impress/Misc/Start">'
    '<prop oor:name="EnablePresenterScreen" oor:op="fuse"><value>{}</value></prop></item>'
)
AUTOSAVE = (
    '<item oor:path="/org.openoffice.Office.Common/Save/Document">'
    '<prop oor:name="AutoSaveTimeIntervall" oor:op="fuse"><value>{}</value></prop></item>'
)


@pytest.mark.parametrize(
    "items",
    [
        PRESENTER.format("false"),
        PRESENTER.format("False"),
        PRESENTER.format("true"),
        "",
        AUTOSAVE.format("3"),
        PRESENTER.format("true") + PRESENTER.format("false"),
        AUTOSAVE.format("3") + AUTOSAVE.format("5"),
    ],
)
def test_registry_settings(ref: Reference, tmp_path: Path, items: str) -> None:
    path = tmp_path / "registrymodifications.xcu"
    path.write_text(XCU.format(items))
    agree(ref, SLIDES, "check_presenter_console_disable", str(path))
    for minutes in (3, 5, 10):
        agree(ref, SLIDES, "check_auto_saving_time", str(path), {"minutes": minutes})
    agree(ref, SLIDES, "check_presenter_console_disable", str(tmp_path / "absent.xcu"))


@pytest.mark.parametrize("frame", ["Slides View", "Slide Sorter", None])
def test_check_left_panel(ref: Reference, frame: str | None) -> None:
    inner = "" if frame is None else f'<document-frame name="{frame}"/>'
    tree = f'<desktop-frame><application name="soffice"><frame name="x">{inner}</frame></application>'
    tree += "</desktop-frame>"
    agree(ref, SLIDES, "check_left_panel", tree)


# --- the slide background getter, on the tests' guest ---------------------------------------------


def _background_deck(path: Path, picture: bytes | None, slide_index: int = 1) -> str:
    prs = Presentation()
    for _ in range(2):
        prs.slides.add_slide(prs.slide_layouts[6])
    prs.save(path)
    if picture is None:
        return str(path)
    slide = f"ppt/slides/slide{slide_index + 1}.xml"
    rels = f"ppt/slides/_rels/slide{slide_index + 1}.xml.rels"
    background = (
        '<p:bg><p:bgPr><a:blipFill xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
        'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
        '<a:blip r:embed="rIdBg"/><a:stretch><a:fillRect/></a:stretch></a:blipFill>'
        '<a:effectLst xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"/></p:bgPr></p:bg>'
    )
    rel = (
        '<Relationship Id="rIdBg" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image"'
        ' Target="../media/landscape.png"/>'
    )
    rewrite(str(path), slide, lambda xml: xml.replace("<p:cSld>", f"<p:cSld>{background}", 1))
    rewrite(str(path), rels, lambda xml: xml.replace("</Relationships>", f"{rel}</Relationships>"))
    with zipfile.ZipFile(path, "a") as z:
        z.writestr("ppt/media/landscape.png", picture)
    return str(path)


@pytest.fixture
async def ctx(desktop: Desktop, tmp_path: Path) -> AsyncIterator[GetterContext]:
    async with GuestClient(desktop.url, desktop.token) as guest:
        yield GetterContext(guest=guest, cache_dir=tmp_path / "ours")


@pytest.mark.xvfb
@pytest.mark.parametrize(("picture", "slide_index"), [(True, 1), (True, 0), (False, 1)])
async def test_background_image_in_slide(
    ref: Reference, ctx: GetterContext, desktop: Desktop, tmp_path: Path, picture: bool, slide_index: int
) -> None:
    png = _png("green")
    path = _background_deck(desktop.home / "deck.pptx", png if picture else None)
    spec = {"ppt_file_path": path, "slide_index": slide_index, "dest": "landscape.png"}
    (tmp_path / "theirs").mkdir()
    try:
        ours = await GETTERS.get("background_image_in_slide")(ctx, dict(spec))
        theirs = call_getter(
            ref,
            "desktop_env.evaluators.getters.impress",
            "get_background_image_in_slide",
            str(desktop.home),
            str(tmp_path / "theirs"),
            spec,
        )
    finally:
        await asyncio.to_thread(Path(path).unlink)
    assert (ours is None) == (theirs is None)
    if ours is not None:
        got = await asyncio.to_thread(lambda: (Path(ours).read_bytes(), Path(str(theirs)).read_bytes()))
        assert got == (png, png)
        assert Path(ours).relative_to(ctx.cache_dir) == Path(str(theirs)).relative_to(tmp_path / "theirs")
    await asyncio.to_thread(shutil.rmtree, tmp_path / "theirs")


@pytest.mark.xvfb
async def test_a_presentation_that_is_no_zip_is_a_clear_error(ctx: GetterContext, desktop: Desktop) -> None:
    # Deliberate deviation: OSWorld's getter crashes (BadZipFile); ours names the file.
    path = desktop.home / "broken.pptx"
    await asyncio.to_thread(path.write_text, "not a presentation")
    spec = {"ppt_file_path": str(path), "slide_index": 0, "dest": "bg.png"}
    try:
        with pytest.raises(EvaluationError, match=r"not a \.pptx"):
            await GETTERS.get("background_image_in_slide")(ctx, spec)
    finally:
        await asyncio.to_thread(path.unlink)


# --- the slide sound getter, on the tests' guest ----------------------------------------------------

_AUDIO = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/audio"
_MEDIA = "http://schemas.microsoft.com/office/2007/relationships/media"


def _audio_deck(path: Path, target: str | None, slide_index: int = 0, *, embed: bool = True) -> str:
    """A two-slide deck whose slide ``slide_index`` links a sound at ``target`` (embedded when ``embed``)."""
    prs = Presentation()
    for _ in range(2):
        prs.slides.add_slide(prs.slide_layouts[6])
    prs.save(path)
    if target is None:
        return str(path)
    rels = f"ppt/slides/_rels/slide{slide_index + 1}.xml.rels"
    mode = "" if embed else ' TargetMode="External"'
    links = (
        f'<Relationship Id="rIdM" Type="{_MEDIA}" Target="{target}"{mode}/>'
        f'<Relationship Id="rIdA" Type="{_AUDIO}" Target="{target}"{mode}/>'
    )
    rewrite(str(path), rels, lambda xml: xml.replace("</Relationships>", f"{links}</Relationships>"))
    if embed and target.startswith("../media/"):
        with zipfile.ZipFile(path, "a") as z:
            z.writestr("ppt/media/" + target[len("../media/") :], b"ID3 the embedded sound")
    return str(path)


@pytest.mark.xvfb
@pytest.mark.parametrize(
    ("target", "slide_index", "asked"),
    [
        ("../media/media1.mp3", 0, 0),
        ("../media/media1.mp3", 1, 1),
        ("../media/media1.mp3", 1, 0),
        (None, 0, 0),
        ("../media/media1.mp3", 0, 5),
        ("file://LINKED", 0, 0),
    ],
)
async def test_audio_in_slide(
    ref: Reference,
    ctx: GetterContext,
    desktop: Desktop,
    tmp_path: Path,
    target: str | None,
    slide_index: int,
    asked: int,
) -> None:
    linked = desktop.home / "linked.mp3"
    await asyncio.to_thread(linked.write_bytes, b"ID3 the linked sound")
    if target == "file://LINKED":
        target = f"file://{linked}"
    embed = target is None or not target.startswith("file://")
    path = _audio_deck(desktop.home / "talk.pptx", target, slide_index, embed=embed)
    spec = {"ppt_file_path": path, "slide_index": asked, "dest": "sound.mp3"}
    (tmp_path / "theirs").mkdir()
    try:
        ours = await GETTERS.get("audio_in_slide")(ctx, dict(spec))
        theirs = call_getter(
            ref,
            "desktop_env.evaluators.getters.impress",
            "get_audio_in_slide",
            str(desktop.home),
            str(tmp_path / "theirs"),
            spec,
        )
    finally:
        await asyncio.to_thread(Path(path).unlink)
        await asyncio.to_thread(linked.unlink)
    assert (ours is None) == (theirs is None), (ours, theirs)
    if ours is not None:
        got = await asyncio.to_thread(lambda: (Path(ours).read_bytes(), Path(str(theirs)).read_bytes()))
        assert got[0] == got[1] and got[0].startswith(b"ID3")
        assert Path(ours).relative_to(ctx.cache_dir) == Path(str(theirs)).relative_to(tmp_path / "theirs")
    await asyncio.to_thread(shutil.rmtree, tmp_path / "theirs")


@pytest.mark.xvfb
@pytest.mark.parametrize("target", ["../media/absent.mp3", "media/beside.mp3"])
async def test_audio_in_slide_that_cannot_be_found(
    ref: Reference, ctx: GetterContext, desktop: Desktop, tmp_path: Path, target: str
) -> None:
    # OSWorld's getter raises here too (KeyError from the archive, AssertionError on a relative target);
    # ours says what is wrong and where.
    path = _audio_deck(desktop.home / "talk.pptx", target, embed=False)
    spec = {"ppt_file_path": path, "slide_index": 0, "dest": "sound.mp3"}
    try:
        with pytest.raises(EvaluationError, match="sound"):
            await GETTERS.get("audio_in_slide")(ctx, dict(spec))
        with pytest.raises(ReferenceError):
            call_getter(
                ref,
                "desktop_env.evaluators.getters.impress",
                "get_audio_in_slide",
                str(desktop.home),
                str(tmp_path),
                spec,
            )
    finally:
        await asyncio.to_thread(Path(path).unlink)
