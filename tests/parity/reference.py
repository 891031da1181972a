"""The host side of the reference worker (tests/parity/refworker.py) in the side environment.

The judge is OSWorld's code at the tasks' commit (``../shared/osworld/upstream``, its ``desktop_env``
loaded by the worker; nothing copied). ``OSW_REFERENCE_OSWORLD`` names another checkout, or is
``package`` to judge with the ``desktop-env`` package of the side environment (1.0.2), the second judge:
where that one differs from upstream, :data:`tests.parity.deviations.PACKAGE_DIFFERENCES` lists why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).resolve().with_name("refworker.py")
UPSTREAM = ROOT.parent / "shared" / "osworld" / "upstream"
"""OSWorld at the commit of the task files: the default judge."""
PACKAGE = "package"


def reference_python() -> Path:
    """The side environment's interpreter (OSW_REFERENCE_PYTHON, else .venv-ref in the checkout)."""
    configured = os.environ.get("OSW_REFERENCE_PYTHON")
    return Path(configured) if configured else ROOT / ".venv-ref" / "bin" / "python"


def reference_osworld() -> Path | None:
    """The OSWorld checkout that judges (None: the side environment's installed package)."""
    configured = os.environ.get("OSW_REFERENCE_OSWORLD")
    if configured == PACKAGE:
        return None
    return Path(configured) if configured else UPSTREAM


def judge() -> str:
    """``upstream`` or ``package``: which reference the running tests compare with."""
    return PACKAGE if reference_osworld() is None else "upstream"


class ReferenceError(AssertionError):
    """OSWorld's code raised; ``error`` is its ``Type: message`` line."""

    def __init__(self, error: str, trace: str) -> None:
        super().__init__(f"{error}\n{trace}")
        self.error = error


class Reference:
    """One long-lived worker process running OSWorld's code; requests are answered in order."""

    def __init__(self, python: Path, checkout: Path | None = None) -> None:
        self.checkout = checkout
        # OSWorld's code may write scratch files (temp.pdf) into its working directory: not the checkout.
        self._scratch = tempfile.mkdtemp(prefix="osw-reference-")
        self._proc = subprocess.Popen(
            [str(python), str(WORKER), *([str(checkout)] if checkout else [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
            cwd=self._scratch,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )

    def _ask(self, request: dict[str, Any]) -> Any:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the reference worker died (exit {self._proc.wait()})")
        answer = json.loads(line)
        if not answer["ok"]:
            raise ReferenceError(answer["error"], answer["traceback"])
        return answer["value"]

    def call(self, module: str, attr: str, *args: Any, **kwargs: Any) -> Any:
        """Call ``module.attr(*args, **kwargs)`` in the reference and return its value (JSON)."""
        return self._ask({"op": "call", "module": module, "attr": attr, "args": list(args), "kwargs": kwargs})

    def exec(self, code: str, modules: tuple[str, ...] = ()) -> Any:
        """Run ``code`` there (modules bound to ``m0``, ``m1`` ...) and return its ``result``."""
        return self._ask({"op": "exec", "code": code, "modules": list(modules)})

    def describe(self) -> dict[str, str]:
        """Which OSWorld the worker loaded (reference, version, path, digest)."""
        return self._ask({"op": "describe"})  # type: ignore[no-any-return]

    def stub(self, *names: str) -> None:
        """Stand in for heavy optional imports the compared code never calls."""
        self._ask({"op": "stub", "names": list(names)})

    def close(self) -> None:
        """Stop the worker."""
        if self._proc.stdin:
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout:
            self._proc.stdout.close()
        shutil.rmtree(self._scratch, ignore_errors=True)


def start_reference() -> Reference:
    """Start a worker, or fail (under CI) / skip (elsewhere) when the side environment is missing."""
    python = reference_python()
    checkout = reference_osworld()
    message = None
    if not python.is_file():
        message = f"the reference side environment is missing ({python}); run scripts/setup-reference.sh"
    elif checkout is not None and not (checkout / "desktop_env" / "evaluators").is_dir():
        message = f"the OSWorld checkout that judges is missing ({checkout}); see OSW_REFERENCE_OSWORLD"
    if message:
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return Reference(python, checkout)
