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
        self._lock = threading.Lock()

    def _confined(self) -> Confined:
        """The sandboxed worker: the checkout, when there is one, is shown read-only and named to it."""
        if self.checkout is None:
            return Confined(self.python, WORKER)
        return Confined(self.python, WORKER, code=(str(self.checkout),), args=(str(self.checkout),))

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
        answer = self._ask(request, scored_files(request, files), f"scoring {metric!r}")
        if not answer.get("ok"):
            raise EvaluationError(
                f"OSWorld's metric {metric!r} raised: {str(answer.get('error'))[:300]}",
                hint="OSWorld gives no score here either; `--evaluator osw-studio` explains the case",
            )
        try:
            return float(answer["score"])
        except (KeyError, TypeError, ValueError) as exc:
            raise EvaluationError(
                f"the OSWorld evaluator gave an answer that is not a score while scoring {metric!r}",
                where=str(self.python),
            ) from exc

    def reference_sync(self) -> dict[str, str]:
        """Which OSWorld scores: ``reference`` (``package``/``checkout``), ``version``, ``path``, ``digest``.

        Raises:
            EvaluationError: The worker cannot load OSWorld's package, or died.
        """
        if self._reference is None:
            answer = self._ask({"op": "describe"}, [], "naming its OSWorld")
            described = answer.get("reference")
            if not answer.get("ok") or not isinstance(described, dict):
                raise EvaluationError(
                    f"the OSWorld evaluator cannot load OSWorld: {str(answer.get('error'))[:300]}"
                )
            self._reference = {"evaluator": "osworld", **{k: str(v) for k, v in described.items()}}
        return dict(self._reference)

    async def reference(self) -> dict[str, str]:
        """:meth:`reference_sync` off the event loop."""
        return await asyncio.to_thread(self.reference_sync)

    def _ask(self, request: dict[str, Any], readable: list[str], doing: str) -> dict[str, Any]:
        with self._lock:
            line = self._confined().ask(request, readable)
        try:
            answer = json.loads(line)
        except ValueError as exc:
            raise EvaluationError(
                f"the OSWorld evaluator gave an answer that is not JSON while {doing}", where=str(self.python)
            ) from exc
        if not isinstance(answer, dict):
            raise EvaluationError(
                f"the OSWorld evaluator gave an answer that is not an object while {doing}",
                where=str(self.python),
            )
        return answer

    async def score(
        self, metric: str, args: list[Any], options: dict[str, Any], *, files: Path | None = None
    ) -> float:
        """:meth:`score_sync` off the event loop."""
        return await asyncio.to_thread(self.score_sync, metric, args, options, files=files)

    def close(self) -> None:
        """Nothing to stop: each score has its own worker, gone when it answered."""


_SHARED: dict[tuple[Path, Path | None], OSWorldMetrics] = {}


def shared_metrics(configured: str | None = None, checkout: str | None = None) -> OSWorldMetrics:
    """One worker per interpreter and OSWorld checkout for the whole process, stopped at exit."""
    key = (reference_python(configured), Path(checkout).expanduser().resolve() if checkout else None)
    if key not in _SHARED:
        _SHARED[key] = OSWorldMetrics(*key)
        atexit.register(_SHARED[key].close)
    return _SHARED[key]
