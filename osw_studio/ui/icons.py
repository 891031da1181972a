"""The application icon and the action icon theme, from ``resources/icons/``.

Icons are PNGs rendered from hand-written SVGs (``scripts/render_icons.py``) at several sizes, so Qt
picks a sharp one for every toolbar and menu without needing an SVG renderer at run time. The folder
ships inside the wheel and the PyInstaller bundle as ``osw_studio/resources/icons/``; in a checkout it
is the repository's ``resources/icons/``.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Literal, get_args

from PySide6.QtGui import QIcon

from osw_studio.core.errors import OswError

_PACKAGE_DIR = Path(__file__).resolve().parent.parent

ActionIcon = Literal["run", "pause", "step", "stop", "approve", "skip", "takeover", "edit", "settings"]
"""The names in the action icon theme, one per human control of a run."""

ACTION_ICONS: tuple[str, ...] = get_args(ActionIcon)


def icons_dir() -> Path:
    """The icon folder: the installed package's resources, else the checkout's.

    Raises:
        OswError: If neither exists (a broken installation).
    """
    candidates = [_PACKAGE_DIR / "resources" / "icons", _PACKAGE_DIR.parent / "resources" / "icons"]
    for folder in candidates:
        if folder.is_dir():
            return folder
    raise OswError(
        "the icon folder is missing",
        where=" or ".join(str(c) for c in candidates),
        hint="reinstall OSW Studio; the resources folder is missing",
    )


def _icon(files: list[Path]) -> QIcon:
    icon = QIcon()
    for path in files:
        icon.addFile(str(path))
    return icon


@functools.cache
def app_icon() -> QIcon:
    """OSW Studio's application icon, at every rendered size (16 to 512 pixels)."""
    sizes = sorted((icons_dir() / "app" / "hicolor").glob("*x*/apps/osw-studio.png"))
    return _icon(sizes)


@functools.cache
def action_icon(name: ActionIcon) -> QIcon:
    """The theme's icon for ``name`` (``"run"``, ``"pause"``, ...), at every rendered size.

    Raises:
        OswError: If ``name`` is not in the theme.
    """
    files = sorted((icons_dir() / "actions").glob(f"*/{name}.png"))
    if not files:
        raise OswError(
            f"no action icon named {name!r}",
            where=str(icons_dir() / "actions"),
            hint=f"use one of: {', '.join(ACTION_ICONS)}",
        )
    return _icon(files)
