"""The guest image's Python requirements hold every library the guest server imports.

The image installs ``packaging/guest-image/requirements.txt`` only (not the project's dependencies), so a
library the guest code starts to import must be added there too; the Docker tests would find out only
after a long image build. This reads the imports of the modules the image runs, without Docker.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = ROOT / "packaging" / "guest-image" / "requirements.txt"
GUEST_CODE = ["osw_studio/guest", "osw_studio/core", "osw_studio/actions"]
"""What the image's guest server imports (its Dockerfile checks `import osw_studio.guest.app`)."""

DISTRIBUTION = {
    "PIL": "pillow",
    "Xlib": "python-xlib",
    "starlette": "fastapi",
    "multipart": "python-multipart",
    "h11": "uvicorn",
}
"""Import names that are not their distribution's name (starlette comes with FastAPI, h11 with uvicorn)."""
SYSTEM = {"pyatspi", "gi", "dbus", "atspi_bus", "pyautogui"}
"""Debian's (the image's venv sees the system site-packages) or imported lazily inside a guest command."""


def top_level_imports(folder: Path) -> set[str]:
    """Modules imported at the top of the files of ``folder`` (not inside functions)."""
    found: set[str] = set()
    for file in folder.rglob("*.py"):
        for node in ast.parse(file.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found


def required() -> set[str]:
    names = set()
    for line in REQUIREMENTS.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.add(re.split(r"[<>=!~\[ ;]", line, maxsplit=1)[0].lower())
    return names


def test_every_library_the_guest_code_imports_is_in_the_image_requirements() -> None:
    imported = set().union(*(top_level_imports(ROOT / folder) for folder in GUEST_CODE))
    third_party = imported - set(sys.stdlib_module_names) - {"osw_studio", "__future__"} - SYSTEM
    assert third_party, "no imports found: the folders moved?"
    missing = {DISTRIBUTION.get(name, name).lower() for name in third_party} - required()
    assert not missing, f"add to {REQUIREMENTS.relative_to(ROOT)}: {sorted(missing)}"
