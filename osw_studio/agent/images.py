"""Screenshots for the model: resized to a target size, encoded as PNG or JPEG, as data URLs.

Encoding is CPU work; agents run :func:`prepare_image` in a worker thread (``asyncio.to_thread``) so the
UI's event loop stays responsive.

Examples:
    >>> import io
    >>> from PIL import Image
    >>> buf = io.BytesIO(); Image.new("RGB", (1920, 1080), "white").save(buf, "PNG")
    >>> img = prepare_image(buf.getvalue(), size=(1280, 720), fmt="jpeg")
    >>> img.size, img.mime, img.data_url()[:23]
    ((1280, 720), 'image/jpeg', 'data:image/jpeg;base64,')
"""

from __future__ import annotations

import base64
import functools
import io
from dataclasses import dataclass, field
from typing import Literal

from osw_studio.core import limits
from osw_studio.core.errors import ModelError

ImageFormat = Literal["png", "jpeg"]


@dataclass(frozen=True)
class PreparedImage:
    """An encoded image ready to send, with its size and the size of the screen it shows."""

    data: bytes = field(repr=False)
    mime: str
    width: int
    height: int
    source_width: int
    source_height: int

    @property
    def size(self) -> tuple[int, int]:
        """``(width, height)`` of the image sent."""
        return (self.width, self.height)

    def data_url(self) -> str:
        """The image as a ``data:`` URL for an ``image_url`` content part (made once, then reused)."""
        return self._data_url

    @functools.cached_property
    def _data_url(self) -> str:
        # History images go into every later request: their base64 is computed once.
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"


def prepare_image(
    image: bytes,
    *,
    size: tuple[int, int] | None = None,
    fmt: ImageFormat = "png",
    quality: int = 85,
    max_bytes: int | None = None,
    resample: Literal["lanczos", "bicubic"] = "lanczos",
) -> PreparedImage:
    """Decode a screenshot, resize it to ``size`` (``(width, height)``; None keeps it) and encode it.

    An image already at the size and in the format asked for is passed through untouched. ``resample``
    is the resizing filter (``bicubic``: Pillow's default, which OSWorld's Qwen3-VL agent resizes with).

    Raises:
        ModelError: If the image cannot be decoded, or the encoded image is larger than ``max_bytes``.
    """
    from PIL import Image, UnidentifiedImageError

    try:
        limits.check_image(image, where="the screenshot")  # its pixels, before anything decodes them
    except limits.LimitExceeded as exc:
        raise ModelError(str(exc)) from None
    except ValueError:
        pass  # not an image: the decoding below says so
    try:
        with Image.open(io.BytesIO(image)) as opened:
            source = opened.size
            target = size or source
            src_fmt = (opened.format or "").lower()
            if target == source and src_fmt == fmt and (max_bytes is None or len(image) <= max_bytes):
                return PreparedImage(image, f"image/{fmt}", *target, *source)
            picture = opened.convert("RGB") if fmt == "jpeg" or opened.mode not in ("RGB", "RGBA") else opened
            if target != source:
                method = Image.Resampling.BICUBIC if resample == "bicubic" else Image.Resampling.LANCZOS
                picture = picture.resize(target, method)
            out = io.BytesIO()
            if fmt == "jpeg":
                picture.save(out, "JPEG", quality=quality, optimize=True)
            else:
                picture.save(out, "PNG", optimize=False, compress_level=6)
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise ModelError(f"the screenshot cannot be decoded: {exc}") from None
    data = out.getvalue()
    if max_bytes is not None and len(data) > max_bytes:
        raise ModelError(
            f"the screenshot is {len(data) // 1024} KiB encoded, over the {max_bytes // 1024} KiB cap",
            hint="set the profile's screenshot_size smaller or its image_format to jpeg",
        )
    return PreparedImage(data, f"image/{fmt}", target[0], target[1], source[0], source[1])
