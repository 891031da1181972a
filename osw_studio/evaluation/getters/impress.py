"""Impress getters: the picture behind a slide, and the sound on a slide, of a presentation in the guest.

The presentation is fetched (as ``vm_file``), the slide's background picture (or its first audio
relationship) found through its relationships, and the embedded file written to the cache folder; a
file linked from the guest's disk (``file://``) is fetched from the guest. Member names come from the
(untrusted) presentation, so a name that leaves the archive's folders is refused.
"""

from __future__ import annotations

import posixpath
import xml.etree.ElementTree as ET
import zipfile
from pathlib import PurePosixPath
from typing import Any

from osw_studio.core.errors import EvaluationError
from osw_studio.evaluation.getters.files import get_vm_file
from osw_studio.evaluation.registry import GetterContext, getter

_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"


def background_target(archive: zipfile.ZipFile, slide_index: int) -> str | None:
    """The relationship target of slide ``slide_index``'s (from 0) background picture, or None."""
    slide = f"ppt/slides/slide{slide_index + 1}.xml"
    if slide not in archive.namelist():
        return None
    root = ET.fromstring(archive.read(slide))
    image_id = None
    for background in root.iter(f"{_P}bgPr"):
        blip = next(background.iter(f"{_A}blip"), None)
        if blip is not None and f"{_R}embed" in blip.attrib:
            image_id = blip.attrib[f"{_R}embed"]
            break
    if image_id is None:
        return None
    rels = f"ppt/slides/_rels/slide{slide_index + 1}.xml.rels"
    if rels not in archive.namelist():
        return None
    for rel in ET.fromstring(archive.read(rels)).findall(f"{_REL}Relationship"):
        if "image" in rel.attrib.get("Type", "") and rel.attrib.get("Id") == image_id:
            return rel.attrib["Target"]
    return None


def audio_target(archive: zipfile.ZipFile, slide_index: int) -> str | None:
    """The target of the first audio relationship of slide ``slide_index`` (from 0), or None."""
    rels = f"ppt/slides/_rels/slide{slide_index + 1}.xml.rels"
    if rels not in archive.namelist():
        return None
    for rel in ET.fromstring(archive.read(rels)).findall(f"{_REL}Relationship"):
        if "audio" in rel.attrib.get("Type", ""):
            return rel.attrib.get("Target", "")
    return None


def _extract(ctx: GetterContext, archive: zipfile.ZipFile, target: str, source: str, what: str) -> str:
    """Write the member a slide's relationship ``target`` (``../media/...``) names into the cache folder."""
    member = posixpath.normpath(posixpath.join("ppt/slides", target))
    if member.startswith(("../", "/")) or member not in archive.namelist():
        raise EvaluationError(
            f"the presentation's {what} {target!r} is not in the file",
            where=source,
            hint="the presentation is damaged; save it again",
        )
    out = ctx.cache_dir / member
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(archive.read(member))
    return str(out)


async def _presentation(ctx: GetterContext, source: str) -> str:
    local: str = await get_vm_file(ctx, {"path": source, "dest": PurePosixPath(source).name})
    if not zipfile.is_zipfile(local):
        raise EvaluationError(
            "the presentation is not a .pptx file (not a zip archive)",
            where=source,
            hint="save the presentation as .pptx",
        )
    return local


@getter("audio_in_slide")
async def get_audio_in_slide(ctx: GetterContext, spec: dict[str, Any]) -> str | None:
    """The sound of slide ``slide_index`` of ``ppt_file_path`` (None when the slide has none).

    An embedded sound is written to the cache folder; a linked one is fetched from the guest as ``dest``.
    """
    source = str(spec["ppt_file_path"])
    with zipfile.ZipFile(await _presentation(ctx, source)) as archive:
        target = audio_target(archive, int(spec["slide_index"]))
        if target is None:
            return None
        if target.startswith(".."):
            return _extract(ctx, archive, target, source, "sound")
    if not target.startswith("file://"):
        raise EvaluationError(
            f"the slide's sound {target!r} is neither in the presentation nor a file:// link",
            where=source,
            hint="insert the sound from a file on the guest's disk",
        )
    path: str = await get_vm_file(ctx, {"path": target[len("file://") :], "dest": spec["dest"]})
    return path


@getter("background_image_in_slide")
async def get_background_image_in_slide(ctx: GetterContext, spec: dict[str, Any]) -> str | None:
    """The background picture of slide ``slide_index`` of ``ppt_file_path`` (None when it has none)."""
    source = str(spec["ppt_file_path"])
    with zipfile.ZipFile(await _presentation(ctx, source)) as archive:
        target = background_target(archive, int(spec["slide_index"]))
        if target is None:
            return None
        if target.startswith(".."):
            return _extract(ctx, archive, target, source, "background picture")
    if not target.startswith("file://"):
        return None
    path: str = await get_vm_file(ctx, {"path": target[len("file://") :], "dest": spec["dest"]})
    return path
