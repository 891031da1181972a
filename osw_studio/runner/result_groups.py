"""Results per agent and model: the runs of a folder grouped so that no model is credited another's runs.

A folder of run stores may hold runs of several agents and models (the app's runs folder does). Each
``(agent, model)`` pair is a group of its own, with one outcome per task: its latest scored run without
a person's help (a later run a person helped does not hide what the agent did alone), else its latest
scored run, else its latest run. A batch's folder (``summary.json``) and OSWorld's results layout are
one group, as :func:`~osw_studio.runner.summary.load_outcomes` reads them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from osw_studio.core.errors import StoreError
from osw_studio.runner.summary import TaskOutcome, load_outcomes, outcome_of, read_summary
from osw_studio.trajectory.store import iter_runs


@dataclass
class ResultGroup:
    """The outcomes of one agent and model (or of a batch, or an OSWorld results folder).

    Attributes:
        label: What the group is: ``model (agent)``, or the batch's model, or the folder's name.
        outcomes: One per task.
    """

    label: str
    outcomes: list[TaskOutcome] = field(default_factory=list)


def group_label(agent: str | None, model: str | None) -> str:
    """How Results names an agent and model.

    >>> group_label("uitars", "ui-tars-1.5"), group_label("replay", "replay"), group_label(None, None)
    ('ui-tars-1.5 (uitars)', 'replay', 'unknown model')
    """
    name = model or "unknown model"
    return name if agent in (None, "", model) else f"{name} ({agent})"


def _rank(outcome: TaskOutcome) -> tuple[bool, bool, bool, str]:
    return (outcome.counted, outcome.scored, not outcome.assisted, outcome.run_id or "")


def choose_outcomes(outcomes: list[TaskOutcome]) -> list[TaskOutcome]:
    """One outcome per ``(domain, task_id)``: the latest scored run without help, else the latest scored.

    >>> own = TaskOutcome(task_id="t", domain="os", score=1.0, success=True, run_id="1")
    >>> helped = TaskOutcome(task_id="t", domain="os", score=1.0, success=True, assisted=True, run_id="2")
    >>> failed = TaskOutcome(task_id="t", domain="os", score=0.0, status="failed", run_id="3")
    >>> [o.run_id for o in choose_outcomes([own, helped])], [o.run_id for o in choose_outcomes([helped])]
    (['1'], ['2'])
    >>> [o.run_id for o in choose_outcomes([own, helped, failed])]
    ['3']
    """
    best: dict[tuple[str, str], TaskOutcome] = {}
    for outcome in outcomes:
        key = (outcome.domain, outcome.task_id)
        old = best.get(key)
        if old is None or _rank(outcome) > _rank(old):
            best[key] = outcome
    return list(best.values())


def load_groups(path: str | Path) -> list[ResultGroup]:
    """The results in a folder, one group per agent and model, largest first.

    Raises:
        StoreError: If ``path`` is not a folder or holds no results.
    """
    folder = Path(path)
    if folder.is_dir() and read_summary(folder) is None:
        pooled: dict[tuple[str | None, str | None], list[TaskOutcome]] = {}
        try:
            stores = list(iter_runs([folder]))
        except StoreError:
            stores = []
        for store in stores:
            try:
                meta = store.meta
                outcome = outcome_of(store)
            except StoreError:
                continue
            pooled.setdefault((meta.agent, meta.model), []).append(outcome)
        if pooled:
            groups = [
                ResultGroup(group_label(agent, model), choose_outcomes(found))
                for (agent, model), found in pooled.items()
            ]
            return sorted(groups, key=lambda g: (-len(g.outcomes), g.label))
    label, outcomes = load_outcomes(folder)
    return [ResultGroup(label, outcomes)]
