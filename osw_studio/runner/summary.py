"""A batch's results: ``summary.json``, per-domain statistics and OSWorld's domain groups.

``summary.json`` sits at the top of a batch's output folder. It holds one :class:`TaskOutcome` per task
(the latest run of each task wins, as a rerun does in OSWorld) and, per invocation of the batch
(``--resume`` adds one), the wall time and how busy the envs were.

Statistics follow OSWorld's ``show_result.py``: a domain's rate is the sum of its scores over the number
of tasks (scores can be fractional), and its Office, Daily and Professional groups pool their domains'
scores. Unlike ``show_result.py``, a task that ended in error counts as a 0 here, so a crash never
raises a rate; an interrupted task (no result at all) is not counted, as OSWorld does not count it.

Results can be read from three places, tried in this order: ``summary.json``, run stores (``runs/``
folders) and OSWorld's own results layout (``<domain>/<task_id>/result.txt``), so runs made by
OSWorld's scripts compare with ours.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from osw_studio.core.errors import StoreError
from osw_studio.core.outcome import OutcomeKind, outcome_kind
from osw_studio.core.paths import name_problem
from osw_studio.core.step import Usage
from osw_studio.runner.significance import wilson
from osw_studio.trajectory.store import RunStore, is_run_folder, iter_runs

SUMMARY_JSON = "summary.json"
RUNS_DIR = "runs"
RESULTS_DIR = "results"

GROUPS: dict[str, tuple[str, ...]] = {
    "Office": ("libreoffice_calc", "libreoffice_impress", "libreoffice_writer"),
    "Daily": ("vlc", "thunderbird", "chrome"),
    "Professional": ("gimp", "vs_code"),
}
"""OSWorld's domain groups, as its ``show_result.py`` reports them."""


class TaskOutcome(BaseModel):
    """How one task of a batch ended.

    Attributes:
        task_id: The task's id.
        domain: The task's domain.
        score: The evaluator's score, or None when the task ended before it was scored.
        success: Whether the score reached 1.0.
        steps: Steps taken.
        status: ``finished``, ``failed``, ``stopped``, ``error`` (a crash or a timeout too) or
            ``interrupted``.
        error: What went wrong, when something did.
        time: Seconds the task held its env (reset, steps and evaluation).
        run_id: The run store's folder name under ``runs/``, when there is one.
        env: Which env ran it (``env-1`` ...).
        finished_at: When it ended (epoch seconds).
        assisted: Whether a person helped (edits, a takeover, a person's own steps).
        kind: Why it ended (:class:`~osw_studio.core.outcome.OutcomeKind`); read from the status and
            score for outcomes written before kinds (see :attr:`outcome`).
        attempts: Runs of the task in this folder, this one included (``--retry-errors`` adds some).
        usage: The run's tokens, when its model reported them.
        cost: What the run's model calls cost, when the model's price is known.
    """

    task_id: str
    domain: str
    score: float | None = None
    success: bool = False
    steps: int = 0
    status: str = "finished"
    error: str | None = None
    time: float = 0.0
    run_id: str | None = None
    env: str | None = None
    finished_at: float | None = None
    assisted: bool = False
    kind: OutcomeKind | None = None
    attempts: int = 1
    usage: Usage | None = None
    cost: float | None = None

    @property
    def outcome(self) -> OutcomeKind:
        """Why the task ended: its recorded kind, else the one its status and score say."""
        if self.kind is not None:
            return self.kind
        return outcome_kind(self.status, self.score, error=self.error)

    @property
    def scored(self) -> bool:
        """Whether the task has a score (so ``--resume`` does not run it again)."""
        return self.score is not None and self.status in ("finished", "failed", "budget", "stuck")

    @property
    def counted(self) -> bool:
        """Whether the task counts in the statistics (everything but an interrupted run)."""
        return self.status != "interrupted"


