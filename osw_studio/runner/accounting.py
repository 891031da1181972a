"""What a results folder's runs cost, why they ended, and whether two folders differ: for ``eval stats``.

:func:`format_accounting` prints, per domain and in total, the OSWorld-compatible rate with its 95%
interval, the rate over valid runs, the outcome kinds, tokens and cost. :func:`compare` pairs the tasks
two folders share and tests, per domain, whether their difference is significant: the exact McNemar
test on solved/unsolved pairs, or a paired bootstrap when some scores are fractional.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel

from osw_studio.core.outcome import OutcomeKind
from osw_studio.runner.significance import mcnemar_exact, paired_bootstrap
from osw_studio.runner.summary import DomainStats, Stats, TaskOutcome

ALPHA = 0.05
"""The significance level of a comparison."""


class DomainComparison(BaseModel):
    """Two folders' scores on the tasks of one domain both ran.

    Attributes:
        name: The domain, or ``total``.
        shared: Tasks both folders hold (interrupted runs left out).
        rate_a: A's rate over them, in percent.
        rate_b: B's rate over them, in percent.
        only_a: Tasks A solved and B did not.
        only_b: Tasks B solved and A did not.
        mcnemar_p: The exact McNemar p-value.
        diff_mean: B's mean score minus A's, over the shared tasks.
        diff_low: The paired bootstrap's 2.5th percentile of that difference.
        diff_high: Its 97.5th percentile.
        decided_by: ``mcnemar`` when every score of the domain is 0 or 1 (the exact test of such
            pairs), ``bootstrap`` when some are fractional.
        significant: Whether that test finds a difference at :data:`ALPHA` (McNemar's p below it, or
            the bootstrap's 95% interval leaving out 0).
    """

    name: str
    shared: int
    rate_a: float
    rate_b: float
    only_a: int
    only_b: int
    mcnemar_p: float
    diff_mean: float
    diff_low: float
    diff_high: float
    decided_by: str
    significant: bool


def _row(name: str, pairs: Sequence[tuple[TaskOutcome, TaskOutcome]], seed: int) -> DomainComparison:
    a_scores = [(a.score or 0.0) if not a.assisted else 0.0 for a, _ in pairs]
    b_scores = [(b.score or 0.0) if not b.assisted else 0.0 for _, b in pairs]
    solved_a = [a.success and not a.assisted for a, _ in pairs]
    solved_b = [b.success and not b.assisted for _, b in pairs]
    only_a = sum(x and not y for x, y in zip(solved_a, solved_b, strict=True))
    only_b = sum(y and not x for x, y in zip(solved_a, solved_b, strict=True))
    p = mcnemar_exact(only_a, only_b)
    boot = paired_bootstrap([b - a for a, b in zip(a_scores, b_scores, strict=True)], seed=seed)
    n = len(pairs)
    fractional = any(s not in (0.0, 1.0) for s in (*a_scores, *b_scores))
    return DomainComparison(
        name=name,
        shared=n,
        rate_a=round(100.0 * sum(a_scores) / n, 2) if n else 0.0,
        rate_b=round(100.0 * sum(b_scores) / n, 2) if n else 0.0,
        only_a=only_a,
        only_b=only_b,
        mcnemar_p=round(p, 6),
        diff_mean=round(boot.mean, 6) if boot else 0.0,
        diff_low=round(boot.low, 6) if boot else 0.0,
        diff_high=round(boot.high, 6) if boot else 0.0,
        decided_by="bootstrap" if fractional else "mcnemar",
        significant=(boot is not None and boot.significant) if fractional else p < ALPHA,
    )


def compare(a: Iterable[TaskOutcome], b: Iterable[TaskOutcome], *, seed: int = 0) -> list[DomainComparison]:
    """Per domain (sorted) and then ``total``: the paired comparison of the tasks both ``a`` and ``b`` hold.

    An error counts as unsolved with score 0, as in OSWorld's rate; a run with a person's help as 0.

    >>> ok = lambda t: TaskOutcome(task_id=t, domain="os", score=1.0, success=True)
    >>> no = lambda t: TaskOutcome(task_id=t, domain="os", score=0.0, status="failed")
    >>> rows = compare([no("1"), no("2"), ok("3")], [ok("1"), ok("2"), ok("3"), ok("4")])
    >>> [(r.name, r.shared, r.only_a, r.only_b, r.mcnemar_p) for r in rows]
    [('os', 3, 0, 2, 0.5), ('total', 3, 0, 2, 0.5)]
    """
    left = {(o.domain, o.task_id): o for o in a if o.counted}
    right = {(o.domain, o.task_id): o for o in b if o.counted}
    shared = sorted(left.keys() & right.keys())
    domains: dict[str, list[tuple[TaskOutcome, TaskOutcome]]] = {}
    for key in shared:
        domains.setdefault(key[0], []).append((left[key], right[key]))
    rows = [_row(name, pairs, seed) for name, pairs in sorted(domains.items())]
    rows.append(_row("total", [(left[k], right[k]) for k in shared], seed))
    return rows


def comparison_json(rows: Sequence[DomainComparison]) -> dict[str, Any]:
    """The comparison as ``eval stats --json`` carries it."""
    return {
        "alpha": ALPHA,
        "tests": "exact McNemar on solved/unsolved pairs (decides when every score is 0 or 1); paired "
        "bootstrap (10000 rounds, seed 0) of B - A (decides when some scores are fractional)",
        "domains": [r.model_dump() for r in rows if r.name != "total"],
        "total": next(r.model_dump() for r in rows if r.name == "total"),
    }


def _money(stats: DomainStats) -> str:
    if not stats.usage.total_tokens:
        return "-"
    if stats.unpriced and not stats.cost:
        return "unknown"
    text = f"{stats.cost:.4f}"
    return f"{text}+?" if stats.unpriced else text


def format_accounting(stats: Stats) -> str:
    """Per domain and in total: rates with their 95% interval, outcome kinds, tokens and cost.

    >>> rows = [TaskOutcome(task_id="a", domain="os", score=1.0, success=True),
    ...         TaskOutcome(task_id="b", domain="os", status="error", error="guest lost")]
    >>> from osw_studio.runner.summary import compute_stats
    >>> print(format_accounting(compute_stats(rows, "m")))  # doctest: +NORMALIZE_WHITESPACE
    domain                 rate  95% interval  valid rate  valid      tokens        cost  kinds
    os                    50.0%   9.5-90.5%      100.0%      1           0           -  solved 1, env_error 1
    total                 50.0%   9.5-90.5%      100.0%      1           0           -  solved 1, env_error 1
    """
    order = {kind.value: i for i, kind in enumerate(OutcomeKind)}
    lines = [
        f"{'domain':<20}{'rate':>7}{'95% interval':>14}{'valid rate':>12}{'valid':>7}{'tokens':>12}"
        f"{'cost':>12}  kinds"
    ]
    for row in [*stats.domains, stats.total]:
        low, high = row.interval
        kinds = ", ".join(
            f"{k} {n}" for k, n in sorted(row.kinds.items(), key=lambda kv: order.get(kv[0], 99))
        )
        lines.append(
            f"{row.name[:19]:<20}{row.rate:>6.1f}%{f'{low:.1f}-{high:.1f}%':>14}{row.valid_rate:>11.1f}%"
            f"{row.valid:>7}{row.usage.total_tokens:>12}{_money(row):>12}  {kinds}"
        )
    return "\n".join(lines)


def format_comparison(rows: Sequence[DomainComparison], a: str, b: str) -> str:
    """The comparison as a text table: per domain, both rates, the discordant pairs and the tests."""
    lines = [
        f"paired comparison of {a} (A) and {b} (B) on the tasks both ran",
        f"{'domain':<20}{'shared':>7}{'A':>8}{'B':>8}{'A only':>8}{'B only':>8}{'McNemar p':>11}"
        f"{'B-A (95% bootstrap)':>26}  significant (test)",
    ]
    for r in rows:
        boot = f"{r.diff_mean:+.3f} [{r.diff_low:+.3f}, {r.diff_high:+.3f}]"
        lines.append(
            f"{r.name[:19]:<20}{r.shared:>7}{r.rate_a:>7.1f}%{r.rate_b:>7.1f}%{r.only_a:>8}{r.only_b:>8}"
            f"{r.mcnemar_p:>11.4f}{boot:>26}  {'yes' if r.significant else 'no'} ({r.decided_by})"
        )
    return "\n".join(lines)
