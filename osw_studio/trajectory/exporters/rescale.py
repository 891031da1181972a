r"""``--train-size``: samples at the training resolution, images and pixel coordinates scaled together.

Trainers resize images (LLaMA-Factory to ``image_max_pixels``, 768x768 pixels by default), and a model
that writes pixel coordinates (``abs``, ``resized``, ``smart``) then learns points of an image it never
sees. With a training size, every image of a sample is scaled to it and every assistant turn (history
and target) is re-written with its points in pixels of that image: the reply is parsed in the run's
coordinate space and written again in the same action language with the same thought. Relative
conventions (``rel1000``, ``norm``) need no change. A turn that cannot be parsed is kept as it was and
counted on the dataset card.

Examples:
    >>> from osw_studio.actions.coords import CoordinateSpace
    >>> r = Rescaler((966, 546))
    >>> space = CoordinateSpace(screen=(1920, 1080), mode="smart")
    >>> r.reply("Thought: Open.\nAction: click(start_box='<|box_start|>(966,546)<|box_end|>')", "uitars", space)
    "Thought: Open.\nAction: click(start_box='<|box_start|>(483,273)<|box_end|>')"
"""  # noqa: E501

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from osw_studio.actions import parse_reply
from osw_studio.actions.coords import CoordinateSpace
from osw_studio.actions.opencua import parse_opencua
from osw_studio.actions.qwen3vl import parse_qwen3vl
from osw_studio.core.errors import ActionParseError, ExportError
from osw_studio.trajectory.exporters.replies import Language, write_reply
from osw_studio.trajectory.requests import IMAGE_REF


class Rescaler:
    """Scales samples to one training size.

    Args:
        size: The training size ``(width, height)``.
    """

    def __init__(self, size: tuple[int, int]) -> None:
        self.size = size
        self.unparsed = 0
        """Assistant turns kept as they were because they could not be parsed."""

    def space(self, space: CoordinateSpace) -> CoordinateSpace:
        """The frame of the training image (relative conventions stay as they are)."""
        if space.mode in ("rel1000", "rel999", "norm"):
            return space
        return CoordinateSpace(screen=space.screen, mode="resized", image=self.size, rounding=space.rounding)

    def reply(self, text: str, language: Language, space: CoordinateSpace) -> str:
        """``text`` with its points in pixels of the training image."""
        target = self.space(space)
        if target == space:
            return text
        try:
            if language == "opencua":  # its ## Action section is kept apart from the thought
                parsed = parse_opencua(text, space)
                written = write_reply(
                    language, parsed.actions, target, parsed.thought or "", instruction=parsed.action
                )
            else:
                thought, actions = (
                    parse_qwen3vl(text, space)
                    if language == "qwen3vl"
                    else parse_reply(text, language, space)
                )
                written = write_reply(language, actions, target, thought or "")
        except (ActionParseError, ValueError):
            written = None
        if written is None:
            self.unparsed += 1
            return text
        return written

    def messages(
        self, messages: list[dict[str, Any]], language: Language, space: CoordinateSpace
    ) -> list[dict[str, Any]]:
        """Messages whose assistant turns are re-written for the training image."""
        out = []
        for message in messages:
            content = message.get("content")
            if message.get("role") == "assistant" and isinstance(content, str):
                message = {**message, "content": self.reply(content, language, space)}
            elif message.get("role") == "assistant" and isinstance(content, list):
                # OSWorld's agents send past replies as a list of text parts.
                parts = [
                    {**part, "text": self.reply(part["text"], language, space)}
                    if isinstance(part, dict)
                    and part.get("type") == "text"
                    and isinstance(part.get("text"), str)
                    else part
                    for part in content
                ]
                message = {**message, "content": parts}
            out.append(message)
        return out

    def image(self, source: Path, ref: Mapping[str, Any], place: Callable[[str, bytes], Path]) -> Path:
        """The image of ``ref`` (the file ``source``) scaled to the training size, placed by ``place``.

        Raises:
            ExportError: If the image cannot be decoded.
        """
        from PIL import Image, UnidentifiedImageError

        jpeg = str(ref.get("mime")) == "image/jpeg" or source.suffix == ".jpg"
        name = f"{source.stem}.{self.size[0]}x{self.size[1]}.{'jpg' if jpeg else 'png'}"
        try:
            with Image.open(source) as opened:
                picture = opened.convert("RGB").resize(self.size, Image.Resampling.LANCZOS)
            buf = io.BytesIO()
            picture.save(buf, "JPEG" if jpeg else "PNG", **({"quality": 90} if jpeg else {}))
        except (UnidentifiedImageError, OSError) as exc:
            raise ExportError(f"the image cannot be decoded: {exc}", where=str(source)) from None
        return place(name, buf.getvalue())


def scaled_ref(ref: Mapping[str, Any], size: tuple[int, int]) -> dict[str, Any]:
    """An image reference describing the scaled image."""
    return {**ref, "type": IMAGE_REF, "width": size[0], "height": size[1]}
