"""Image metrics of OSWorld's GIMP and multi_apps tasks, each scoring as OSWorld's function of that name.

Structure, brightness, saturation, contrast, palette, mirroring, backgrounds and sizes.

"Same structure" is OSWorld's test: the structural similarity (SSIM, scikit-image, 7-pixel window,
over the RGB channels) of two images of the same size reaches a threshold (0.9 unless a metric says
otherwise); images smaller than 7 pixels on a side never match. Brightness changes are compared after
both images are scaled to the same mean brightness, by mean squared error.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageChops, ImageStat

from osw_studio.evaluation.registry import metric

SSIM_WINDOW = 7


def load(path: str) -> Image.Image:
    """The image at ``path``, read into memory (its file closed again)."""
    with Image.open(path) as image:
        image.load()
    return image


def same_structure(a: Image.Image, b: Image.Image, threshold: float = 0.9) -> bool:
    """Whether two images have an SSIM of at least ``threshold`` (both compared as RGB)."""
    from skimage.metrics import structural_similarity

    if min(a.width, a.height, b.width, b.height) < SSIM_WINDOW:
        return False
    a = a if a.mode == "RGB" else a.convert("RGB")
    b = b if b.mode == "RGB" else b.convert("RGB")
    if a.size != b.size:
        return False
    try:
        score = structural_similarity(np.array(a), np.array(b), win_size=SSIM_WINDOW, channel_axis=2)  # type: ignore[no-untyped-call]
    except Exception:  # OSWorld counts any failure of the SSIM computation as different
        return False
    return bool(score >= threshold)


def _close_by_mse(a: Image.Image, b: Image.Image, threshold: float) -> bool:
    if a.size != b.size:
        a = a.resize(b.size, Image.Resampling.LANCZOS)
    a = a if a.mode == "RGB" else a.convert("RGB")
    b = b if b.mode == "RGB" else b.convert("RGB")
    diff = np.array(a, dtype=np.float32) / 255 - np.array(b, dtype=np.float32) / 255
    return bool(np.mean(diff**2) < threshold)


def brightness(image: Image.Image) -> float:
    """The mean grey level (0-255)."""
    return float(ImageStat.Stat(image.convert("L")).mean[0])


def _scaled_to_brightness(image: Image.Image, target: float) -> Image.Image:
    factor = target / brightness(image)
    return image.point(lambda x: min(255, max(0, int(x * factor))))


@metric("check_brightness_decrease_and_structure_sim")
def check_brightness_decrease_and_structure_sim(
    result: str | None, original: str | None, threshold: float = 0.03
) -> float:
    """The result is darker than the original and, both scaled to mean 128, close by MSE."""
    if result is None or original is None:
        return 0.0
    src, tgt = load(result), load(original)
    darker = brightness(tgt) > brightness(src)
    same = _close_by_mse(_scaled_to_brightness(src, 128), _scaled_to_brightness(tgt, 128), threshold)
    return float(darker and same)


def _mean_saturation(hsv: Image.Image) -> float:
    return float(np.mean(np.array(hsv.split()[1])))


@metric("check_saturation_increase_and_structure_sim")
def check_saturation_increase_and_structure_sim(result: str | None, original: str | None) -> float:
    """The result is more saturated, with the same hue and value structure."""
    if result is None or original is None:
        return 0.0
    src, tgt = load(result).convert("HSV"), load(original).convert("HSV")
    more = _mean_saturation(tgt) < _mean_saturation(src)
    h1, _, v1 = src.split()
    h2, _, v2 = tgt.split()
    return float(more and same_structure(h1, h2) and same_structure(v1, v2))


@metric("check_file_exists_and_structure_sim")
def check_file_exists_and_structure_sim(result: str | None, original: str | None) -> float:
    """The exported file exists and has the original's structure."""
    if result is None or original is None or not Path(result).is_file():
        return 0.0
    return float(same_structure(load(result), load(original)))


@metric("check_structure_sim")
def check_structure_sim(result: str | None, expected: str | None) -> float:
    """Two images of the same size have the same structure (0 when either cannot be read)."""
    if result is None or expected is None:
        return 0.0
    try:
        src, tgt = load(result), load(expected)
        if src.size != tgt.size:
            return 0.0
        return float(same_structure(src, tgt))
    except Exception:
        return 0.0