class Session(BaseModel):
    """One invocation of a batch (a ``--resume`` adds another).

    Attributes:
        started_at: When it began (epoch seconds).
        wall_time: Seconds from start to the last result.
        envs: Envs in the pool.
        env_busy: Seconds the envs spent on tasks, summed over envs.
        env_utilisation: ``env_busy / (wall_time * envs)``.
        tasks_run: Tasks run in this session.
    """

    started_at: float
    wall_time: float = 0.0
    envs: int = 1
    env_busy: float = 0.0
    env_utilisation: float = 0.0
    tasks_run: int = 0


class BatchSummary(BaseModel):
    """What ``summary.json`` holds.

    Attributes:
        suite: The suite that was run (an index file or a folder).
        agent: The agent kind.
        model: The model that acted.
        provider: Where the envs came from.
        backend: ``local`` (envs in this process) or ``ray``.
        max_steps: Most steps per task.
        tasks_total: Tasks in the suite (after ``--domain``).
        env_utilisation: Of the latest session.
        wall_time: Of the latest session.
        sessions: Every session, oldest first.
        tasks: One outcome per task, in suite order.
    """

    suite: str = ""
    agent: str | None = None
    model: str | None = None
    provider: str | None = None
    backend: str = "local"
    max_steps: int | None = None
    tasks_total: int = 0
    env_utilisation: float = 0.0
    wall_time: float = 0.0
    sessions: list[Session] = Field(default_factory=list)
    tasks: list[TaskOutcome] = Field(default_factory=list)
    budget_note: str | None = None
    """Why the suite's cost budget stopped the latest session, when it did."""


class DomainStats(BaseModel):
    """One row of the statistics table.

    Attributes:
        name: The domain (or group, or ``total``).
        tasks: Tasks counted.
        successes: Tasks the agent solved by itself (scored 1.0 without a person's help).
        score: The sum of the scores of runs without a person's help (errors count 0).
        errors: Tasks that ended in error.
        assisted: Tasks solved with a person's help (edits, takeovers), counted apart.
        kinds: Tasks per outcome kind (``solved``, ``env_error``, ...).
        valid: Tasks whose kind the agent decided (:data:`~osw_studio.core.outcome.VALID_KINDS`).
        valid_score: The sum of those tasks' scores (without a person's help).
        usage: The tokens of the counted runs, summed.
        cost: What the counted runs with a known price cost.
        unpriced: Counted runs that used tokens at an unknown price (their cost is not in ``cost``).
    """

    name: str
    tasks: int = 0
    successes: int = 0
    score: float = 0.0
    errors: int = 0
    assisted: int = 0
    kinds: dict[str, int] = Field(default_factory=dict)
    valid: int = 0
    valid_score: float = 0.0
    usage: Usage = Field(default_factory=Usage)
    cost: float = 0.0
    unpriced: int = 0

    def merge(self, other: DomainStats) -> None:
        """Add ``other``'s counts to this row (a group pools its domains)."""
        self.tasks += other.tasks
        self.successes += other.successes
        self.score += other.score
        self.errors += other.errors
        self.assisted += other.assisted
        for kind, n in other.kinds.items():
            self.kinds[kind] = self.kinds.get(kind, 0) + n
        self.valid += other.valid
        self.valid_score += other.valid_score
        self.usage = self.usage + other.usage
        self.cost += other.cost
        self.unpriced += other.unpriced

    @property
    def interval(self) -> tuple[float, float]:
        """The 95% Wilson interval of :attr:`rate`, in percent.

        >>> [round(x, 2) for x in DomainStats(name="os", tasks=10, score=8.0).interval]
        [49.02, 94.33]
        """
        low, high = wilson(self.score, self.tasks)
        return (100.0 * low, 100.0 * high)

    @property
    def valid_interval(self) -> tuple[float, float]:
        """The 95% Wilson interval of :attr:`valid_rate`, in percent."""
        low, high = wilson(self.valid_score, self.valid)
        return (100.0 * low, 100.0 * high)

    @property
    def valid_rate(self) -> float:
        """The success rate in percent over valid runs only (harness errors and stops left out).

        >>> DomainStats(name="os", tasks=4, score=1.0, valid=2, valid_score=1.0).valid_rate
        50.0
        """
        return 100.0 * self.valid_score / self.valid if self.valid else 0.0

    @property
    def rate(self) -> float:
        """The success rate in percent, OSWorld's way (sum of scores over tasks).

        >>> DomainStats(name="os", tasks=4, score=1.5).rate
        37.5
        """
        return 100.0 * self.score / self.tasks if self.tasks else 0.0


