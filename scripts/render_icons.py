"""Render the PNG (and .ico/.icns) icons from their SVG sources under resources/icons/.

Run after editing an SVG (`make icons`); the rendered files are committed so that neither the app, the
desktop integration nor a PyInstaller build needs an SVG renderer at run time.

- resources/icons/app/osw-studio.svg -> app/hicolor/<N>x<N>/apps/osw-studio.png (the freedesktop icon
  theme layout, installed as-is by `make install-desktop`), app/osw-studio.ico (Windows builds) and
  app/osw-studio.icns (macOS builds).
- resources/icons/actions/<name>.svg -> actions/<N>/<name>.png.

Rendering uses Qt's own SVG renderer (QtSvg ships in PySide6-Essentials), headless. With `--out DIR`
the files go under DIR instead (the tests use that to check the committed PNGs are up to date).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PIL import Image
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
APP_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ACTION_SIZES = (16, 24, 32, 48)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)


def render(svg: Path, size: int, out: Path) -> None:
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"{svg}: not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    out.parent.mkdir(parents=True, exist_ok=True)
    if not image.save(str(out), "PNG"):
        raise SystemExit(f"{out}: could not write")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ICONS, help="where to write (default: beside the SVGs)")
    out: Path = parser.parse_args().out
    _app = QGuiApplication(sys.argv[:1])
    app_svg = ICONS / "app" / "osw-studio.svg"
    for size in APP_SIZES:
        render(app_svg, size, out / "app" / "hicolor" / f"{size}x{size}" / "apps" / "osw-studio.png")
    largest = Image.open(out / "app" / "hicolor" / "512x512" / "apps" / "osw-studio.png")
    largest.save(out / "app" / "osw-studio.ico", sizes=[(s, s) for s in ICO_SIZES])
    largest.save(out / "app" / "osw-studio.icns")
    count = len(APP_SIZES) + 2
    for svg in sorted((ICONS / "actions").glob("*.svg")):
        for size in ACTION_SIZES:
            render(svg, size, out / "actions" / str(size) / f"{svg.stem}.png")
            count += 1
    print(f"rendered {count} files under {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
