"""The desktop wallpaper: GNOME's setting where gsettings has it, else the X root window's background.

``/wallpaper`` answers, as OSWorld's server does, the file GNOME's ``picture-uri`` names (also when
something else than this server set it, e.g. ``gsettings set`` in a task's setup); where that names no
file (gsettings without a dconf backend forgets what was set) the image last set through this server.

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
from urllib.parse import unquote

from PIL import Image
from Xlib import X, Xatom
from Xlib import display as xdisplay

# Keep each PutImage request well under the X request size limit.
_MAX_REQUEST_BYTES = 200_000


def gsettings_uri() -> str | None:
    """GNOME's ``org.gnome.desktop.background picture-uri``, or None without gsettings."""
    gsettings = shutil.which("gsettings")
    if gsettings is None:
        return None
    try:
        result = subprocess.run(
            [gsettings, "get", "org.gnome.desktop.background", "picture-uri"],
            capture_output=True,
            text=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def path_of_uri(value: str) -> Path | None:
    """The file a gsettings picture URI names (quoted as gsettings prints it), or None.

    Examples:
        >>> path_of_uri("'file:///usr/share/backgrounds/a%20b.png'")
        PosixPath('/usr/share/backgrounds/a b.png')
        >>> path_of_uri("'/home/user/bg.jpg'")
        PosixPath('/home/user/bg.jpg')
        >>> path_of_uri("''") is None
        True
    """
    text = value.strip().strip("'\"")
    if text.startswith("file://"):
        text = unquote(text.removeprefix("file://"))
    return Path(text) if text.startswith("/") else None


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
        self._uri_at_set: str | None = None

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
        self._uri_at_set = gsettings_uri()

    def current(self) -> Path | None:
        """The wallpaper image file now shown, or None if there is none (see the module's description)."""
        uri = gsettings_uri()
        if self.path is not None and self.path.is_file() and (uri is None or uri == self._uri_at_set):
            return self.path
        named = path_of_uri(uri) if uri else None
        if named is not None and named.is_file():
            return named
        if self.path is not None and self.path.is_file():
            return self.path
        return None

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