class Stats(BaseModel):
    """Statistics of one results folder.

    Attributes:
        label: What the results are (the model, or the folder's name).
        domains: One row per domain, sorted by name.
        groups: OSWorld's Office, Daily and Professional rows (only groups with tasks).
        total: All tasks.
    """

    label: str
    domains: list[DomainStats]
    groups: list[DomainStats]
    total: DomainStats

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict with each row's rate."""

        def row(stats: DomainStats) -> dict[str, Any]:
            # runs with a person's help only come from the app: a batch's rows stay as they were
            data = stats.model_dump(exclude=set() if stats.assisted else {"assisted"})
            return {
                **data,
                "score": round(stats.score, 4),
                "rate": round(stats.rate, 2),
                "valid_score": round(stats.valid_score, 4),
                "valid_rate": round(stats.valid_rate, 2),
                "interval": [round(x, 2) for x in stats.interval],
                "valid_interval": [round(x, 2) for x in stats.valid_interval],
                "cost": round(stats.cost, 6),
            }

        return {
            "label": self.label,
            "domains": [row(s) for s in self.domains],
            "groups": [row(s) for s in self.groups],
            "total": row(self.total),
        }


def _add(stats: DomainStats, outcome: TaskOutcome) -> None:
    stats.tasks += 1
    stats.errors += int(outcome.status == "error")
    kind = outcome.outcome
    stats.kinds[kind.value] = stats.kinds.get(kind.value, 0) + 1
    if outcome.usage is not None:
        stats.usage = stats.usage + outcome.usage
    if outcome.cost is not None:
        stats.cost += outcome.cost
    elif outcome.usage is not None and outcome.usage.total_tokens:
        stats.unpriced += 1
    if outcome.assisted:  # a person's help is not the agent's success
        stats.assisted += int(outcome.success)
        return
    stats.successes += int(outcome.success)
    stats.score += outcome.score or 0.0
    if kind.valid:
        stats.valid += 1
        stats.valid_score += outcome.score or 0.0


def compute_stats(outcomes: Iterable[TaskOutcome], label: str = "") -> Stats:
    """Per-domain, per-group and total statistics; interrupted tasks are left out.

    >>> rows = [TaskOutcome(task_id="a", domain="gimp", score=1.0, success=True),
    ...         TaskOutcome(task_id="b", domain="vs_code", score=0.0, status="failed"),
    ...         TaskOutcome(task_id="c", domain="os", status="error", error="boom")]
    >>> stats = compute_stats(rows)
    >>> [(s.name, s.tasks, s.successes, s.rate) for s in stats.domains]
    [('gimp', 1, 1, 100.0), ('os', 1, 0, 0.0), ('vs_code', 1, 0, 0.0)]
    >>> [(g.name, g.tasks, g.rate) for g in stats.groups], stats.total.errors
    ([('Professional', 2, 50.0)], 1)
    """
    domains: dict[str, DomainStats] = {}
    total = DomainStats(name="total")
    for outcome in outcomes:
        if not outcome.counted:
            continue
        _add(domains.setdefault(outcome.domain, DomainStats(name=outcome.domain)), outcome)
        _add(total, outcome)
    groups = []
    for name, members in GROUPS.items():
        group = DomainStats(name=name)
        for member in members:
            if member in domains:
                group.merge(domains[member])
        if group.tasks:
            groups.append(group)
    return Stats(label=label, domains=[domains[k] for k in sorted(domains)], groups=groups, total=total)


