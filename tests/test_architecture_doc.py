"""Every path and public name ARCHITECTURE.md cites in backticks exists, so the page cannot go stale quietly.

Cited are: repository paths (``ui/run_view.py``, ``tests/parity``, ``packaging/``: from the checkout or
from ``osw_studio/``), dotted names (``runner.plan``, ``core.limits.loads_bounded``,
``SignalRelay.listen_by_name``) and names of classes or constants (``StoreError``, ``EPISODE_SIGNALS``).
Words in backticks that are none of these (a status such as ``stuck``, a URL path such as ``/execute``,
a file inside a run store such as ``steps.jsonl``) are not looked up.
"""

from __future__ import annotations

import importlib
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "osw_studio"
DOC = ROOT / "ARCHITECTURE.md"

_PATH = re.compile(r"^[\w.-]+(/[\w.-]*)+$|^[\w-]+\.py$")
_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")
_CLASS_OR_CONSTANT = re.compile(r"^(?:[A-Z][a-z0-9]+[A-Z]\w*|[A-Z][A-Z0-9]*_[A-Z0-9_]+)$")
_FILE_SUFFIXES = (".md", ".json", ".jsonl", ".png", ".txt", ".html", ".toml", ".partial")
_RUN_STORE = ("screens/", "runs/")


def _cited() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    spans = re.findall(r"`([^`\n]+)`", text)
    out: list[str] = []
    for span in spans:
        for token in re.split(r"[\s,()]+", span):
            token = token.strip(".:;")
            if token and token not in out:
                out.append(token)
    return out


@cache
def _sources() -> dict[Path, str]:
    files = [*PACKAGE.rglob("*.py"), *(ROOT / "tests").rglob("*.py")]
    return {p: p.read_text(encoding="utf-8") for p in files if p.resolve() != Path(__file__).resolve()}


def _defined(name: str) -> bool:
    pattern = re.compile(
        rf"^\s*(?:class {name}\b|(?:async )?def {name}\b|{name}\s*[:=])|[\"']{name}[\"']", re.M
    )
    return any(pattern.search(text) for text in _sources().values())


def _module_defining_class(name: str) -> str | None:
    pattern = re.compile(rf"^class {name}\b", re.M)
    for path, text in _sources().items():
        if pattern.search(text):
            return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    return None


def _resolve(dotted: str) -> bool:
    parts = dotted.split(".")
    if parts[0] != "osw_studio" and (PACKAGE / parts[0]).exists():
        parts = ["osw_studio", *parts]
    if parts[0] != "osw_studio":
        module = _module_defining_class(parts[0])
        if module is None:
            return True  # not ours: a D-Bus method, another package's module
        parts = [*module.split("."), *parts]
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            fields = getattr(obj, "model_fields", {}) or getattr(obj, "__dataclass_fields__", {})
            if attr in fields:
                obj = fields[attr]
                continue
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def _kind(token: str) -> str | None:
    if token.startswith(("/", "../", "http", *_RUN_STORE)) or "<" in token or "*" in token:
        return None
    if (_PATH.match(token) and "/" in token) or token.endswith(".py"):
        return "path"
    if token.endswith(_FILE_SUFFIXES) or token.startswith("."):
        return None
    if _DOTTED.match(token):
        return "dotted"
    if _CLASS_OR_CONSTANT.match(token):
        return "name"
    return None


def _exists(token: str) -> bool:
    kind = _kind(token)
    if kind == "path":
        path = token.rstrip("/")
        return any((base / path).exists() for base in (ROOT, PACKAGE))
    if kind == "dotted":
        return _resolve(token)
    return _defined(token)


CITED = [t for t in _cited() if _kind(t) is not None]


def test_the_page_cites_enough_to_check() -> None:
    assert len(CITED) > 60


@pytest.mark.parametrize("token", CITED)
def test_cited_name_exists(token: str) -> None:
    assert _exists(token), f"ARCHITECTURE.md cites `{token}`, which the checkout does not have"


@pytest.mark.parametrize(
    ("token", "real"),
    [
        ("ui/run_view.py", True),
        ("ui/no_such_view.py", False),
        ("runner.plan", True),
        ("runner.no_plan", False),
        ("cli.py", False),
        ("StoreError", True),
        ("EPISODE_API", False),
        ("SignalRelay.listen_by_name", True),
        ("Task.desktop", True),
    ],
)
def test_the_check_tells_real_from_stale(token: str, real: bool) -> None:
    assert _exists(token) is real
