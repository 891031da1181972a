"""The record of one step and of one episode's outcome, as stored in a run store.

``steps.jsonl`` holds one :class:`StepRecord` per line; ``result.json`` holds an :class:`EpisodeResult`.

Examples:
    >>> from osw_studio.core.actions import Click
    >>> s = StepRecord(index=1, proposed=[Click(x=5, y=6)], executed=[Click(x=5, y=6)])
    >>> s.verdict
    'auto'
    >>> StepRecord.model_validate_json(s.model_dump_json()) == s
    True
"""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from osw_studio.core.actions import Action
from osw_studio.core.outcome import OutcomeKind

StepSource = Literal["agent", "human"]
Verdict = Literal["auto", "approved", "edited", "skipped", "human", "error"]


class Usage(BaseModel):
    """Token counts of one model call (or, summed, of a run).

    Attributes:
        prompt_tokens: Input tokens, cached ones included.
        completion_tokens: Output tokens, reasoning ones included.
        total_tokens: Both.
        reasoning_tokens: Of the output, the tokens spent reasoning, when the API reports them.
        cached_tokens: Of the input, the tokens read from the provider's prompt cache, when reported.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    reasoning_tokens: int | None = None
    cached_tokens: int | None = None

    def __add__(self, other: Usage) -> Usage:
        """The two counts summed; a count neither reported stays unreported.

        >>> (Usage(prompt_tokens=3, cached_tokens=1) + Usage(prompt_tokens=2)).model_dump()
        {'prompt_tokens': 5, 'completion_tokens': 0, 'total_tokens': 0, 'reasoning_tokens': None, \
'cached_tokens': 1}
        """

        def both(a: int | None, b: int | None) -> int | None:
            return None if a is None and b is None else (a or 0) + (b or 0)

        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            reasoning_tokens=both(self.reasoning_tokens, other.reasoning_tokens),
            cached_tokens=both(self.cached_tokens, other.cached_tokens),
        )


class ReplyAttempt(BaseModel):
    """A model reply that could not be parsed, after which the agent asked again.

    Attributes:
        response: The reply, verbatim.
        error: Why it could not be turned into actions.
        temperature: The temperature it was sampled at.
    """

    response: str
    error: str
    temperature: float | None = None


class StepRequest(BaseModel):
    """The model request a step was decided from: what the agent sent, exactly.

    In memory (from the model client) ``messages`` are the chat messages as sent, images as ``data:``
    URLs. In a run store they are compact (see :mod:`osw_studio.trajectory.requests`): an image is an
    ``image_ref`` part naming the file under ``screens/`` that holds the bytes sent (the step's own
    screenshot when it went out as grabbed), with the size and encoding sent; a message an earlier step
    already sent is ``{"same_as": [step, position]}``.

    Attributes:
        messages: The chat messages.
        params: The request's other parameters: ``model`` and the sampling parameters sent
            (``temperature``, ``top_p``, ``max_tokens``, ``logprobs``, ...).
        prompt_source: Where the prompt came from (templates and their version), as the agent names it.
        prompt_sha256: SHA-256 of the prompt's text: the text of the messages up to the first user turn.
    """

    model_config = ConfigDict(extra="allow")

    messages: list[dict[str, Any]] = Field(default_factory=list)
    params: dict[str, Any] = Field(default_factory=dict)
    prompt_source: str | None = None
    prompt_sha256: str | None = None


class StepRecord(BaseModel):
    """One step of an episode.

    Attributes:
        index: 1-based step number.
        source: ``agent`` when the model proposed the actions, ``human`` for a person's own actions
            (takeover or the human agent).
        verdict: What the gate decided: ``auto`` (passed in auto mode), ``approved``, ``edited``
            (a person changed the proposal), ``skipped``, ``human`` or ``error``.
        response: The model's raw output.
        thought: The reasoning part of the output, when the format has one.
        proposed: The actions the model proposed (parsed, screen pixels).
        executed: The actions that actually ran.
        coordinate_mode: The coordinate convention the actions were parsed from.
        screenshot: File name (under ``screens/``) of the screen the step acted on.
        accessibility_tree: File name of the accessibility XML, when saved.
        error: What went wrong in this step, if anything.
        timings: Seconds per phase (``observe``, ``predict``, ``parse``, ``gate``, ``execute``, ``settle``).
        usage: Tokens used by the model call.
        cost: What the call cost at the model's price (None when the price or the usage is unknown).
        logprobs: Per-token log-probabilities, when the endpoint returned them.
        entropy: Mean token entropy of the reply, when logprobs were available.
        attempts: Earlier replies of this step that could not be parsed, in order, when the agent asked
            the model again (the profile's ``parse_tries``); ``response`` is the last reply.
        request: The model request the step was decided from (None for steps no model was asked:
            a person's, a replay's, and run stores written before requests were recorded).
        started_at: When the step began (epoch seconds).
        finished_at: When it was recorded.
    """

    model_config = ConfigDict(extra="allow")

    index: int = Field(ge=0)
    source: StepSource = "agent"
    verdict: Verdict = "auto"
    response: str | None = None
    thought: str | None = None
    proposed: list[Action] = Field(default_factory=list)
    executed: list[Action] = Field(default_factory=list)
    coordinate_mode: str | None = None
    screenshot: str | None = None
    accessibility_tree: str | None = None
    error: str | None = None
    timings: dict[str, float] = Field(default_factory=dict)
    usage: Usage | None = None
    cost: float | None = None
    logprobs: list[float] | None = None
    entropy: float | None = None
    attempts: list[ReplyAttempt] = Field(default_factory=list)
    request: StepRequest | None = None
    started_at: float = Field(default_factory=time.time)
    finished_at: float | None = None


class EpisodeResult(BaseModel):
    """The outcome of an episode, as in ``result.json``.

    Attributes:
        success: Whether the score reached 1.0.
        score: The evaluator's score in [0, 1], or None when it could not be computed.
        steps: The number of steps taken.
        error: Why the episode ended in error, if it did.
        domain: The task's domain (OSWorld's folder name, e.g. ``os``).
        task_id: The task's id.
        model: The model that acted (or ``replay`` / ``human``).
        status: ``finished``, ``failed``, ``stopped``, ``error``, ``interrupted``, ``budget`` (a budget
            ran out; scored) or ``stuck`` (the loop guard ended it; scored).
    """

    model_config = ConfigDict(extra="allow")

    success: bool
    score: float | None = Field(default=None, ge=0, le=1)
    steps: int = Field(ge=0)
    error: str | None = None
    domain: str | None = None
    task_id: str
    model: str | None = None
    status: Literal["finished", "failed", "stopped", "error", "interrupted", "budget", "stuck"] = "finished"
    assisted: bool = False
    """Whether a person helped: an edited proposal, a takeover or a person's own steps (Results count
    such runs apart from the agent's own successes)."""
    kind: OutcomeKind | None = None
    """Why the run ended (:mod:`osw_studio.core.outcome`); None in results written before kinds."""
    usage: Usage | None = None
    """The tokens of every model call of the run, summed; None when no call reported any."""
    cost: float | None = None
    """What the run's model calls cost in the price's currency; None when a price is unknown."""
    limit: str | None = None
    """Why a budget or the loop guard ended the run (status ``budget`` or ``stuck``), when one did."""
