"""Which tasks OSW Studio can score: every func, getter, option and setup step type they use.

A task counts as covered only if every name it uses is implemented: its metrics (with the options they
are given), its getters, and the setup step types of its ``config`` and ``postconfig`` that the setup
executor runs (it cannot run ``googledrive`` and ``login``, which need Google credentials).

Examples:
    >>> from osw_studio.core.task import Task
    >>> t = Task.model_validate({"id": "t", "instruction": "x", "evaluator": {
    ...     "func": "exact_match", "result": {"type": "vm_command_line", "command": "true"},
    ...     "expected": {"type": "rule", "rules": {"expected": ""}}}})
    >>> missing_names(t)
    []
    >>> t.evaluator.func = "no_such_metric"
    >>> missing_names(t)
    ['metric no_such_metric']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, Field

from osw_studio.core.task import SETUP_STEP_TYPES, GetterSpec, Task
from osw_studio.evaluation.parity import engine_difference, is_differential_tested
from osw_studio.evaluation.registry import GETTERS, METRICS

CREDENTIAL_STEP_TYPES = frozenset({"googledrive", "login"})
"""Setup step types the executor refuses (they need Google or platform credentials)."""

RUNNABLE_SETUP_TYPES = frozenset(SETUP_STEP_TYPES) - CREDENTIAL_STEP_TYPES
"""Setup step types the setup executor (:mod:`osw_studio.envs.setup`) runs."""


def _specs(value: GetterSpec | list[GetterSpec | None] | None) -> list[GetterSpec]:
    items = value if isinstance(value, list) else [value]
    return [s for s in items if s is not None]


def missing_names(task: Task) -> list[str]:
    """What ``task`` uses that is not implemented, as ``"<kind> <name>"`` strings, sorted."""
    ev = task.evaluator
    missing: set[str] = set()
    metrics, getters = METRICS.names(), GETTERS.names()
    options = ev.options if isinstance(ev.options, list) else [ev.options] * len(ev.funcs)
    for name, opts in zip(ev.funcs, options, strict=False):
        if name == "infeasible":
            continue
        if name not in metrics:
            missing.add(f"metric {name}")
        else:
            missing.update(f"option {f}" for f in METRICS.entry(name).missing_features(opts))
    for spec in _specs(ev.result) + _specs(ev.expected):
        if spec.type not in getters:
            missing.add(f"getter {spec.type}")
    for step in [*task.config, *ev.postconfig]:
        if step.type not in RUNNABLE_SETUP_TYPES:
            missing.add(f"setup {step.type}")
    return sorted(missing)


class DomainCoverage(BaseModel):
    """Coverage of one domain (or of all of them)."""

    domain: str
    tasks: int = 0
    covered: int = 0
    missing: dict[str, int] = Field(default_factory=dict, description="name -> tasks blocked by it")

    @property
    def percent(self) -> float:
        """Covered tasks as a percentage of all tasks (0 when there are none)."""
        return 100.0 * self.covered / self.tasks if self.tasks else 0.0


class NameCoverage(BaseModel):
    """One metric or getter the tasks use: how many use it, whether it is implemented and parity-tested."""

    kind: str = Field(description="'metric' or 'getter'")
    name: str
    tasks: int = Field(default=0, description="tasks that use it")
    implemented: bool = False
    differential_tested: bool = Field(
        default=False, description="tests/parity compares it with OSWorld's own function"
    )
    differs: str = Field(
        default="", description="how it can score differently from OSWorld (a library that cannot be shipped)"
    )


class CoverageReport(BaseModel):
    """Per-domain coverage, the total, and per metric and getter name what stands behind it."""

    domains: list[DomainCoverage]
    total: DomainCoverage
    uncovered: dict[str, list[str]] = Field(default_factory=dict, description="task id -> missing names")
    names: list[NameCoverage] = Field(default_factory=list, description="by tasks using them, most first")


def used_names(task: Task) -> set[tuple[str, str]]:
    """The ``(kind, name)`` of every metric and getter ``task`` uses (``infeasible`` is no metric).

    >>> t = Task.model_validate({"id": "t", "instruction": "x", "evaluator": {
    ...     "func": "exact_match", "result": {"type": "vm_command_line", "command": "true"},
    ...     "expected": {"type": "rule", "rules": {"expected": ""}}}})
    >>> sorted(used_names(t))
    [('getter', 'rule'), ('getter', 'vm_command_line'), ('metric', 'exact_match')]
    """
    ev = task.evaluator
    names = {("metric", name) for name in ev.funcs if name != "infeasible"}
    names.update(("getter", spec.type) for spec in _specs(ev.result) + _specs(ev.expected))
    return names


def coverage(entries: Iterable[tuple[str, Task]]) -> CoverageReport:
    """Coverage of ``(domain, task)`` pairs; missing names are counted once per task they block."""
    by_domain: dict[str, DomainCoverage] = {}
    counts: dict[str, Counter[str]] = {}
    total = DomainCoverage(domain="all")
    all_counts: Counter[str] = Counter()
    uncovered: dict[str, list[str]] = {}
    uses: Counter[tuple[str, str]] = Counter()
    for domain, task in entries:
        uses.update(used_names(task))
        row = by_domain.setdefault(domain, DomainCoverage(domain=domain))
        names = missing_names(task)
        row.tasks += 1
        total.tasks += 1
        if names:
            uncovered[task.id] = names
            counts.setdefault(domain, Counter()).update(names)
            all_counts.update(names)
        else:
            row.covered += 1
            total.covered += 1
    for domain, row in by_domain.items():
        row.missing = dict(counts.get(domain, Counter()).most_common())
    total.missing = dict(all_counts.most_common())
    registered = {"metric": METRICS.names(), "getter": GETTERS.names()}
    per_name = [
        NameCoverage(
            kind=kind,
            name=name,
            tasks=n,
            implemented=name in registered[kind],
            differential_tested=is_differential_tested(kind, name),
            differs=engine_difference(kind, name),
        )
        for (kind, name), n in sorted(uses.items(), key=lambda item: (-item[1], item[0]))
    ]
    return CoverageReport(
        domains=sorted(by_domain.values(), key=lambda r: r.domain),
        total=total,
        uncovered=uncovered,
        names=per_name,
    )


def implemented() -> dict[str, list[str]]:
    """Every implemented metric, getter and setup step type, by kind."""
    return {
        "metrics": sorted(METRICS.names()),
        "getters": sorted(GETTERS.names()),
        "setup": sorted(RUNNABLE_SETUP_TYPES),
    }
