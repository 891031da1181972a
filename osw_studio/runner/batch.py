"""Batch evaluation: a suite of tasks over a pool of envs, with rollout-level scheduling.

Each worker (an :class:`~osw_studio.runner.slot.EnvSlot` in this process, or a Ray actor with
:mod:`osw_studio.runner.ray_backend`) takes the next task from one shared queue the moment its last
episode ends, so no env waits for the slowest task of a wave; an env's reset runs while the others
wait for their model, all on one event loop. A task's crash or timeout is recorded as its outcome and
its env recycled; the rest go on.

The output folder::

    runs/<run-id>/                        one run store per task run
    results/<action_space>/<observation_type>/<model>/<domain>/<task_id>/   OSWorld's layout
    summary.json                          per task: domain, score, steps, error, time; env utilisation

``summary.json`` is rewritten after every task, so a killed batch leaves what it finished. With
``resume``, tasks that already have a score are skipped; the rest (interrupted, crashed, timed out)
run again, as OSWorld's runner reruns tasks without a ``result.txt``.

Env utilisation is the time workers spent on tasks (env start or reset, steps, evaluation) over the
wall time times the number of workers.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from psygnal import Signal

from osw_studio.core.errors import OswError, StoreError
from osw_studio.core.outcome import RETRYABLE_KINDS, error_kind
from osw_studio.runner.summary import (
    RESULTS_DIR,
    RUNS_DIR,
    BatchSummary,
    Session,
    TaskOutcome,
    latest_outcomes,
    read_summary,
    scan_runs,
    write_summary,
)
from osw_studio.tasks.load import TaskEntry

log = logging.getLogger(__name__)


class Worker(Protocol):
    """What runs tasks for the batch: one env, local or remote."""

    name: str

    async def run(self, entry: TaskEntry) -> TaskOutcome:
        """Run one task; its run store ends up under the batch's ``runs/``. Never raises for the task."""
        ...

    def stop(self) -> None:
        """Stop the task in flight."""
        ...

    async def close(self) -> None:
        """Release the env."""
        ...


@dataclass(frozen=True)
class BatchProgress:
    """Where a batch is.

    Attributes:
        total: Tasks in the suite.
        done: Tasks with an outcome (skipped ones included).
        skipped: Tasks skipped because an earlier session scored them.
        running: Tasks in flight.
        successes: Tasks scored 1.0 so far.
        elapsed: Seconds since this session began.
        eta: Seconds until the end at the pace so far, or None before the first task ends.
        tokens: Tokens the suite's runs used so far.
        cost: What they cost; None when some run used tokens at an unknown price.
    """

    total: int
    done: int
    skipped: int
    running: int
    successes: int
    elapsed: float
    eta: float | None
    tokens: int = 0
    cost: float | None = 0.0