def format_stats(stats: Sequence[Stats]) -> str:
    """The statistics of one or more results folders as a text table, side by side.

    >>> one = compute_stats([TaskOutcome(task_id="a", domain="os", score=1.0, success=True)], "m1")
    >>> two = compute_stats([TaskOutcome(task_id="a", domain="os", score=0.0, status="failed")], "m2")
    >>> print(format_stats([one, two]))
                                           m1                   m2
    domain                tasks  succ    rate  tasks  succ    rate
    os                        1     1  100.0%      1     0    0.0%
    --------------------------------------------------------------
    total                     1     1  100.0%      1     0    0.0%
    """
    names = sorted({row.name for s in stats for row in s.domains})
    groups = [g for g in GROUPS if any(row.name == g for s in stats for row in s.groups)]
    cell = 21  # tasks (7), successes (6), rate (8)
    lines = [
        f"{'':<20}" + "".join(f"{s.label[-(cell - 2) :]:>{cell}}" for s in stats),
        f"{'domain':<20}" + f"{'tasks':>7}{'succ':>6}{'rate':>8}" * len(stats),
    ]
    rule = "-" * (20 + cell * len(stats))

    def line(name: str, rows: Sequence[DomainStats | None]) -> str:
        cells = "".join(
            f"{'-':>7}{'':>14}" if r is None else f"{r.tasks:>7}{r.successes:>6}{r.rate:>7.1f}%" for r in rows
        )
        return f"{name[:19]:<20}{cells}"

    def find(rows: Sequence[DomainStats], name: str) -> DomainStats | None:
        return next((r for r in rows if r.name == name), None)

    lines += [line(name, [find(s.domains, name) for s in stats]) for name in names]
    if groups:
        lines.append(rule)
        lines += [line(name, [find(s.groups, name) for s in stats]) for name in groups]
    lines += [rule, line("total", [s.total for s in stats])]
    return "\n".join(lines)


# --- reading results -------------------------------------------------------------------------------


def read_summary(path: Path) -> BatchSummary | None:
    """The ``summary.json`` in folder ``path``, or None when there is none.

    Raises:
        StoreError: If it exists but cannot be read.
    """
    file = path / SUMMARY_JSON
    if not file.is_file():
        return None
    try:
        return BatchSummary.model_validate_json(file.read_bytes())
    except (OSError, ValidationError) as exc:
        raise StoreError(f"unreadable summary: {exc}", where=str(file), hint="run the batch again") from exc


def outcome_of(run: RunStore) -> TaskOutcome:
    """A run store as a task outcome (``interrupted`` when it has no result)."""
    meta, result = run.meta, run.result
    if result is None:
        return TaskOutcome(
            task_id=meta.task_id, domain=meta.domain or "unknown", status="interrupted", run_id=run.run_id
        )
    started = getattr(result, "started_at", None) or meta.started_at
    finished = getattr(result, "finished_at", None) or meta.finished_at
    return TaskOutcome(
        task_id=result.task_id,
        domain=result.domain or meta.domain or "unknown",
        score=result.score,
        success=result.success,
        steps=result.steps,
        status=result.status,
        error=result.error,
        time=max(0.0, (finished or started) - started),
        run_id=run.run_id,
        finished_at=finished,
        assisted=result.assisted,
        kind=getattr(result, "kind", None),
        usage=getattr(result, "usage", None),
        cost=getattr(result, "cost", None),
    )


