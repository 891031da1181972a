"""The icons: one consistent action theme, PNGs at every size that match their SVGs, and icons Qt loads."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PIL import Image, ImageChops, ImageStat

from tests.packaging.conftest import ROOT

ICONS = ROOT / "resources" / "icons"
SVG = "{http://www.w3.org/2000/svg}"
ACTIONS = ("run", "pause", "step", "stop", "approve", "skip", "takeover", "edit", "settings")


def _rendered() -> list[Path]:
    return sorted(p for p in ICONS.rglob("*.png"))


def test_action_theme_has_every_control_in_one_style() -> None:
    styles = set()
    for name in ACTIONS:
        root = ET.parse(ICONS / "actions" / f"{name}.svg").getroot()
        assert root.tag == f"{SVG}svg"
        styles.add(
            (root.get("viewBox"), root.get("stroke"), root.get("stroke-width"), root.get("stroke-linecap"))
        )
    assert styles == {("0 0 24 24", "#546e7a", "2", "round")}
    assert sorted(p.stem for p in (ICONS / "actions").glob("*.svg")) == sorted(ACTIONS)


def test_every_icon_is_rendered_at_every_size_and_is_not_blank() -> None:
    expected = [
        ICONS / "app" / "hicolor" / f"{s}x{s}" / "apps" / "osw-studio.png"
        for s in (16, 24, 32, 48, 64, 128, 256, 512)
    ]
    expected += [ICONS / "actions" / str(s) / f"{n}.png" for s in (16, 24, 32, 48) for n in ACTIONS]
    assert sorted(expected) == _rendered()
    for path in expected:
        image = Image.open(path)
        size = int(path.parent.name) if path.parent.name.isdigit() else int(path.parts[-3].split("x")[0])
        assert image.size == (size, size), path
        alpha = image.getchannel("A")
        assert alpha.getextrema()[1] == 255, f"{path} is empty"
    assert (ICONS / "app" / "osw-studio.ico").stat().st_size > 0
    assert (ICONS / "app" / "osw-studio.icns").stat().st_size > 0


def test_committed_pngs_match_their_svgs(tmp_path: Path) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "render_icons.py"), "--out", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    stale = []
    for committed in _rendered():
        fresh = Image.open(tmp_path / committed.relative_to(ICONS)).convert("RGBA")
        difference = ImageChops.difference(Image.open(committed).convert("RGBA"), fresh)
        # Antialiasing may differ by a shade between Qt versions; an edited SVG differs far more.
        if max(ImageStat.Stat(difference).mean) > 2.0:
            stale.append(str(committed.relative_to(ICONS)))
    assert stale == [], "run `make icons` and commit the PNGs"


@pytest.mark.parametrize("name", ACTIONS)
def test_qt_loads_each_action_icon_at_toolbar_size(name: str) -> None:
    from PySide6.QtWidgets import QApplication

    from osw_studio.ui.icons import action_icon, app_icon

    assert QApplication.instance() or QApplication([])
    icon = action_icon(name)  # type: ignore[arg-type]
    assert icon.pixmap(24, 24).width() == 24
    assert not app_icon().isNull()
