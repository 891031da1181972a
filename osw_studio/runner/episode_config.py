"""The plain data of an episode: its states, its limits and modes, and the proposal its gate holds.

Re-exported by :mod:`osw_studio.runner.episode`, which is where the UI and the CLI import them from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from osw_studio.core.actions import Action
from osw_studio.core.budget import RunBudget
from osw_studio.core.observation import Observation
from osw_studio.core.price import Price
from osw_studio.runner.settle import SettlePolicy
from osw_studio.settings.model import EvaluatorKind


class EpisodeState(StrEnum):
    """Where an episode is; the last six are final (``budget`` and ``stuck`` end by a limit)."""

    IDLE = "idle"
    RESETTING = "resetting"
    OBSERVING = "observing"
    PREDICTING = "predicting"
    GATING = "gating"
    EXECUTING = "executing"
    EVALUATING = "evaluating"
    FINISHED = "finished"
    FAILED = "failed"
    STOPPED = "stopped"
    ERROR = "error"
    BUDGET = "budget"
    STUCK = "stuck"

    @property
    def is_final(self) -> bool:
        """Whether the episode is over.

        >>> EpisodeState.FAILED.is_final, EpisodeState.GATING.is_final
        (True, False)
        """
        return self in _FINAL


_FINAL = frozenset(
    {
        EpisodeState.FINISHED,
        EpisodeState.FAILED,
        EpisodeState.STOPPED,
        EpisodeState.ERROR,
        EpisodeState.BUDGET,
        EpisodeState.STUCK,
    }
)

DEFAULT_PHASE_TIMEOUTS: dict[str, float] = {
    "reset": 600.0,
    "observe": 60.0,
    "predict": 300.0,
    "execute": 120.0,
    "evaluate": 600.0,
}
"""Seconds each phase may take before the episode ends in error (OSWorld's setup can take minutes)."""


@dataclass
class EpisodeConfig:
    """Limits and modes of one episode.

    Attributes:
        max_steps: The most agent steps (a person's own steps during a takeover do not count).
        mode: ``auto`` (actions pass the gate) or ``approve`` (each waits for a person).
        phase_timeouts: Seconds per phase (``reset``, ``observe``, ``predict``, ``execute``,
            ``evaluate``); missing phases use :data:`DEFAULT_PHASE_TIMEOUTS`.
        settle: The wait for a stable screen after each action.
        observe_accessibility: Whether to grab the accessibility tree with each observation (also done
            whenever the agent wants it).
        hold_on_model_error: A failed model call pauses the episode until a person retries it
            (:meth:`Episode.retry_model_call`) or stops, instead of ending it in error (the app's way).
        attended: Whether a person is there to answer a ``call_user`` (the app, ``--approve``); None: only
            in approve mode. An attended episode pauses and asks; an unattended one never waits for anyone.
        call_user_tries: Unattended, how many ``call_user`` hand-backs count as a wait before the episode
            fails (0: the first fails, as DART-GUI does; UI-TARS in OSWorld: 3). None: the agent's own.
        evaluator: Who scores the end state: ``osw-studio`` (our metrics, the default) or ``osworld``
            (OSWorld's own metric functions in the side environment, over the files our getters fetched).
        reference_python: The side environment's interpreter for ``osworld`` (None: the default, see
            :func:`osw_studio.evaluation.osworld.reference_python`).
        price: The model's price, for each step's and the run's cost (None: unknown, no cost).
        budget: The most the run may spend (tokens, cost, wall time), checked between steps; past it
            the run is scored and ends ``budget``.
        loop_repeats: The same actions on an unchanged screen this many times in a row is stuck (0: off).
        loop_still_steps: This many steps in a row without a change on the screen is stuck (0: off). A
            stuck run ends ``stuck`` (scored), or, attended, is held for the person.
        reference_osworld: The OSWorld checkout whose metric code ``osworld`` runs (None: the
            ``desktop-env`` package of the side environment).
    """

    max_steps: int = 30
    mode: Literal["auto", "approve"] = "auto"
    phase_timeouts: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_PHASE_TIMEOUTS))
    settle: SettlePolicy = field(default_factory=SettlePolicy)
    observe_accessibility: bool = False
    hold_on_model_error: bool = False
    attended: bool | None = None
    call_user_tries: int | None = None
    evaluator: EvaluatorKind = "osw-studio"
    reference_python: str | None = None
    price: Price | None = None
    budget: RunBudget | None = None
    loop_repeats: int = 0
    loop_still_steps: int = 0
    reference_osworld: str | None = None

    @property
    def is_attended(self) -> bool:
        """Whether a person answers hand-backs (see ``attended``)."""
        return self.mode == "approve" if self.attended is None else self.attended

    def timeout(self, phase: str) -> float:
        """Seconds allowed for ``phase``."""
        return self.phase_timeouts.get(phase, DEFAULT_PHASE_TIMEOUTS[phase])


@dataclass(frozen=True)
class Proposal:
    """What the gate holds while it waits for a person.

    Attributes:
        index: The step number (1-based).
        response: The model's raw output.
        thought: Its reasoning part, when the format has one.
        actions: The parsed actions, in screen pixels.
        error: Why the reply could not be parsed, if it could not.
        observation: The screen the proposal was made on.
        confirm: What the model asks a person to confirm before it runs (a safety check), or None.
    """

    index: int
    response: str | None
    thought: str | None
    actions: list[Action]
    error: str | None
    observation: Observation
    confirm: str | None = None
