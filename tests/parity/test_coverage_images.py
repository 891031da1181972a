"""Differential tests: the image metrics against OSWorld's (metrics.gimp) on generated images.

An original picture (gradients, a disc, a bar) and its edits as GIMP tasks ask for them (darker,
brighter, more and less saturated, more contrast, mirrored, resized, indexed, on a transparent canvas,
exported elsewhere), plus near misses (another picture, a shifted copy, a tiny image).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageEnhance, ImageOps

from tests.parity.guest_env import agree, stub_missing
from tests.parity.reference import Reference

GIMP = "gimp"


@pytest.fixture(scope="module")
def ref(reference: Reference) -> Reference:
    stub_missing(reference)
    return reference


def picture(width: int = 64, height: int = 48, seed: int = 0) -> Image.Image:
    x = np.linspace(0, 255, width)[None, :].repeat(height, 0)
    y = np.linspace(0, 255, height)[:, None].repeat(width, 1)
    rgb = np.stack([x, y, (x + y) / 2 if seed == 0 else 255 - x], axis=2).astype(np.uint8)
    image = Image.fromarray(rgb)
    draw = ImageDraw.Draw(image)
    draw.ellipse((10 + seed * 20, 8, 30 + seed * 20, 28), fill=(250, 220, 30))
    draw.rectangle((5, 36, width - 5, 40), fill=(20, 20, 120))
    return image


EDITS: dict[str, Callable[[Image.Image], Image.Image]] = {
    "same": lambda im: im.copy(),
    "darker": lambda im: ImageEnhance.Brightness(im).enhance(0.7),
    "brighter": lambda im: ImageEnhance.Brightness(im).enhance(1.3),
    "saturated": lambda im: ImageEnhance.Color(im).enhance(1.8),
    "desaturated": lambda im: ImageEnhance.Color(im).enhance(0.3),
    "contrast": lambda im: ImageEnhance.Contrast(im).enhance(1.6),
    "mirrored": lambda im: ImageOps.mirror(im),
    "resized": lambda im: im.resize((32, 24)),
    "indexed": lambda im: im.convert("P", palette=Image.Palette.ADAPTIVE, colors=64),
    "other": lambda im: picture(seed=1),
    "shifted": lambda im: ImageOps.expand(im, border=(6, 0, 0, 0)).crop((0, 0, im.width, im.height)),
    "tiny": lambda im: im.resize((5, 5)),
}


def save(image: Image.Image, path: Path) -> str:
    image.save(path)
    return str(path)


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("images")
    base = picture()
    paths = {"original": save(base, folder / "original.png")}
    for name, edit in EDITS.items():
        paths[name] = save(edit(base), folder / f"{name}.png")
    canvas = Image.new("RGBA", (100, 80), (0, 0, 0, 0))
    canvas.paste(base.convert("RGBA"), (10, 12))
    paths["on-canvas"] = save(canvas, folder / "on-canvas.png")
    paths["empty-canvas"] = save(Image.new("RGBA", (20, 20), (0, 0, 0, 0)), folder / "empty.png")
    paths["jpeg"] = str(folder / "original.jpg")
    base.save(paths["jpeg"], quality=60)
    return paths


PAIR_METRICS = [
    "check_brightness_decrease_and_structure_sim",
    "check_saturation_increase_and_structure_sim",
    "check_file_exists_and_structure_sim",
    "check_structure_sim",
    "check_structure_sim_resized",
    "check_structure_sim_with_threshold",
    "check_contrast_increase_and_structure_sim",
    "check_palette_and_structure_sim",
    "check_image_mirror",
    "compare_image_list",
]
RESULTS = [*EDITS, "on-canvas", "empty-canvas", "jpeg", "original"]


@pytest.mark.parametrize("name", PAIR_METRICS)
@pytest.mark.parametrize("result", RESULTS)
def test_edit_against_the_original(ref: Reference, images: dict[str, str], name: str, result: str) -> None:
    agree(ref, GIMP, name, images[result], images["original"])


@pytest.mark.parametrize("name", PAIR_METRICS)
def test_missing_files(ref: Reference, images: dict[str, str], name: str) -> None:
    agree(ref, GIMP, name, None, images["original"])


@pytest.mark.parametrize("threshold", [0.3, 0.7, 0.95, 1.0])
@pytest.mark.parametrize("result", ["darker", "shifted", "resized", "tiny", "indexed", "same"])
def test_structure_with_a_threshold(
    ref: Reference, images: dict[str, str], result: str, threshold: float
) -> None:
    agree(
        ref,
        GIMP,
        "check_structure_sim_with_threshold",
        images[result],
        images["original"],
        ssim_threshold=threshold,
    )


def test_file_exists_needs_the_file(ref: Reference, images: dict[str, str], tmp_path: Path) -> None:
    agree(ref, GIMP, "check_file_exists_and_structure_sim", str(tmp_path / "absent.png"), images["original"])


def test_image_lists(ref: Reference, images: dict[str, str]) -> None:
    agree(
        ref,
        GIMP,
        "compare_image_list",
        [images["same"], images["original"]],
        [images["original"], images["same"]],
    )
    agree(
        ref,
        GIMP,
        "compare_image_list",
        [images["same"], images["darker"]],
        [images["original"], images["same"]],
    )
    agree(ref, GIMP, "compare_image_list", [images["same"], None], [images["original"], images["same"]])


@pytest.mark.parametrize(
    "rule",
    [
        {"width": 64, "height": 48},
        {"width": 64},
        {"height": 50},
        {"width": 64, "height": 48, "ignore_transparent": True},
        {"width": 100, "height": 80},
        {"width": 0, "height": 0, "ignore_transparent": True},
    ],
)
@pytest.mark.parametrize("result", ["original", "on-canvas", "empty-canvas", "indexed", "resized"])
def test_check_image_size(ref: Reference, images: dict[str, str], rule: dict[str, Any], result: str) -> None:
    agree(ref, GIMP, "check_image_size", images[result], rule)


@pytest.mark.parametrize("max_size", [100, 5000, 500000])
@pytest.mark.parametrize("result", ["original", "jpeg", "tiny"])
def test_check_image_file_size(ref: Reference, images: dict[str, str], max_size: int, result: str) -> None:
    agree(ref, GIMP, "check_image_file_size", images[result], {"max_size": max_size})


def _textbox(path: Path, left: int) -> str:
    image = Image.new("RGB", (200, 100), "white")
    ImageDraw.Draw(image).rectangle((left, 40, left + 60, 55), fill="black")
    return save(image, path)


@pytest.mark.parametrize("left", [0, 5, 9, 10, 80])
def test_check_textbox_on_leftside(ref: Reference, tmp_path: Path, left: int) -> None:
    agree(ref, GIMP, "check_textbox_on_leftside", _textbox(tmp_path / "t.png", left))
    agree(
        ref, GIMP, "check_textbox_on_leftside", save(Image.new("RGB", (30, 30), "white"), tmp_path / "w.png")
    )


def _triangle(path: Path, centre: tuple[int, int], size: tuple[int, int] = (120, 100)) -> str:
    image = Image.new("RGB", size, (255, 255, 255))
    cx, cy = centre
    ImageDraw.Draw(image).polygon([(cx, cy - 12), (cx - 12, cy + 8), (cx + 12, cy + 8)], fill=(255, 255, 0))
    ImageDraw.Draw(image).rectangle((0, 0, 30, 30), fill=(0, 0, 200))
    return save(image, path)


@pytest.mark.parametrize("centre", [(60, 50), (62, 52), (90, 50), (60, 80)])
def test_check_triangle_position(ref: Reference, tmp_path: Path, centre: tuple[int, int]) -> None:
    agree(ref, GIMP, "check_triangle_position", _triangle(tmp_path / "tri.png", centre))


def _subject(path: Path, background: tuple[int, int, int], size: tuple[int, int] = (40, 40)) -> str:
    image = Image.new("RGB", size, background)
    ImageDraw.Draw(image).ellipse((10, 10, 30, 30), fill=(200, 50, 50))
    return save(image, path)


def _mask(path: Path, size: tuple[int, int] = (40, 40)) -> str:
    image = Image.new("RGB", size, (255, 255, 255))
    ImageDraw.Draw(image).ellipse((10, 10, 30, 30), fill=(0, 0, 0))
    return save(image, path)


@pytest.mark.parametrize("background", [(0, 200, 0), (10, 120, 100), (120, 120, 120), (200, 30, 30)])
def test_check_green_background(ref: Reference, tmp_path: Path, background: tuple[int, int, int]) -> None:
    agree(
        ref,
        GIMP,
        "check_green_background",
        _subject(tmp_path / "s.png", background),
        _mask(tmp_path / "m.png"),
    )
    wide_subject = _subject(tmp_path / "ws.png", background, (50, 40))
    agree(ref, GIMP, "check_green_background", wide_subject, _mask(tmp_path / "wm.png", (50, 40)))
