"""Curation: which runs and steps become training data, by review and by DART-GUI-style selection.

Review filters read each run's review log (:mod:`osw_studio.trajectory.review`): keep accepted,
rejected, unreviewed or not-rejected runs, runs rated at least R, and drop steps labelled ``wrong`` or
``redundant``.

DART-GUI selects data on several levels; these are the ones a run store can feed, with the formulas:

- **Task-level sampling weights.** A task's success rate ``p = successes / scored runs`` over every run
  given (runs without a score do not count). Its weight is ``max(1 - p, floor)`` normalised so all weights
  sum to 1: unsolved tasks are sampled most, solved ones keep a small share (``floor``, default 0.05), so
  they are not forgotten. Written to ``task_weights.json`` by exports that ask for it.
- **Trajectory-level replay.** For a task whose success rate is below ``replay_below``, each successful
  run is exported ``1 + replay_copies`` times (DART keeps successes of hard tasks in an experience pool
  and mixes them back into training batches).
- **Step-level entropy selection.** Among the agent steps that carry a stored mean token entropy, keep the
  ``entropy_top`` fraction with the highest entropy: the cut-off is the ``ceil(entropy_top × n)``-th
  highest value, and steps at or above it stay. Steps without an entropy (the endpoint returned no
  logprobs; human steps) are kept unless ``entropy_strict`` is set.

Token-level weighting needs the trainer's own log-probabilities and is left to the trainer.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from osw_studio.core.review import RunReview
from osw_studio.core.step import StepRecord
from osw_studio.trajectory.review import ReviewLog
from osw_studio.trajectory.store import RunStore

ReviewState = Literal["any", "accepted", "rejected", "unreviewed", "not-rejected"]


@dataclass(frozen=True)
class Curation:
    """What to keep.

    Attributes:
        review: Which runs by their review verdict.
        min_rating: Only runs rated at least this (an unrated run fails it).
        drop_labels: Drop steps with these labels (``wrong``, ``redundant``).
        replay_below: Replay the successes of tasks whose success rate is below this.
        replay_copies: Extra copies of each replayed run.
        entropy_top: Keep this fraction of the highest-entropy agent steps (``None``: all).
        entropy_strict: Drop steps without a stored entropy too (when ``entropy_top`` is set).
        weight_floor: The smallest share of a task's sampling weight before normalising.
    """

    review: ReviewState = "any"
    min_rating: int | None = None
    drop_labels: frozenset[str] = frozenset()
    replay_below: float | None = None
    replay_copies: int = 1
    entropy_top: float | None = None
    entropy_strict: bool = False
    weight_floor: float = 0.05

    def __post_init__(self) -> None:
        if self.entropy_top is not None and not 0 < self.entropy_top <= 1:
            raise ValueError("entropy_top must be in (0, 1]")
        if self.replay_below is not None and not 0 <= self.replay_below <= 1:
            raise ValueError("replay_below must be in [0, 1]")
        if self.replay_copies < 0 or not 0 <= self.weight_floor <= 1:
            raise ValueError("replay_copies must be >= 0 and weight_floor in [0, 1]")


@dataclass
class TaskRate:
    """A task's record over the runs given."""

    successes: int = 0
    scored: int = 0

    @property
    def rate(self) -> float | None:
        """``successes / scored``, or ``None`` when no run was scored."""
        return self.successes / self.scored if self.scored else None


def success_rates(runs: Iterable[RunStore]) -> dict[str, TaskRate]:
    """Per task id: successful and scored runs."""
    rates: dict[str, TaskRate] = {}
    for run in runs:
        result = run.result
        rate = rates.setdefault(run.meta.task_id, TaskRate())
        if result is not None and result.score is not None:
            rate.scored += 1
            rate.successes += int(result.success)
    return rates


def task_weights(rates: dict[str, TaskRate], floor: float = 0.05) -> dict[str, float]:
    """DART-style sampling weights: ``max(1 - p, floor)``, normalised to sum 1 (unscored: ``p = 0``).

    >>> w = task_weights({"a": TaskRate(0, 4), "b": TaskRate(3, 4), "c": TaskRate(4, 4)})
    >>> {k: round(v, 4) for k, v in w.items()}
    {'a': 0.7692, 'b': 0.1923, 'c': 0.0385}
    """
    raw = {task: max(1.0 - (rate.rate or 0.0), floor) for task, rate in rates.items()}
    total = sum(raw.values())
    return {task: value / total for task, value in raw.items()} if total else raw


