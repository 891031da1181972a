"""The agent interface: turn (instruction, observation, history) into a model response and actions.

The runner calls :meth:`Agent.predict` once per step and then :meth:`Agent.record` with the step as it
was executed, so a person's edits and takeovers enter the agent's history exactly as they ran. A reply
that cannot be parsed does not raise: the :class:`Prediction` carries the
:class:`~osw_studio.core.errors.ActionParseError` message and the runner records it as a step error. A
failed model call raises :class:`~osw_studio.core.errors.ModelError`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from osw_studio.core.actions import Action
from osw_studio.core.observation import Observation
from osw_studio.core.step import ReplyAttempt, StepRecord, StepRequest, Usage
from osw_studio.core.task import Task

TokenCallback = Callable[[str], None]


@dataclass
class Prediction:
    """What an agent proposes for one step.

    Attributes:
        response: The model's raw output (or a description of the actions for replay and human agents).
        thought: The reasoning part of the output, when the format has one.
        actions: The proposed actions, in screen pixels.
        coordinate_mode: The coordinate mode the reply was parsed in (``abs``, ``smart``, ``rel1000``...).
        usage: Tokens the model call used.
        logprobs: Per-token log-probabilities, when the endpoint returned them.
        entropy: Mean token entropy of the reply, when logprobs were available.
        latency: Seconds the model call took.
        error: Why the reply could not be turned into actions (then ``actions`` is empty).
        timings: Extra seconds per phase the agent measured (``prepare``, ``model``, ``parse``).
        request: The model request as sent (None when no model was asked), for the run store.
        attempts: Earlier replies of this step that could not be parsed (the model was asked again).
        confirm: What the model's API asks a person to confirm before the actions run (a pending
            safety check of OpenAI's computer tool), or None. An attended run holds the step for the
            person's answer; an unattended one follows the agent's ``safety_checks``.
    """

    response: str = ""
    thought: str | None = None
    actions: list[Action] = field(default_factory=list)
    coordinate_mode: str | None = None
    usage: Usage | None = None
    logprobs: list[float] | None = None
    entropy: float | None = None
    latency: float = 0.0
    error: str | None = None
    timings: dict[str, float] = field(default_factory=dict)
    request: StepRequest | None = None
    attempts: list[ReplyAttempt] = field(default_factory=list)
    confirm: str | None = None


class Agent(abc.ABC):
    """Proposes the next actions from what it sees.

    Attributes:
        name: The agent's registry id (``osworld``, ``uitars``, ``replay``, ``human``).
        kind: The same id; the runner records steps of the ``human`` kind as a person's.
        model_name: The model that acts, as result files name it.
        secrets: Strings that must never be written anywhere (the API key), for run store scrubbing.
        call_user_tries: In unattended runs, how many ``call_user`` hand-backs count as a wait before the
            episode fails (the profile's; an episode's config may override it).
        safety_checks: In unattended runs, what a step to confirm does (:attr:`Prediction.confirm`):
            ``acknowledge`` runs it (as OSWorld does), ``fail`` fails the task.
    """

    name: str = "agent"
    kind: str = "agent"
    model_name: str | None = None
    secrets: tuple[str, ...] = ()
    call_user_tries: int = 0
    safety_checks: str = "acknowledge"

    def __init__(self) -> None:
        self.task: Task | None = None
        self.history: list[StepRecord] = []

    @property
    def wants_accessibility_tree(self) -> bool:
        """Whether every observation must carry the accessibility tree."""
        return False

    def run_info(self) -> dict[str, Any]:
        """What the run store's ``run.json`` keeps about this agent (its prompts and their hashes)."""
        return {}

    def reset(self, task: Task | None = None) -> None:
        """Start a new episode of ``task``: forget the history."""
        self.task = task
        self.history = []

    @abc.abstractmethod
    async def predict(
        self, instruction: str, observation: Observation, *, on_token: TokenCallback | None = None
    ) -> Prediction:
        """Propose the next actions.

        Args:
            instruction: The task's instruction.
            observation: The current screen (and accessibility tree when asked for).
            on_token: Called with each piece of the model's reply as it streams in.

        Raises:
            ModelError: If the model call failed (after the client's retries).
        """

    def record(self, step: StepRecord) -> None:
        """Append the step as it was executed (``step.executed``) to the history."""
        self.history.append(step)

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release what the agent holds (HTTP connections)."""