class Batch:
    """Runs a suite on a pool of workers; see the module docstring.

    Args:
        entries: The tasks, in the order they are handed out.
        out: The output folder.
        workers: The pool, one worker per env.
        info: The summary's header (suite, agent, model, provider, backend, max_steps).
        resume: Skip tasks that already have a score in ``out``.
        retry_errors: Run a task that ended in an environment or model error again, up to this many
            more times; every attempt keeps its run store, the latest counts.
        cost_budget: The most this session's runs may cost together: once reached, no task starts and
            the runs in flight end ``budget`` at their next step (scored); the rest wait for a resume.
        rerun_budget: With ``resume``, run again the tasks an earlier session's budget ended.

    Raises:
        StoreError: If ``out`` already holds runs and ``resume`` is off.
    """

    task_started = Signal(str, object)  # worker name, TaskEntry
    task_finished = Signal(object)  # TaskOutcome
    progress_changed = Signal(object)  # BatchProgress
    batch_finished = Signal(object)  # BatchSummary

    def __init__(
        self,
        entries: Sequence[TaskEntry],
        out: str | Path,
        workers: Sequence[Worker],
        *,
        info: BatchSummary | None = None,
        resume: bool = False,
        retry_errors: int = 0,
        cost_budget: float | None = None,
        rerun_budget: bool = False,
    ) -> None:
        if not workers:
            raise ValueError("a batch needs at least one worker")
        self.entries = list(entries)
        self.out = Path(out)
        self.runs_dir = self.out / RUNS_DIR
        self.workers = list(workers)
        self.summary = (info or BatchSummary()).model_copy(deep=True)
        self.summary.tasks_total = len(self.entries)
        self.resume = resume
        self.retry_errors = max(0, retry_errors)
        self.cost_budget = cost_budget
        self.rerun_budget = rerun_budget
        self.over_budget: str | None = None
        """Why the suite's cost budget stopped it, once it did."""
        self._runs_before: Counter[tuple[str, str]] = Counter()
        self._tries: Counter[tuple[str, str]] = Counter()
        self._run_here: set[str | None] = set()
        self.outcomes: dict[tuple[str, str], TaskOutcome] = {}
        self.skipped = 0
        self.running = 0
        self.busy = 0.0
        self._started = 0.0
        self._ended: float | None = None
        self._done_here = 0
        self._stopping = False
        self._export_lock = asyncio.Lock()
        self._exporter: object | None = None
        self._prior_sessions: list[Session] = []
        self._recording: set[asyncio.Future[None]] = set()

    # --- the run ------------------------------------------------------------------------------------

    def pending(self) -> list[TaskEntry]:
        """The tasks still to run: all of them, or with ``resume`` those without a score.

        Raises:
            StoreError: If ``out`` holds runs and ``resume`` is off, or a run of another model.
        """
        all_runs = scan_runs(self.runs_dir) if self.runs_dir.is_dir() else []
        self._runs_before = Counter((o.domain, o.task_id) for o in all_runs)
        earlier = latest_outcomes(all_runs)
        if earlier and not self.resume:
            raise StoreError(
                "the output folder already holds runs",
                where=str(self.out),
                hint="pass --resume to go on with them, or choose another --out",
            )
        prior = read_summary(self.out) if self.resume else None
        if prior is not None and prior.model and self.summary.model and prior.model != self.summary.model:
            raise StoreError(
                f"the output folder holds results of {prior.model!r}, not {self.summary.model!r}",
                where=str(self.out),
                hint="choose another --out to compare models (then `osw-studio eval stats A --compare B`)",
            )
        self._prior_sessions = list(prior.sessions) if prior is not None else []
        keys = {(e.domain, e.task.id) for e in self.entries}
        self.outcomes = {
            k: o
            for k, o in earlier.items()
            if k in keys and o.scored and not (self.rerun_budget and o.status == "budget")
        }
        self.skipped = len(self.outcomes)
        return [e for e in self.entries if (e.domain, e.task.id) not in self.outcomes]

    async def run(self) -> BatchSummary:
        """Run every pending task and write ``summary.json``; return the summary.

        Raises:
            StoreError: See :meth:`pending`; or if the output folder cannot be written.
        """
        todo = deque(self.pending())
        try:
            self.runs_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the output folder: {exc.strerror}", where=str(self.out)) from exc
        self._started = time.perf_counter()
        session = Session(started_at=time.time(), envs=len(self.workers))
        self.summary.sessions = [*self._prior_sessions, session]
        await self._export_missing()
        self._write_summary()
        self._emit_progress()
        try:
            await asyncio.gather(*(self._drive(worker, todo) for worker in self.workers))
            self._ended = time.perf_counter()  # the wall time ends with the last task, not the cleanup
        finally:
            await asyncio.gather(*(self._close(w) for w in self.workers), *list(self._recording))
            self._write_summary()
        self.batch_finished.emit(self.summary)
        return self.summary

    async def _drive(self, worker: Worker, todo: deque[TaskEntry]) -> None:
        """Rollout-level scheduling: take the next task as soon as the last one ended."""
        while todo and not self._stopping and self.over_budget is None:
            entry = todo.popleft()
            t0 = time.perf_counter()
            self.running += 1
            self.task_started.emit(worker.name, entry)
            self._emit_progress()
            try:
                outcome = await worker.run(entry)
            except Exception as exc:  # a worker's own failure: the task is recorded, the batch goes on
                log.error("worker %s failed on %s", worker.name, entry.task.id, exc_info=exc)
                error = str(exc) if isinstance(exc, OswError) else f"crashed: {exc!r}"
                outcome = TaskOutcome(
                    task_id=entry.task.id,
                    domain=entry.domain,
                    status="error",
                    error=error,
                    env=worker.name,
                    kind=error_kind(exc),
                )
            finally:
                self.running -= 1
                self.busy += time.perf_counter() - t0
            # The outcome counts at once; the OSWorld copy is made while the env goes on to its next task.
            key = (outcome.domain, outcome.task_id)
            self._tries[key] += 1
            self._run_here.add(outcome.run_id)
            outcome.attempts = self._runs_before[key] + self._tries[key]
            self.outcomes[key] = outcome
            if self._retry(outcome, key):
                todo.append(entry)
            self._check_budget()
            self._done_here += 1
            recording = asyncio.ensure_future(self._record(outcome))
            self._recording.add(recording)
            recording.add_done_callback(self._recording.discard)

    def _check_budget(self) -> None:
        """Once this session's runs cost the suite's budget, end the runs in flight and start no more."""
        if self.cost_budget is None or self.over_budget is not None:
            return
        spent = sum(o.cost or 0.0 for o in self.outcomes.values() if o.run_id in self._run_here)
        if spent < self.cost_budget:
            return
        self.over_budget = f"suite cost budget of {self.cost_budget:g} used up ({spent:.4g})"
        self.summary.budget_note = self.over_budget
        for worker in self.workers:
            end = getattr(worker, "end_for_budget", None)
            if end is not None:
                end(self.over_budget)

    def _retry(self, outcome: TaskOutcome, key: tuple[str, str]) -> bool:
        """Whether the task runs again: an environment or model error, with ``retry_errors`` left."""
        if self._stopping or outcome.outcome not in RETRYABLE_KINDS:
            return False
        return self._tries[key] <= self.retry_errors

    async def _record(self, outcome: TaskOutcome) -> None:
        if outcome.run_id is not None:
            await self._export(outcome.run_id)
        self._write_summary()
        self.task_finished.emit(outcome)
        self._emit_progress()

    async def _close(self, worker: Worker) -> None:
        try:
            await worker.close()
        except OswError as exc:
            log.warning("closing %s: %s", worker.name, exc)

    def stop(self) -> None:
        """Take no more tasks and stop the ones in flight (they read as ``stopped``; resume reruns them)."""
        self._stopping = True
        for worker in self.workers:
            worker.stop()

    # --- results ------------------------------------------------------------------------------------

    async def _export(self, run_id: str) -> None:
        """Add the run to OSWorld's results layout (off the loop: it copies screenshots)."""
        from osw_studio.trajectory.exporters.base import ExportOptions, ExportRun
        from osw_studio.trajectory.exporters.osworld import OsworldExporter
        from osw_studio.trajectory.store import RunStore

        async with self._export_lock:
            if self._exporter is None:
                self._exporter = OsworldExporter(self.out / RESULTS_DIR, ExportOptions())
            exporter = self._exporter
            assert isinstance(exporter, OsworldExporter)
            options = exporter.options

            def add() -> None:
                exporter.add_run(ExportRun(RunStore(self.runs_dir / run_id), options.scrubber))

            try:
                await asyncio.to_thread(add)
            except (OswError, OSError) as exc:  # the run store stays the record; only the copy failed
                log.warning("OSWorld layout for run %s not written: %s", run_id, exc)

    async def _export_missing(self) -> None:
        """Put earlier scored runs into OSWorld's layout when a kill came between their result and export."""
        results = self.out / RESULTS_DIR
        exported = {(p.parent.parent.name, p.parent.name) for p in results.rglob("result.txt")}
        for key, outcome in self.outcomes.items():
            if key not in exported and outcome.run_id is not None:
                await self._export(outcome.run_id)

    def _write_summary(self) -> None:
        session = self.summary.sessions[-1]
        wall = (self._ended or time.perf_counter()) - self._started
        session.wall_time = round(wall, 3)
        session.env_busy = round(self.busy, 3)
        session.env_utilisation = round(self.busy / (wall * session.envs), 4) if wall > 0 else 0.0
        session.tasks_run = self._done_here
        self.summary.wall_time = session.wall_time
        self.summary.env_utilisation = session.env_utilisation
        order = {(e.domain, e.task.id): i for i, e in enumerate(self.entries)}
        self.summary.tasks = sorted(self.outcomes.values(), key=lambda o: order.get((o.domain, o.task_id), 0))
        write_summary(self.out, self.summary)

    def progress(self) -> BatchProgress:
        """Where the batch is now."""
        done = len(self.outcomes)
        elapsed = time.perf_counter() - self._started if self._started else 0.0
        remaining = len(self.entries) - done
        eta = elapsed / self._done_here * remaining if self._done_here else None
        used = [o for o in self.outcomes.values() if o.usage is not None and o.usage.total_tokens]
        costs = [o.cost for o in used]
        return BatchProgress(
            total=len(self.entries),
            done=done,
            skipped=self.skipped,
            running=self.running,
            successes=sum(o.success for o in self.outcomes.values()),
            elapsed=elapsed,
            eta=eta,
            tokens=sum(o.usage.total_tokens for o in used if o.usage is not None),
            cost=None if None in costs else sum(c for c in costs if c is not None),
        )

    def _emit_progress(self) -> None:
        self.progress_changed.emit(self.progress())