@metric("check_structure_sim_with_threshold")
def check_structure_sim_with_threshold(result: str | None, expected: str | None, **options: Any) -> float:
    """The result, resized to the expected size if it differs, has an SSIM of at least ``ssim_threshold``.

    The threshold defaults to 0.85. Images under 7 pixels on a side are compared with the largest odd
    window that fits; anything unreadable scores 0.
    """
    from skimage.metrics import structural_similarity

    if result is None or expected is None:
        return 0.0
    threshold = options.get("ssim_threshold", 0.85)
    try:
        src, tgt = load(result), load(expected)
        if src.size != tgt.size:
            src = src.resize(tgt.size, Image.Resampling.LANCZOS)
        a = np.array(src if src.mode == "RGB" else src.convert("RGB"))
        b = np.array(tgt if tgt.mode == "RGB" else tgt.convert("RGB"))
        side = min(a.shape[0], a.shape[1])
        window = SSIM_WINDOW if side >= SSIM_WINDOW else side if side % 2 else side - 1
        if window < 1:
            return 0.0
        score = structural_similarity(a, b, win_size=window, channel_axis=2)  # type: ignore[no-untyped-call]
        return float(score >= threshold)
    except Exception:  # OSWorld scores any failure (unreadable file, SSIM error) 0
        return 0.0


def _opaque_content(image: Image.Image) -> Image.Image | None:
    """The image cropped to its non-transparent pixels, or None when all are transparent."""
    image = image if image.mode == "RGBA" else image.convert("RGBA")
    box = image.split()[-1].getbbox()
    return None if box is None else image.crop(box)


def _has_alpha(image: Image.Image) -> bool:
    return image.mode in ("RGBA", "LA") or "transparency" in image.info


@metric("check_structure_sim_resized")
def check_structure_sim_resized(result: str | None, expected: str | None) -> float:
    """The result, cropped to its opaque content and resized to the expected size, has its structure."""
    if result is None or expected is None:
        return 0.0
    src, tgt = load(result), load(expected)
    if _has_alpha(src):
        content = _opaque_content(src)
        if content is None:
            return 0.0
        resized = content.convert("RGB").resize(tgt.size)
    else:
        resized = src.resize(tgt.size)
    return float(same_structure(resized, tgt if tgt.mode == "RGB" else tgt.convert("RGB")))


@metric("check_contrast_increase_and_structure_sim")
def check_contrast_increase_and_structure_sim(result: str | None, original: str | None) -> float:
    """The result has more contrast (pixel standard deviation) and an SSIM of at least 0.65."""
    if result is None or original is None:
        return 0.0
    src, tgt = load(result), load(original)

    def contrast(image: Image.Image) -> float:
        return float(np.std(np.asarray(image, dtype=np.float32)))

    return float(contrast(tgt) < contrast(src) and same_structure(src, tgt, 0.65))


def _open_settled(path: str, tries: int = 3, delay: float = 0.5) -> Image.Image | None:
    """Open an image that may still be being written (empty or truncated): up to ``tries`` times."""
    if not path or not Path(path).exists():
        return None
    for attempt in range(tries):
        last = attempt == tries - 1
        try:
            if Path(path).stat().st_size == 0:
                if not last:
                    time.sleep(delay)
                    continue
                return None
            return load(path)
        except OSError as exc:
            text = str(exc).lower()
            if ("truncated" in text or "cannot identify" in text) and not last:
                time.sleep(delay)
                continue
            return None
        except Exception:
            return None
    return None


@metric("check_palette_and_structure_sim")
def check_palette_and_structure_sim(result: str | None, original: str | None) -> float:
    """The result is a palette (indexed) image with the original's structure."""
    if result is None or original is None:
        return 0.0
    src = _open_settled(result)
    if src is None:
        return 0.0
    tgt = _open_settled(original)
    if tgt is None:
        return 0.0
    try:
        return float(src.mode == "P" and same_structure(src.convert("RGB"), tgt))
    except Exception:
        return 0.0


