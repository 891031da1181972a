"""A suite run several times (``eval run --repeats K``): one results folder per repeat, and their report.

Repeat ``i`` of a suite writes ``OUT/repeat-i/``, a results folder like any other (its own run stores,
``summary.json`` and OSWorld layout), each task on a fresh desktop. The report pools the repeats, per
domain and in total, over the tasks every repeat ran:

- mean: the mean over repeats of the rate (OSWorld's: sum of scores over tasks, errors as 0), with a 95%
  interval from the spread of the repeats' rates (Student's t with K-1 degrees of freedom);
- pass@k: the share of tasks solved in at least one of the K runs; pass^k: solved in all K.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from osw_studio.runner.significance import pass_at_k, pass_hat_k
from osw_studio.runner.summary import TaskOutcome

REPEAT_PREFIX = "repeat-"
_REPEAT = re.compile(r"repeat-(\d+)")

_T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}
"""Two-sided 95% quantiles of Student's t by degrees of freedom (more: 1.96)."""


def repeat_dir(out: Path, index: int) -> Path:
    """The results folder of repeat ``index`` (from 1).

    >>> repeat_dir(Path("out"), 2).as_posix()
    'out/repeat-2'
    """
    return out / f"{REPEAT_PREFIX}{index}"


def repeat_folders(path: Path) -> list[Path]:
    """The repeat folders in ``path``, in repeat order (none: not a repeated suite)."""
    if not path.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in path.iterdir() if p.is_dir() and (m := _REPEAT.fullmatch(p.name))]
    return [p for _, p in sorted(found)]


class RepeatRow(BaseModel):
    """One domain (or ``total``) over K repeats.

    Attributes:
        name: The domain, or ``total``.
        tasks: Tasks every repeat ran.
        repeats: K.
        rates: Each repeat's rate in percent.
        mean: Their mean.
        low: The 95% interval's lower end (equal to ``mean`` with one repeat).
        high: Its upper end.
        pass_at_k: Percent of tasks solved in at least one repeat.
        pass_hat_k: Percent of tasks solved in every repeat.
    """

    name: str
    tasks: int
    repeats: int
    rates: list[float] = Field(default_factory=list)
    mean: float = 0.0
    low: float = 0.0
    high: float = 0.0
    pass_at_k: float = 0.0
    pass_hat_k: float = 0.0


def _row(name: str, runs: Sequence[Sequence[TaskOutcome]]) -> RepeatRow:
    """``runs[t]`` holds task t's outcome in each repeat."""
    k = len(runs[0]) if runs else 0
    n = len(runs)
    if not n or not k:
        return RepeatRow(name=name, tasks=n, repeats=k)
    scores = [[0.0 if o.assisted else (o.score or 0.0) for o in task] for task in runs]
    rates = [100.0 * sum(task[r] for task in scores) / n for r in range(k)]
    mean = sum(rates) / k
    half = 0.0
    if k > 1:
        sd = math.sqrt(sum((x - mean) ** 2 for x in rates) / (k - 1))
        half = _T95.get(k - 1, 1.96) * sd / math.sqrt(k)
    solved = [sum(o.success and not o.assisted for o in task) for task in runs]
    return RepeatRow(
        name=name,
        tasks=n,
        repeats=k,
        rates=[round(x, 2) for x in rates],
        mean=round(mean, 4),
        low=round(max(0.0, mean - half), 4),
        high=round(min(100.0, mean + half), 4),
        pass_at_k=round(100.0 * sum(pass_at_k(k, c, k) for c in solved) / n, 4),
        pass_hat_k=round(100.0 * sum(pass_hat_k(k, c, k) for c in solved) / n, 4),
    )


def compute_repeats(repeats: Sequence[Sequence[TaskOutcome]]) -> list[RepeatRow]:
    """Per domain (sorted), then ``total``, over the tasks every repeat holds (interrupted ones left out).

    >>> ok = lambda t: TaskOutcome(task_id=t, domain="os", score=1.0, success=True)
    >>> no = lambda t: TaskOutcome(task_id=t, domain="os", score=0.0, status="failed")
    >>> rows = compute_repeats([[ok("a"), no("b")], [ok("a"), ok("b")]])
    >>> [(r.name, r.rates, r.pass_at_k, r.pass_hat_k) for r in rows][-1]
    ('total', [50.0, 100.0], 100.0, 50.0)
    """
    tables = [{(o.domain, o.task_id): o for o in outcomes if o.counted} for outcomes in repeats]
    if not tables:
        return []
    shared = sorted(set.intersection(*(set(t) for t in tables)))
    by_domain: dict[str, list[list[TaskOutcome]]] = {}
    for key in shared:
        by_domain.setdefault(key[0], []).append([t[key] for t in tables])
    rows = [_row(name, runs) for name, runs in sorted(by_domain.items())]
    rows.append(_row("total", [[t[key] for t in tables] for key in shared]))
    return rows


def repeats_json(rows: Sequence[RepeatRow]) -> dict[str, Any]:
    """The report as ``eval stats --json`` carries it."""
    return {
        "repeats": rows[-1].repeats if rows else 0,
        "domains": [r.model_dump() for r in rows[:-1]],
        "total": rows[-1].model_dump() if rows else None,
    }


def format_repeats(rows: Sequence[RepeatRow]) -> str:
    """The report as a text table."""
    k = rows[-1].repeats if rows else 0
    lines = [
        f"{k} repeats: mean rate and its 95% interval, pass@{k} (solved once or more), pass^{k} (every time)",
        f"{'domain':<20}{'tasks':>7}{'mean':>9}{'95% interval':>16}{f'pass@{k}':>10}{f'pass^{k}':>10}  rates",
    ]
    for r in rows:
        rates = ", ".join(f"{x:.1f}" for x in r.rates)
        lines.append(
            f"{r.name[:19]:<20}{r.tasks:>7}{r.mean:>8.1f}%{f'{r.low:.1f}-{r.high:.1f}%':>16}"
            f"{r.pass_at_k:>9.1f}%{r.pass_hat_k:>9.1f}%  {rates}"
        )
    return "\n".join(lines)