def entropy_cutoff(entropies: list[float], top: float) -> float | None:
    """The lowest entropy kept when keeping the ``top`` fraction of the highest.

    >>> entropy_cutoff([0.1, 0.9, 0.5, 0.3, 0.7], 0.4)
    0.7
    >>> entropy_cutoff([], 0.5) is None
    True
    """
    finite = sorted((e for e in entropies if math.isfinite(e)), reverse=True)
    if not finite:
        return None
    keep = max(1, math.ceil(top * len(finite)))
    return finite[keep - 1]


@dataclass
class RunPlan:
    """What is kept of one run.

    Attributes:
        run: The run.
        copies: How many times its samples are written (0: left out; 2+: replayed).
        steps: The indices of the steps kept.
        review: The run's review (all reviewers' latest word), if any.
        why: Why it is left out, when ``copies`` is 0.
    """

    run: RunStore
    copies: int
    steps: list[int] = field(default_factory=list)
    review: RunReview | None = None
    why: str | None = None


@dataclass
class CurationPlan:
    """The selection over many runs, with the per-task weights and counts of what was dropped."""

    runs: list[RunPlan]
    weights: dict[str, float]
    rates: dict[str, TaskRate]
    dropped_steps: dict[str, int] = field(default_factory=dict)

    def drop(self, why: str, n: int = 1) -> None:
        """Count ``n`` steps dropped for ``why``."""
        self.dropped_steps[why] = self.dropped_steps.get(why, 0) + n


def _run_reason(review: RunReview | None, curation: Curation) -> str | None:
    verdict = review.verdict if review else None
    wanted = curation.review
    if wanted == "accepted" and verdict != "accepted":
        return "not accepted"
    if wanted == "rejected" and verdict != "rejected":
        return "not rejected"
    if wanted == "unreviewed" and review is not None:
        return "reviewed"
    if wanted == "not-rejected" and verdict == "rejected":
        return "rejected"
    if curation.min_rating is not None and (review is None or (review.rating or 0) < curation.min_rating):
        return f"rated below {curation.min_rating}"
    return None


def plan(runs: Iterable[RunStore], curation: Curation) -> CurationPlan:
    """Decide, for each run, whether it is kept, how many times, and which of its steps.

    Reads every run's steps once for the entropy cut-off (only the entropies are kept in memory), then
    once more per kept run when its samples are written.
    """
    stores = list(runs)
    rates = success_rates(stores)
    weights = task_weights(rates, curation.weight_floor)
    steps_of: dict[int, list[StepRecord]] = {}
    cutoff = None
    if curation.entropy_top is not None:
        entropies = []
        for i, run in enumerate(stores):
            steps_of[i] = list(run.iter_steps())
            entropies += [s.entropy for s in steps_of[i] if s.source == "agent" and s.entropy is not None]
        cutoff = entropy_cutoff(entropies, curation.entropy_top)
    result = CurationPlan(runs=[], weights=weights, rates=rates)
    for i, run in enumerate(stores):
        review = ReviewLog(run.path).consensus()
        why = _run_reason(review, curation)
        if why is not None:
            result.runs.append(RunPlan(run, 0, review=review, why=why))
            continue
        copies = 1
        outcome = run.result
        rate = rates[run.meta.task_id].rate
        if (
            curation.replay_below is not None
            and outcome is not None
            and outcome.success
            and rate is not None
            and rate < curation.replay_below
        ):
            copies += curation.replay_copies
        kept = []
        for step in steps_of.get(i) or run.iter_steps():
            label = review.steps[step.index].label if review and step.index in review.steps else None
            if label in curation.drop_labels:
                result.drop(f"labelled {label}")
                continue
            if curation.entropy_top is not None:
                if step.entropy is None:
                    if curation.entropy_strict:
                        result.drop("no entropy")
                        continue
                elif step.source == "agent" and cutoff is not None and step.entropy < cutoff:
                    result.drop("low entropy")
                    continue
            kept.append(step.index)
        result.runs.append(RunPlan(run, copies, kept, review))
    return result