def latest_outcomes(runs: Iterable[TaskOutcome]) -> dict[tuple[str, str], TaskOutcome]:
    """The outcome per ``(domain, task_id)`` that counts: a result, then a score, then the latest run.

    A later stopped run does not hide an earlier pass.

    >>> a = TaskOutcome(task_id="t", domain="os", score=1.0, run_id="2", status="finished")
    >>> b = TaskOutcome(task_id="t", domain="os", status="interrupted", run_id="3")
    >>> c = TaskOutcome(task_id="t", domain="os", status="stopped", run_id="4")
    >>> latest_outcomes([a, b, c])[("os", "t")].run_id
    '2'
    """
    best: dict[tuple[str, str], TaskOutcome] = {}
    for outcome in runs:
        key = (outcome.domain, outcome.task_id)
        old = best.get(key)
        rank = (outcome.counted, outcome.scored, outcome.run_id or "")
        if old is None or rank > (old.counted, old.scored, old.run_id or ""):
            best[key] = outcome
    return best


def scan_runs(path: Path) -> list[TaskOutcome]:
    """The outcomes of every run store under ``path`` (unreadable runs are skipped)."""
    outcomes = []
    try:
        stores = list(iter_runs([path]))
    except StoreError:
        return []
    for store in stores:
        try:
            outcomes.append(outcome_of(store))
        except StoreError:
            continue
    return outcomes


def scan_osworld(path: Path) -> list[TaskOutcome]:
    """Outcomes from OSWorld's results layout: every ``<domain>/<task_id>/result.txt`` under ``path``."""
    outcomes = []
    for result in sorted(path.rglob("result.txt")):
        task_dir = result.parent
        try:
            text = result.read_text(encoding="utf-8").strip()
        except OSError:
            continue
        try:
            score = float(text)
        except ValueError:
            score = 0.0  # as show_result.py counts an unreadable result
        outcomes.append(
            TaskOutcome(
                task_id=task_dir.name,
                domain=task_dir.parent.name,
                score=score,
                success=score >= 1.0,
                status="finished" if score >= 1.0 else "failed",
            )
        )
    return outcomes


def load_outcomes(path: str | Path) -> tuple[str, list[TaskOutcome]]:
    """The outcomes in a results folder and a label for it (the model, else the folder's name).

    Raises:
        StoreError: If ``path`` is not a folder or holds no results.
    """
    folder = Path(path)
    if not folder.is_dir():
        raise StoreError("not a results folder", where=str(folder), hint="pass the --out folder of a batch")
    summary = read_summary(folder)
    if summary is not None:
        return summary.model or folder.name, summary.tasks
    runs = scan_runs(folder)
    if runs:
        chosen = list(latest_outcomes(runs).values())
        models = {_model_of(folder, o) for o in chosen[:1]}
        return (models.pop() or folder.name) if models else folder.name, chosen
    osworld = scan_osworld(folder)
    if osworld:
        return folder.name, osworld
    raise StoreError(
        "no results found (no summary.json, run stores or result.txt files)",
        where=str(folder),
        hint="pass the --out folder of `osw-studio eval run` or an OSWorld results folder",
    )


def run_folder(folder: Path, run_id: str | None) -> Path | None:
    """The run store of ``run_id`` in a results folder (``runs/<run id>`` or ``<run id>``), when it exists.

    ``run_id`` comes from ``summary.json``, which may have been edited: it must be a plain name
    (:mod:`osw_studio.core.paths`), so it never leads out of ``folder``.

    >>> run_folder(Path("."), "../../elsewhere") is None
    True
    """
    if run_id is None or name_problem(run_id) is not None:
        return None
    for candidate in (folder / RUNS_DIR / run_id, folder / run_id):
        if is_run_folder(candidate):
            return candidate
    return None


def _model_of(folder: Path, outcome: TaskOutcome) -> str | None:
    candidate = run_folder(folder, outcome.run_id)
    if candidate is None:
        return None
    try:
        return RunStore(candidate).meta.model
    except StoreError:
        return None


def write_summary(path: Path, summary: BatchSummary) -> None:
    """Write ``summary.json`` into folder ``path`` atomically.

    Raises:
        StoreError: If it cannot be written.
    """
    from osw_studio.runner.store import write_atomic

    data = json.dumps(summary.model_dump(mode="json"), indent=2).encode()
    write_atomic(path / SUMMARY_JSON, data)
