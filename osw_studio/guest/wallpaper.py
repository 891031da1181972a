"""The desktop wallpaper: GNOME's setting where gsettings has it, else the X root window's background.

A bare window manager such as openbox shows the root window, so setting its background pixmap is what
makes a wallpaper visible in our sandbox. The X connection stays open while the guest runs because the
root window's background pixmap lives only as long as the connection that made it.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

from PIL import Image
from Xlib import X, Xatom
from Xlib import display as xdisplay

# Keep each PutImage request well under the X request size limit.
_MAX_REQUEST_BYTES = 200_000


class Wallpaper:
    """Sets and remembers the wallpaper of one display.

    Args:
        display_name: The X display, e.g. ``":1"``.
    """

    def __init__(self, display_name: str) -> None:
        self._display_name = display_name
        self._display: Any = None
        self._lock = threading.Lock()
        self._pixmap: Any = None
        self.path: Path | None = None

    def set(self, path: Path) -> None:
        """Show the image at ``path`` as the wallpaper.

        Raises:
            OSError: If the image cannot be read.
        """
        image = Image.open(path).convert("RGB")
        gsettings = shutil.which("gsettings")
        if gsettings:
            subprocess.run(
                [gsettings, "set", "org.gnome.desktop.background", "picture-uri", f"file://{path}"],
                capture_output=True,
                timeout=10,
                check=False,
            )
        with self._lock:
            self._set_root(image)
        self.path = path

    def _set_root(self, image: Image.Image) -> None:
        if self._display is None:
            self._display = xdisplay.Display(self._display_name)
        display = self._display
        screen = display.screen()
        width, height = screen.width_in_pixels, screen.height_in_pixels
        data = image.resize((width, height)).tobytes("raw", "BGRX")
        root = screen.root
        pixmap = root.create_pixmap(width, height, screen.root_depth)
        gc = pixmap.create_gc()
        rows = max(1, _MAX_REQUEST_BYTES // (width * 4))
        for top in range(0, height, rows):
            count = min(rows, height - top)
            chunk = data[top * width * 4 : (top + count) * width * 4]
            pixmap.put_image(gc, 0, top, width, count, X.ZPixmap, screen.root_depth, 0, chunk)
        root.change_attributes(background_pixmap=pixmap)
        root.change_property(display.intern_atom("_XROOTPMAP_ID"), Xatom.PIXMAP, 32, [pixmap.id])
        root.clear_area(0, 0, width, height)
        if self._pixmap is not None:
            self._pixmap.free()
        self._pixmap = pixmap
        display.sync()

    def close(self) -> None:
        """Close the X connection (the root background goes back to the default)."""
        if self._display is not None:
            self._display.close()
            self._display = None
