"""Review labels: what a person said of a recorded run and of its steps.

Reviews never change the recorded steps. Each judgement is one :class:`ReviewEvent`, appended to
``review.jsonl`` beside the run's ``steps.jsonl`` with who said it and when; the current state is the
fold of those events (:func:`fold`), the latest word of each reviewer on each thing winning.
"""

from __future__ import annotations

import time
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from osw_studio.core.actions import Action

StepLabel = Literal["correct", "wrong", "redundant"]
"""A step's label: it did the right thing, the wrong thing, or nothing the task needed."""

STEP_LABELS: tuple[str, ...] = get_args(StepLabel)

RunVerdict = Literal["accepted", "rejected"]
"""Whether a run is fit to learn from."""


class ReviewEvent(BaseModel):
    """One judgement: of a step (``step`` set) or of the whole run (``step`` is ``None``).

    Attributes:
        reviewer: Who said it.
        at: When (epoch seconds).
        step: The step's index, or ``None`` for the run.
        label: The step's label; ``None`` with ``clear`` takes a label back.
        correction: For a ``wrong`` step, the actions that should have run (screen pixels).
        verdict: The run's verdict.
        rating: The run's quality, 1 (worst) to 5.
        note: Free text.
        clear: Takes back this reviewer's earlier label of the step (or verdict of the run).
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    reviewer: str = Field(min_length=1, max_length=200)
    at: float = Field(default_factory=time.time)
    step: int | None = Field(default=None, ge=0)
    label: StepLabel | None = None
    correction: list[Action] | None = None
    verdict: RunVerdict | None = None
    rating: int | None = Field(default=None, ge=1, le=5)
    note: str | None = Field(default=None, max_length=10_000)
    clear: bool = False


class StepReview(BaseModel):
    """One reviewer's current word on one step."""

    label: StepLabel | None = None
    correction: list[Action] | None = None
    note: str | None = None


class RunReview(BaseModel):
    """One reviewer's current word on a run and its steps."""

    reviewer: str
    verdict: RunVerdict | None = None
    rating: int | None = None
    note: str | None = None
    steps: dict[int, StepReview] = Field(default_factory=dict)
    at: float = 0.0


def fold(events: list[ReviewEvent]) -> dict[str, RunReview]:
    """Each reviewer's current review, from the events in the order they were written.

    >>> events = [ReviewEvent(reviewer="ann", step=1, label="wrong", at=1),
    ...           ReviewEvent(reviewer="ann", step=1, label="correct", at=2),
    ...           ReviewEvent(reviewer="ann", verdict="accepted", rating=4, at=3)]
    >>> review = fold(events)["ann"]
    >>> review.steps[1].label, review.verdict, review.rating
    ('correct', 'accepted', 4)
    """
    reviews: dict[str, RunReview] = {}
    for event in events:
        review = reviews.setdefault(event.reviewer, RunReview(reviewer=event.reviewer))
        review.at = max(review.at, event.at)
        if event.step is not None:
            if event.clear:
                review.steps.pop(event.step, None)
                continue
            current = review.steps.setdefault(event.step, StepReview())
            if event.label is not None:
                current.label = event.label
                current.correction = event.correction if event.label == "wrong" else None
            if event.note is not None:
                current.note = event.note
            continue
        if event.clear:
            review.verdict, review.rating = None, None
            continue
        if event.verdict is not None:
            review.verdict = event.verdict
        if event.rating is not None:
            review.rating = event.rating
        if event.note is not None:
            review.note = event.note
    return reviews


def consensus(reviews: dict[str, RunReview]) -> RunReview:
    """One review that speaks for all: the most recent reviewer's word on each thing.

    A run or step that one reviewer judged and another did not keeps the judgement it has.
    """
    merged = RunReview(reviewer="+".join(sorted(reviews)) or "nobody")
    for review in sorted(reviews.values(), key=lambda r: r.at):
        merged.verdict = review.verdict or merged.verdict
        merged.rating = review.rating or merged.rating
        merged.note = review.note or merged.note
        for index, step in review.steps.items():
            if step.label is not None:
                merged.steps[index] = step
        merged.at = max(merged.at, review.at)
    return merged


class Agreement(BaseModel):
    """How far reviewers agree, over the runs that two or more of them reviewed.

    Attributes:
        runs: Runs with two or more reviewers.
        step_pairs: Steps labelled by both reviewers of a pair, over all pairs.
        step_agreement: The share of those with the same label.
        step_kappa: Cohen's kappa of the step labels (chance-corrected), pooled over pairs.
        verdict_pairs: Runs given a verdict by both reviewers of a pair.
        verdict_agreement: The share of those with the same verdict.
    """

    runs: int = 0
    step_pairs: int = 0
    step_agreement: float | None = None
    step_kappa: float | None = None
    verdict_pairs: int = 0
    verdict_agreement: float | None = None


def cohen_kappa(pairs: list[tuple[str, str]]) -> float | None:
    """Cohen's kappa of paired labels: ``(p_o - p_e) / (1 - p_e)``.

    >>> round(cohen_kappa([("a", "a"), ("a", "b"), ("b", "b"), ("b", "b")]), 4)
    0.5
    """
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    labels = {x for pair in pairs for x in pair}
    expected = sum((sum(a == k for a, _ in pairs) / n) * (sum(b == k for _, b in pairs) / n) for k in labels)
    if expected == 1:
        return 1.0 if observed == 1 else 0.0
    return (observed - expected) / (1 - expected)


def agreement(runs: list[dict[str, RunReview]]) -> Agreement:
    """Reviewer agreement over runs (each given as its reviewers' reviews)."""
    step_pairs: list[tuple[str, str]] = []
    verdicts: list[tuple[str, str]] = []
    shared = 0
    for reviews in runs:
        people = sorted(reviews)
        if len(people) < 2:
            continue
        shared += 1
        for i, a in enumerate(people):
            for b in people[i + 1 :]:
                ra, rb = reviews[a], reviews[b]
                for index in sorted(set(ra.steps) & set(rb.steps)):
                    la, lb = ra.steps[index].label, rb.steps[index].label
                    if la is not None and lb is not None:
                        step_pairs.append((la, lb))
                if ra.verdict and rb.verdict:
                    verdicts.append((ra.verdict, rb.verdict))
    return Agreement(
        runs=shared,
        step_pairs=len(step_pairs),
        step_agreement=sum(a == b for a, b in step_pairs) / len(step_pairs) if step_pairs else None,
        step_kappa=cohen_kappa(step_pairs),
        verdict_pairs=len(verdicts),
        verdict_agreement=sum(a == b for a, b in verdicts) / len(verdicts) if verdicts else None,
    )
