"""Why a run ended: one :class:`OutcomeKind` per outcome, recorded in ``result.json`` and ``summary.json``.

A zero can be the agent's doing (it failed, looped, ran out of steps or budget) or the harness's (the
guest was lost, the model endpoint kept failing, an asset was missing, the evaluator broke). The kind
tells them apart, so a suite's report can give OSWorld's own rate (every started task counts, errors as
0) beside the rate over valid runs, and ``eval run --retry-errors`` knows what is worth running again.

Examples:
    >>> outcome_kind("finished", 1.0)
    <OutcomeKind.SOLVED: 'solved'>
    >>> outcome_kind("failed", 0.0, step_limit=True).value
    'step_limit'
    >>> outcome_kind("finished", 1.0, infeasible=True).value
    'infeasible'
    >>> OutcomeKind.ENV_ERROR in RETRYABLE_KINDS, OutcomeKind.STUCK.valid
    (True, True)
"""

from __future__ import annotations

from enum import StrEnum

from osw_studio.core.errors import ActionParseError, EvaluationError, GuestError, ModelError


class OutcomeKind(StrEnum):
    """The one reason a run ended."""

    SOLVED = "solved"
    """Scored 1.0."""
    FAILED = "failed"
    """The agent ended the task (done or fail) and it scored below 1."""
    INFEASIBLE = "infeasible"
    """An infeasible task the agent rightly declared infeasible (scored 1.0)."""
    BUDGET = "budget"
    """The run's token, cost or wall-time budget (or its suite's cost budget) ran out; then scored."""
    STUCK = "stuck"
    """The loop guard ended the run (the same action on an unchanged screen, or no change at all); scored."""
    STEP_LIMIT = "step_limit"
    """The agent used its last step without ending the task, and the end state scored below 1."""
    MODEL_ERROR = "model_error"
    """The model endpoint failed after the client's retries."""
    ENV_ERROR = "env_error"
    """The guest failed: it did not start, a setup step failed, or it was lost mid-run."""
    ASSET_MISSING = "asset_missing"
    """A file the task needs is not in the asset cache."""
    EVALUATOR_ERROR = "evaluator_error"
    """The end state could not be scored (a broken or unknown metric or getter)."""
    TIMEOUT = "timeout"
    """The task held its env longer than the task timeout."""
    STOPPED = "stopped"
    """A person stopped the run."""

    @property
    def valid(self) -> bool:
        """Whether the run says something about the agent (it is counted in the rate over valid runs)."""
        return self in VALID_KINDS

    @property
    def success(self) -> bool:
        """Whether the kind is a success."""
        return self in (OutcomeKind.SOLVED, OutcomeKind.INFEASIBLE)


VALID_KINDS = frozenset(
    {
        OutcomeKind.SOLVED,
        OutcomeKind.FAILED,
        OutcomeKind.INFEASIBLE,
        OutcomeKind.BUDGET,
        OutcomeKind.STUCK,
        OutcomeKind.STEP_LIMIT,
    }
)
"""The kinds the agent decided; the others are the harness's or a person's doing."""

RETRYABLE_KINDS = frozenset({OutcomeKind.MODEL_ERROR, OutcomeKind.ENV_ERROR})
"""The kinds ``eval run --retry-errors`` runs again."""


def error_kind(exc: BaseException, *, evaluating: bool = False) -> OutcomeKind:
    """The kind of a run that ended on ``exc``.

    An error may name its own kind with an ``outcome_kind`` attribute (a missing asset does); otherwise
    the error's class decides: the model endpoint's, the evaluator's, or the guest's. A reply the agent
    could not turn into actions is the agent's failure. Anything else during scoring is the evaluator's;
    before it, the env's (a setup step, a store that cannot be written).

    >>> error_kind(ModelError("x")).value, error_kind(GuestError("x")).value
    ('model_error', 'env_error')
    >>> error_kind(ValueError("x"), evaluating=True).value
    'evaluator_error'
    """
    own = getattr(exc, "outcome_kind", None)
    if isinstance(own, OutcomeKind):
        return own
    if isinstance(exc, ModelError):
        return OutcomeKind.MODEL_ERROR
    if isinstance(exc, EvaluationError):
        return OutcomeKind.EVALUATOR_ERROR
    if isinstance(exc, ActionParseError):
        return OutcomeKind.FAILED
    if isinstance(exc, GuestError) or not evaluating:
        return OutcomeKind.ENV_ERROR
    return OutcomeKind.EVALUATOR_ERROR


def outcome_kind(
    status: str,
    score: float | None,
    *,
    error: str | None = None,
    infeasible: bool = False,
    step_limit: bool = False,
) -> OutcomeKind:
    """The kind of an outcome from its status and score (an error's kind comes from :func:`error_kind`).

    Outcomes recorded before kinds existed are read this way too: ``error`` then tells a task timeout
    (the batch's own wording) from the rest, which count as env errors.

    >>> outcome_kind("error", None, error="timed out after 60 s (the task timeout)").value
    'timeout'
    >>> outcome_kind("stopped", None).value, outcome_kind("budget", 0.0).value
    ('stopped', 'budget')
    """
    if status in ("budget", "stuck", "stopped"):
        return OutcomeKind(status)
    if status == "error" or status == "interrupted":
        if error and "(the task timeout)" in error:
            return OutcomeKind.TIMEOUT
        return OutcomeKind.ENV_ERROR
    if score is not None and score >= 1.0:
        return OutcomeKind.INFEASIBLE if infeasible else OutcomeKind.SOLVED
    return OutcomeKind.STEP_LIMIT if step_limit else OutcomeKind.FAILED
