"""``--evaluator osworld``: score with OSWorld's own metric functions, in the side environment.

Our getters fetch the states as always (files into the task's cache folder, command outputs, rules);
then, instead of our metric, OSWorld's function of the same name scores them, called by a worker
process running the side environment's interpreter (where OSWorld's ``desktop-env`` package is
installed: ``scripts/setup-reference.sh``). The score is OSWorld's by construction; our own
evaluator stays the default, fast and light.

The interpreter is, in order: ``OSW_REFERENCE_PYTHON``, the ``evaluation.reference_python`` setting,
else ``.venv-ref/bin/python`` in the checkout OSW Studio runs from.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import threading
from pathlib import Path
from typing import Any, get_args

from osw_studio.core.errors import EvaluationError
from osw_studio.evaluation.confine import Confined, scored_files
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

    Raises:
        EvaluationError: The interpreter does not exist.
    """

    def __init__(self, python: Path) -> None:
        if not python.is_file():
            raise EvaluationError(
                f"the OSWorld side environment is missing: no interpreter at {python}",
                hint="run scripts/setup-reference.sh (make setup does), or point OSW_REFERENCE_PYTHON or "
                "the evaluation.reference_python setting at the environment's python",
            )
        self.python = python
        self._lock = threading.Lock()

    def score_sync(
        self, metric: str, args: list[Any], options: dict[str, Any], *, files: Path | None = None
    ) -> float:
        """OSWorld's score of ``metric(*args, **options)``, computed by a confined worker.

        Each request gets a fresh worker inside bubblewrap (:mod:`osw_studio.evaluation.confine`): no
        network, no host socket, a throwaway HOME, bounded time, memory and output, and a read-only
        view of the reference's code and of the files the request names inside ``files`` (the task's
        cache folder).

        Raises:
            EvaluationError: OSWorld's function raised (no score is invented), the worker died, took
                too long or printed too much, or bubblewrap is missing.
        """
        request = {"metric": metric, "args": args, "options": options}
        readable = scored_files(request, files)
        with self._lock:
            line = Confined(self.python, WORKER).ask(request, readable)
        try:
            answer = json.loads(line)
            ok, value = bool(answer["ok"]), answer.get("score")
            score = float(value) if ok else 0.0
        except (ValueError, KeyError, TypeError) as exc:
            raise EvaluationError(
                f"the OSWorld evaluator gave an answer that is not a score while scoring {metric!r}",
                where=str(self.python),
            ) from exc
        if not ok:
            raise EvaluationError(
                f"OSWorld's metric {metric!r} raised: {str(answer.get('error'))[:300]}",
                hint="OSWorld gives no score here either; `--evaluator osw-studio` explains the case",
            )
        return score

    async def score(
        self, metric: str, args: list[Any], options: dict[str, Any], *, files: Path | None = None
    ) -> float:
        """:meth:`score_sync` off the event loop."""
        return await asyncio.to_thread(self.score_sync, metric, args, options, files=files)

    def close(self) -> None:
        """Nothing to stop: each score has its own worker, gone when it answered."""


_SHARED: dict[Path, OSWorldMetrics] = {}


def shared_metrics(configured: str | None = None) -> OSWorldMetrics:
    """One worker per interpreter for the whole process, stopped at exit."""
    python = reference_python(configured)
    if python not in _SHARED:
        _SHARED[python] = OSWorldMetrics(python)
        atexit.register(_SHARED[python].close)
    return _SHARED[python]
