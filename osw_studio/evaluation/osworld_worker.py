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

Which OSWorld: the ``desktop-env`` package installed in the side environment, or, when the worker is
started with a folder argument, the OSWorld checkout in that folder (one holding ``desktop_env/``):
:func:`use_checkout` makes that folder's ``desktop_env`` the package loaded (only that package: the
checkout's other folders are not put on the module path).

The differential tests' reference worker loads OSWorld's modules with this file's loader
(:func:`import_bare`, :func:`stub_module`, :func:`use_checkout`), so it stays standard-library only and
does nothing on import.
"""

from __future__ import annotations

import ast
import hashlib
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


def use_checkout(folder: str) -> Path:
    """Load ``desktop_env`` from the OSWorld checkout ``folder`` instead of the installed package.

    Raises:
        FileNotFoundError: ``folder`` holds no ``desktop_env/evaluators`` package.
    """
    root = Path(folder).expanduser().resolve()
    if not (root / "desktop_env" / "evaluators" / "metrics" / "__init__.py").is_file():
        raise FileNotFoundError(f"no OSWorld checkout at {root}: it has no desktop_env/evaluators/metrics")
    for name in [m for m in sys.modules if m == "desktop_env" or m.startswith("desktop_env.")]:
        del sys.modules[name]
    package = types.ModuleType("desktop_env")
    package.__path__ = [str(root / "desktop_env")]
    sys.modules["desktop_env"] = package
    return root


def describe() -> dict[str, str]:
    """Which OSWorld is loaded.

    ``reference`` is ``package`` (the installed ``desktop-env``) or ``checkout``; ``version`` is the
    package's version, or the checkout's git commit when it has one; ``digest`` is the SHA-256 (first 16
    digits) of its ``desktop_env/evaluators`` source files, so two scorings can be told apart even where
    a checkout has no version.
    """
    root = _package_root("desktop_env")
    digest = hashlib.sha256()
    for file in sorted((root / "evaluators").rglob("*.py")):
        digest.update(file.relative_to(root).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    info = {"reference": "checkout", "version": "", "path": str(root), "digest": digest.hexdigest()[:16]}
    try:
        from importlib import metadata

        dist = metadata.distribution("desktop-env")
        if Path(str(dist.locate_file("desktop_env"))).resolve() == root.resolve():
            return {**info, "reference": "package", "version": dist.version}
    except Exception:  # no package installed: a checkout only
        pass
    head = root.parent / ".git" / "HEAD"
    if head.is_file():
        ref = head.read_text(encoding="utf-8").strip()
        target = root.parent / ".git" / ref[5:] if ref.startswith("ref: ") else None
        info["version"] = target.read_text(encoding="utf-8").strip() if target and target.is_file() else ref
    return info


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
    """Answer requests from stdin until it closes (``sys.argv[1]``, if given, is the OSWorld checkout)."""
    if len(sys.argv) > 1:
        use_checkout(sys.argv[1])
    out = sys.stdout
    sys.stdout = sys.stderr  # the metrics' prints must not corrupt the protocol
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            if request.get("op") == "describe":
                answer: dict[str, Any] = {"ok": True, "reference": describe()}
            else:
                answer = {"ok": True, "score": score(request)}
        except BaseException as exc:
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
