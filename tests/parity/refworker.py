"""The reference worker: runs inside the side environment (.venv-ref) and calls OSWorld's own code.

It speaks JSON lines on stdin/stdout, one request a line:

- ``{"op": "call", "module": "desktop_env.evaluators.metrics.table", "attr": "compare_table",
  "args": [...], "kwargs": {...}}`` calls a function and answers its value;
- ``{"op": "exec", "code": "...", "modules": [...]}`` runs a snippet (with the named modules imported
  as ``m0``, ``m1`` ...) and answers the value it leaves in ``result``;
- ``{"op": "stub", "names": ["dashscope", ...]}`` puts empty stand-ins in ``sys.modules`` for heavy
  optional imports that the compared code never calls.

Answers are ``{"ok": true, "value": ...}`` or ``{"ok": false, "error": "Type: message", "traceback": ...}``.
Packages are loaded without running their ``__init__`` files (OSWorld's import heavy optional
libraries), so only the compared modules and what they import need to be installed: with the loader of
``--evaluator osworld``'s worker (``osw_studio/evaluation/osworld_worker.py``, standard library only, read
from its file since this environment does not have OSW Studio installed).

Which OSWorld: with a folder argument, that checkout's ``desktop_env`` (the upstream code at the tasks'
commit, by default); without one, the ``desktop-env`` package installed here (see ``reference.py``).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
import traceback
import types
from pathlib import Path
from typing import Any

LOADER = Path(__file__).resolve().parents[2] / "osw_studio" / "evaluation" / "osworld_worker.py"


def _loader() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("osworld_worker", LOADER)
    assert spec is not None and spec.loader is not None, LOADER
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_LOADER = _loader()


def stub(names: list[str]) -> None:
    """Register stand-ins for ``names`` (and their parents) in ``sys.modules``."""
    for name in names:
        _LOADER.stub_module(name)


def load(name: str) -> types.ModuleType:
    """Import ``name`` with every parent package created bare (its ``__init__`` not run)."""
    return _LOADER.import_bare(name)  # type: ignore[no-any-return]


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        if isinstance(value, dict):
            return {str(k): _jsonable(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [_jsonable(v) for v in value]
        if hasattr(value, "item"):  # numpy scalars
            return value.item()
        return repr(value)


def handle(request: dict[str, Any]) -> Any:
    op = request.get("op", "call")
    if op == "stub":
        stub(request["names"])
        return None
    if op == "describe":
        return _LOADER.describe()
    if op == "call":
        module = load(request["module"])
        return getattr(module, request["attr"])(*request.get("args", []), **request.get("kwargs", {}))
    if op == "exec":
        namespace: dict[str, Any] = {"load": load, "stub": stub}
        for i, mod in enumerate(request.get("modules", [])):
            namespace[f"m{i}"] = load(mod)
        exec(request["code"], namespace)
        return namespace.get("result")
    raise ValueError(f"unknown op {op!r}")


def main() -> None:
    if len(sys.argv) > 1:
        _LOADER.use_checkout(sys.argv[1])
    out = sys.stdout
    sys.stdout = sys.stderr  # the compared code's prints must not corrupt the protocol
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            answer = {"ok": True, "value": _jsonable(handle(json.loads(line)))}
        except BaseException as exc:
            answer = {
                "ok": False,
                "error": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(),
            }
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
