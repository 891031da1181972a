"""Coordinate spaces and Qwen2.5-VL smart resize."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from osw_studio.actions import CoordinateSpace, smart_resize
from osw_studio.actions.coords import MAX_PIXELS, MIN_PIXELS


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        ((1080, 1920), (1092, 1932)),
        ((720, 1280), (728, 1288)),
        ((768, 1366), (756, 1372)),
        ((2160, 3840), (2156, 3836)),
    ],
)
def test_smart_resize_matches_qwen_rounding(size: tuple[int, int], expected: tuple[int, int]) -> None:
    assert smart_resize(*size) == expected


@settings(max_examples=300, deadline=None)
@given(h=st.integers(10, 8000), w=st.integers(10, 8000), max_k=st.sampled_from([256, 1280, 2560, 16384]))
def test_smart_resize_stays_on_the_grid_and_in_bounds(h: int, w: int, max_k: int) -> None:
    if max(h, w) / min(h, w) > 200:
        with pytest.raises(ValueError):
            smart_resize(h, w)
        return
    max_pixels = max_k * 28 * 28
    rh, rw = smart_resize(h, w, max_pixels=max_pixels)
    assert rh % 28 == 0 and rw % 28 == 0
    assert MIN_PIXELS <= rh * rw <= max(max_pixels, 28 * 28 * 4) or min(rh, rw) == 28


@pytest.mark.parametrize(
    ("mode", "rounding"),
    [("abs", "round"), ("smart", "round"), ("rel1000", "round"), ("norm", "round"), ("rel999", "round"),
     ("rel999", "trunc"), ("smart", "trunc")],
)  # fmt: skip
@settings(max_examples=200, deadline=None)
@given(x=st.integers(0, 2559), y=st.integers(0, 1439))
def test_screen_points_survive_a_round_trip(mode: str, rounding: str, x: int, y: int) -> None:
    space = CoordinateSpace(screen=(2560, 1440), mode=mode, rounding=rounding)
    assert max(
        abs(a - b) for a, b in zip(space.to_screen(*space.from_screen(x, y)), (x, y), strict=True)
    ) <= (space.round_trip_error)


def test_truncating_spaces_compute_as_osworld_does() -> None:
    # Qwen3-VL: int(x * (W / 999)); OpenCUA qwen25: int(x / w * W) with w the smart-resized width
    qwen3 = CoordinateSpace(screen=(1920, 1080), mode="rel999", rounding="trunc")
    assert qwen3.to_screen(500, 500) == (int(500 * (1920 / 999)), int(500 * (1080 / 999)))
    assert qwen3.to_screen(998, 3) == (1918, 3)
    opencua = CoordinateSpace(screen=(1920, 1080), mode="smart", rounding="trunc", min_pixels=3136)
    assert opencua.to_screen(1500, 900) == (int(1500 / 1932 * 1920), int(900 / 1092 * 1080))
    assert CoordinateSpace(screen=(1920, 1080), mode="smart").to_screen(1500, 900) == (1491, 890)


def test_model_points_beyond_the_edge_are_clamped() -> None:
    space = CoordinateSpace(mode="rel1000")
    assert space.to_screen(1005, -3) == (1919, 0)


def test_invalid_spaces_are_refused() -> None:
    with pytest.raises(ValueError, match="needs the image size"):
        CoordinateSpace(mode="resized")
    with pytest.raises(ValueError, match="aspect ratio"):
        CoordinateSpace(screen=(10000, 10), mode="smart")
    assert MAX_PIXELS == 16384 * 28 * 28
