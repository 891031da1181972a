"""The worker of ``--evaluator osworld``: runs OSWorld's own metric functions in the side environment.

This file is run as a script by the side environment's interpreter (``.venv-ref``, where OSWorld's
``desktop-env`` package is installed); it imports nothing from OSW Studio and only the standard
library itself. It reads JSON lines on stdin, one request a line::

    {"metric": "compare_table", "args": ["/cache/t1/result.xlsx", "/cache/t1/gold.xlsx"],
     "options": {"rules": [...]}}

and answers ``{"ok": true, "score": 0.5}`` or ``{"ok": false, "error": "Type: message"}``.

Modules are loaded without their packages' ``__init__`` files (OSWorld's import every optional
dependency: model SDKs, cloud clients, torch). A metric module's import of a library the side
environment does not have gets an empty stand-in, so only the libraries a metric really calls must
be installed; the metric is found in whichever ``desktop_env.evaluators.metrics`` module defines it.

The differential tests' reference worker loads OSWorld's modules with this file's loader
(:func:`import_bare`, :func:`stub_module`), so it stays standard-library only and does nothing on import.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Any

PACKAGE = "desktop_env.evaluators.metrics"
MAX_STUBS = 64


class _Stub(types.ModuleType):
    """An empty stand-in module: any attribute is a class that does nothing."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (), {"__init__": lambda self, *a, **k: None})


def stub_module(name: str) -> None:
    """Register an empty stand-in for module ``name`` (and its missing parents) in ``sys.modules``."""
    parts = name.split(".")
    for i in range(1, len(parts) + 1):
        sub = ".".join(parts[:i])
        if sub not in sys.modules:
            module = _Stub(sub)
            module.__path__ = []
            sys.modules[sub] = module
            if i > 1:
                setattr(sys.modules[".".join(parts[: i - 1])], parts[i - 1], module)


def _package_root(top: str) -> Path:
    """The folder of the top-level package ``top`` (already made bare, or found on the path)."""
    made = getattr(sys.modules.get(top), "__path__", None)
    if made:  # a bare package has no spec for find_spec to read
        return Path(next(iter(made)))
    spec = importlib.util.find_spec(top)
    if spec is None or spec.submodule_search_locations is None:
        raise ModuleNotFoundError(f"OSWorld's package {top!r} is not installed in this environment")
    return Path(next(iter(spec.submodule_search_locations)))


def bare_packages(name: str) -> None:
    """Create ``name``'s parent packages as empty modules, so their ``__init__`` does not run."""
    parts = name.split(".")
    if all(".".join(parts[:i]) in sys.modules for i in range(1, len(parts))):
        return
    root = _package_root(parts[0])
    for i in range(1, len(parts)):
        pkg = ".".join(parts[:i])
        if pkg not in sys.modules:
            module = types.ModuleType(pkg)
            module.__path__ = [str(root.joinpath(*parts[1:i]))]
            sys.modules[pkg] = module


def import_bare(name: str) -> types.ModuleType:
    """Import ``name`` with every parent package created bare (its ``__init__`` not run)."""
    bare_packages(name)
    return importlib.import_module(name)


def _load(name: str) -> types.ModuleType:
    """Import ``name`` (parents bare), standing in for each optional library it lacks."""
    for _ in range(MAX_STUBS):
        try:
            return import_bare(name)
        except ModuleNotFoundError as exc:
            missing = exc.name or ""
            if not missing or missing == name or missing.startswith(PACKAGE):
                raise
            sys.modules.pop(name, None)
            stub_module(missing)
    raise ImportError(f"{name} needs more than {MAX_STUBS} missing libraries")


_FOUND: dict[str, Any] = {}


def exported() -> dict[str, tuple[str, str]]:
    """``name -> (module, attribute)`` as OSWorld's ``metrics/__init__.py`` imports them (last wins)."""
    bare_packages(f"{PACKAGE}.utils")
    init = Path(sys.modules[PACKAGE].__path__[0]) / "__init__.py"
    names: dict[str, tuple[str, str]] = {}
    for node in ast.walk(ast.parse(init.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            for alias in node.names:
                names[alias.asname or alias.name] = (f"{PACKAGE}.{node.module}", alias.name)
    return names


def find(metric: str) -> Any:
    """OSWorld's metric function named ``metric``, from the module its package exports it from."""
    if metric not in _FOUND:
        where = exported().get(metric)
        if where is None:
            raise LookupError(f"OSWorld has no metric {metric!r}")
        _FOUND[metric] = getattr(_load(where[0]), where[1])
    return _FOUND[metric]


def score(request: dict[str, Any]) -> float:
    """Call the metric as OSWorld's ``evaluate`` does and return its score."""
    func = find(request["metric"])
    value = func(*request.get("args", []), **request.get("options", {}))
    return float(value)


def main() -> None:
    """Answer requests from stdin until it closes."""
    out = sys.stdout
    sys.stdout = sys.stderr  # the metrics' prints must not corrupt the protocol
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            answer: dict[str, Any] = {"ok": True, "score": score(json.loads(line))}
        except BaseException as exc:
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