@metric("check_textbox_on_leftside")
def check_textbox_on_leftside(result: str | None) -> float:
    """The leftmost dark pixel (grey < 128) lies within the left 5 % of the image."""
    if result is None:
        return 0.0
    image = load(result)
    dark = np.array(image.convert("L")) < 128
    rows = dark.any(axis=1)
    leftmost = int(dark[rows].argmax(axis=1).min()) if rows.any() else image.width
    return float(leftmost < image.width * 0.05)


@metric("check_image_mirror")
def check_image_mirror(result: str | None, original: str | None) -> float:
    """The result is the original mirrored left to right (SSIM of at least 0.99)."""
    if result is None or original is None:
        return 0.0
    flipped = load(result).transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    return float(same_structure(flipped, load(original), 0.99))


@metric("check_green_background")
def check_green_background(result: str | None, mask: str | None) -> float:
    """Where the mask image is not black, the result's pixels are green-dominant.

    The pixels are visited as OSWorld visits them (``array[x, y]`` for x across the width, y down the
    height), so a non-square image is read with its axes swapped, exactly as OSWorld reads it.
    """
    if result is None or mask is None:
        return 0.0
    src_image, mask_image = load(result), load(mask)
    src, tgt = np.array(src_image), np.array(mask_image)
    for x in range(mask_image.width):
        for y in range(mask_image.height):
            if tuple(tgt[x, y][:3]) != (0, 0, 0):
                r, g, b = (int(v) for v in src[x, y][:3])
                if not (g > r and g > b):
                    return 0.0
    return 1.0


@metric("check_triangle_position")
def check_triangle_position(result: str | None) -> float:
    """The second least common colour (the triangle) has its centroid within 5 % of the image centre."""
    if result is None:
        return 0.0
    pixels = np.array(load(result))
    colours, counts = np.unique(pixels.reshape(-1, pixels.shape[2]), axis=0, return_counts=True)
    triangle = colours[np.argsort(counts)][1]
    centroid = np.argwhere(np.all(pixels == triangle, axis=2)).mean(axis=0)
    size = np.array(pixels.shape[:2])
    return float(np.all(np.abs(centroid - size / 2) < 0.05 * size))


@metric("check_image_size")
def check_image_size(result: str | None, rule: dict[str, Any]) -> float:
    """The image (its opaque content with ``ignore_transparent``) is ``width`` x ``height``.

    Either may be left out.
    As in OSWorld, an image with a ``transparency`` entry is measured by its opaque content even without
    ``ignore_transparent``.
    """
    if result is None:
        return 0.0
    image = load(result)
    if (
        rule.get("ignore_transparent", False) and image.mode in ("RGBA", "LA")
    ) or "transparency" in image.info:
        rgba = image if image.mode == "RGBA" else image.convert("RGBA")
        box = rgba.split()[-1].getbbox()
        width, height = (0, 0) if box is None else (box[2] - box[0], box[3] - box[1])
    else:
        width, height = image.size
    height_ok = rule.get("height") is None or height == rule["height"]
    width_ok = rule.get("width") is None or width == rule["width"]
    return float(height_ok and width_ok)


@metric("check_image_file_size")
def check_image_file_size(result: str | None, rule: dict[str, Any]) -> float:
    """The file is smaller than ``max_size`` bytes."""
    if result is None:
        return 0.0
    return float(Path(result).stat().st_size < rule["max_size"])


@metric("compare_image_list")
def compare_image_list(results: Any, expected: Any) -> float:
    """Each result image equals its expected image pixel for pixel (resized and converted to it first)."""
    if not isinstance(results, list):
        results, expected = [results], [expected]
    for ours, gold in zip(results, expected, strict=False):
        if not ours or not gold:
            return 0.0
        a: Image.Image = load(ours)
        b: Image.Image = load(gold)
        if a.size != b.size:
            a = a.resize(b.size, Image.Resampling.LANCZOS)
        if a.mode != b.mode:
            a = a.convert(b.mode)
        if ImageChops.difference(a, b).getbbox():
            return 0.0
    return 1.0
