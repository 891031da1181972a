"""``--evaluator osworld``: score with OSWorld's own metric functions, in the side environment.

Our getters fetch the states as always (files into the task's cache folder, command outputs, rules);
then, instead of our metric, OSWorld's function of the same name scores them, called by a worker
process running the side environment's interpreter (where OSWorld's ``desktop-env`` package is
installed: ``scripts/setup-reference.sh``). The score is OSWorld's by construction; our own
evaluator stays the default, fast and light.

The interpreter is, in order: ``OSW_REFERENCE_PYTHON``, the ``evaluation.reference_python`` setting,
else ``.venv-ref/bin/python`` in the checkout OSW Studio runs from.

Which OSWorld: the ``desktop-env`` package installed there (PyPI's), or the checkout the
``evaluation.reference_osworld`` setting names (a folder holding ``desktop_env/``, such as OSWorld's
repository at the commit of the task files): the worker then loads that folder's ``desktop_env``, with
the side environment's libraries. Each result records which one scored it (:meth:`OSWorldMetrics.reference`).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any, get_args

from osw_studio.core.errors import EvaluationError
from osw_studio.settings.model import EvaluatorKind

EVALUATORS: tuple[str, ...] = get_args(EvaluatorKind)
"""Who may score: our metrics (the default) or OSWorld's own, in the side environment."""

WORKER = Path(__file__).resolve().with_name("osworld_worker.py")
CHECKOUT = Path(__file__).resolve().parents[2]


def reference_python(configured: str | None = None) -> Path:
    """The side environment's interpreter (see the module docstring for the order)."""
    chosen = os.environ.get("OSW_REFERENCE_PYTHON") or configured
    return Path(chosen).expanduser() if chosen else CHECKOUT / ".venv-ref" / "bin" / "python"


class OSWorldMetrics:
    """A worker process that scores with OSWorld's metric functions; requests are answered in order.

    Args:
        python: The side environment's interpreter.
        checkout: An OSWorld checkout whose ``desktop_env`` scores (None: the installed package).

    Raises:
        EvaluationError: The interpreter does not exist, or the checkout holds no ``desktop_env``.
    """

    def __init__(self, python: Path, checkout: Path | None = None) -> None:
        if not python.is_file():
            raise EvaluationError(
                f"the OSWorld side environment is missing: no interpreter at {python}",
                hint="run scripts/setup-reference.sh (make setup does), or point OSW_REFERENCE_PYTHON or "
                "the evaluation.reference_python setting at the environment's python",
            )
        if checkout is not None and not (checkout / "desktop_env" / "evaluators" / "metrics").is_dir():
            raise EvaluationError(
                f"no OSWorld checkout at {checkout}: it has no desktop_env/evaluators/metrics folder",
                where="evaluation.reference_osworld",
                hint="name the folder that holds OSWorld's desktop_env/ (the repository's top folder)",
            )
        self.python = python
        self.checkout = checkout
        self._reference: dict[str, str] | None = None
        self._proc: subprocess.Popen[str] | None = None
        self._scratch: str | None = None
        self._lock = threading.Lock()

    def _start(self) -> subprocess.Popen[str]:
        if self._proc is None or self._proc.poll() is not None:
            # Some of OSWorld's metrics write scratch files (``temp.pdf``) into the working directory:
            # give the worker a private one, never the user's.
            if self._scratch is None:
                self._scratch = tempfile.mkdtemp(prefix="osw-osworld-metrics-")
            self._proc = subprocess.Popen(
                [str(self.python), str(WORKER), *([str(self.checkout)] if self.checkout else [])],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                bufsize=1,
                cwd=self._scratch,
                env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            )
        return self._proc

    def score_sync(self, metric: str, args: list[Any], options: dict[str, Any]) -> float:
        """OSWorld's score of ``metric(*args, **options)``.

        Raises:
            EvaluationError: OSWorld's function raised (no score is invented), or the worker died.
        """
        request = json.dumps({"metric": metric, "args": args, "options": options}, default=str)
        answer = self._ask(request, f"scoring {metric!r}")
        if not answer["ok"]:
            raise EvaluationError(
                f"OSWorld's metric {metric!r} raised: {str(answer['error'])[:300]}",
                hint="OSWorld gives no score here either; `--evaluator osw-studio` explains the case",
            )
        return float(answer["score"])

    def reference_sync(self) -> dict[str, str]:
        """Which OSWorld scores: ``reference`` (``package``/``checkout``), ``version``, ``path``, ``digest``.

        Raises:
            EvaluationError: The worker cannot load OSWorld's package, or died.
        """
        if self._reference is None:
            answer = self._ask(json.dumps({"op": "describe"}), "naming its OSWorld")
            if not answer["ok"]:
                raise EvaluationError(
                    f"the OSWorld evaluator cannot load OSWorld: {str(answer['error'])[:300]}"
                )
            self._reference = {"evaluator": "osworld", **{k: str(v) for k, v in answer["reference"].items()}}
        return dict(self._reference)

    async def reference(self) -> dict[str, str]:
        """:meth:`reference_sync` off the event loop."""
        return await asyncio.to_thread(self.reference_sync)

    def _ask(self, request: str, doing: str) -> dict[str, Any]:
        with self._lock:
            proc = self._start()
            assert proc.stdin is not None and proc.stdout is not None
            try:
                proc.stdin.write(request + "\n")
                proc.stdin.flush()
                line = proc.stdout.readline()
            except OSError:
                line = ""
            if not line:
                code = proc.wait()
                self._proc = None
                raise EvaluationError(
                    f"the OSWorld evaluator stopped (exit {code}) while {doing}",
                    where=str(self.python),
                    hint="check the side environment (scripts/setup-reference.sh) and "
                    "evaluation.reference_osworld",
                )
        answer: dict[str, Any] = json.loads(line)
        return answer

    async def score(self, metric: str, args: list[Any], options: dict[str, Any]) -> float:
        """:meth:`score_sync` off the event loop."""
        return await asyncio.to_thread(self.score_sync, metric, args, options)

    def close(self) -> None:
        """Stop the worker (it is started again on the next score)."""
        with self._lock:
            proc, self._proc = self._proc, None
            scratch, self._scratch = self._scratch, None
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        if proc is None:
            return
        if proc.stdin:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()


_SHARED: dict[tuple[Path, Path | None], OSWorldMetrics] = {}


def shared_metrics(configured: str | None = None, checkout: str | None = None) -> OSWorldMetrics:
    """One worker per interpreter and OSWorld checkout for the whole process, stopped at exit."""
    key = (reference_python(configured), Path(checkout).expanduser().resolve() if checkout else None)
    if key not in _SHARED:
        _SHARED[key] = OSWorldMetrics(*key)
        atexit.register(_SHARED[key].close)
    return _SHARED[key]
