"""Helpers for the coverage differential tests: stand-ins for imports, and OSWorld's ``env`` on a folder.

OSWorld's metric modules import heavy libraries at the top (OCR, audio, PDF renderers) that the compared
functions never call. :func:`stub_missing` stands in for each one only when it is not installed, so a
test that installs the real library (another parity module) still gets it, whatever the test order.

OSWorld's getters take its ``DesktopEnv``; :data:`GUEST_ENV` defines, inside the reference worker, an
``env`` whose controller answers from the same guest files our getters fetch through the guest server
(the guest of the tests' ``desktop`` runs on this machine), so both sides read the same state.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from osw_studio.evaluation.registry import METRICS, Verdict
from tests.parity.reference import Reference, ReferenceError

HEAVY_IMPORTS = (
    "formulas",
    "fitz",
    "borb.pdf",
    "playwright.sync_api",
    "pydrive.auth",
    "pydrive.drive",
    "acoustid",
    "cv2",
    "librosa",
    "fastdtw",
    "imagehash",
    "easyocr",
    "odf.opendocument",
    "odf.text",
    "PyPDF2",
    "pdfplumber",
    "mutagen.easyid3",
    "scipy.spatial.distance",
    "skimage.metrics",
    "skimage.color",
    "pypdf",
    "docx",
    "docx.enum.text",
    "docx.shared",
    "pptx",
    "pptx.enum.shapes",
    "pptx.enum.text",
    "pptx.util",
    "yaml",
    "wrapt_timeout_decorator",
)
"""Imports of the compared modules that a parity test may not have installed."""


def stub_missing(reference: Reference, names: tuple[str, ...] = HEAVY_IMPORTS) -> None:
    """Stand in for each of ``names`` that the side environment cannot import."""
    reference.exec(
        "import importlib\n"
        "for name in NAMES:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except ImportError:\n"
        "        stub([name])\n".replace("NAMES", repr(list(names)))
    )


def require_libraries(reference: Reference, *names: str) -> None:
    """Stand in for the missing heavy imports, then require ``names`` to be real in the side environment.

    A differential test of a metric that calls one of them cannot judge with a stand-in: it fails under
    CI (whose side environment is built from packaging/reference-requirements.txt) and skips elsewhere.
    """
    stub_missing(reference)
    missing = reference.exec(
        "import importlib\n"
        f"result = [n for n in {list(names)!r}"
        " if getattr(importlib.import_module(n), '__file__', None) is None]"
    )
    if missing:
        needed = ", ".join(missing)
        message = f"the reference side environment lacks {needed} (packaging/reference-requirements.txt)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


GUEST_ENV = r"""
import os as _os

class _Controller:
    def __init__(self, home, tree):
        self.home, self.tree = home, tree

    def execute_python_command(self, command):
        # OSWorld's getters only ask for paths under HOME: run the snippet here with the guest's HOME
        # (a subprocess per call would make the tests slow for nothing).
        import contextlib, io
        saved, out = _os.environ.get("HOME"), io.StringIO()
        _os.environ["HOME"] = self.home
        try:
            with contextlib.redirect_stdout(out):
                exec(command, {})
        finally:
            _os.environ["HOME"] = saved
        return {"status": "success", "output": out.getvalue(), "error": "", "returncode": 0}

    def get_file(self, path):
        try:
            with open(path, "rb") as f:
                return f.read()
        except OSError:
            return None

    def get_accessibility_tree(self):
        return self.tree

    def get_vm_desktop_path(self):
        return _os.path.join(self.home, "Desktop")

    def get_vm_directory_tree(self, path):
        def walk(p):
            node = {"name": _os.path.basename(p), "type": "directory" if _os.path.isdir(p) else "file"}
            if _os.path.isdir(p):
                node["children"] = [walk(_os.path.join(p, c)) for c in sorted(_os.listdir(p))]
            return node
        return walk(path)

class GuestEnv:
    vm_platform = "Linux"
    vm_machine = "x86_64"  # upstream getters read the guest's architecture
    def __init__(self, home, cache_dir, tree=None):
        self.controller = _Controller(home, tree)
        self.cache_dir = cache_dir
"""
"""Source that defines ``GuestEnv(home, cache_dir, tree=None)`` in the reference worker."""


def call_getter(
    reference: Reference,
    module: str,
    name: str,
    home: str,
    cache: str,
    config: dict[str, object],
    tree: str | None = None,
) -> object:
    """OSWorld's getter ``module.name(env, config)`` on the guest files under ``home``."""
    code = (
        GUEST_ENV + f"\nresult = getattr(m0, {name!r})(GuestEnv({home!r}, {cache!r}, {tree!r}), {config!r})"
    )
    return reference.exec(code, modules=(module,))


OSWORLD = "desktop_env.evaluators.metrics."


def both(ref: Reference, module: str, name: str, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """Our score and OSWorld's for the same arguments (``"raises"`` when a side raises)."""
    try:
        verdict = METRICS.get(name)(*args, **kwargs)
        ours: Any = float(verdict.score if isinstance(verdict, Verdict) else verdict)
    except Exception:
        ours = "raises"
    try:
        value = ref.call(OSWORLD + module, name, *args, **kwargs)
    except ReferenceError:
        return ours, "raises"
    # Deliberate: where OSWorld's function falls off its end (an unknown rule type) it gives None, no
    # score at all; ours scores 0 for it.
    return ours, 0.0 if value is None else float(value)


def agree(ref: Reference, module: str, name: str, *args: Any, **kwargs: Any) -> None:
    ours, theirs = both(ref, module, name, *args, **kwargs)
    assert ours == theirs, f"{name}: ours {ours}, OSWorld {theirs}"
