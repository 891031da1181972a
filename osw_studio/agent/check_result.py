"""What a ``check-model`` probe found: shared by the chat probe and the computer-use API probe."""

from __future__ import annotations

from dataclasses import dataclass, field

from osw_studio.agent.errors import Reason


@dataclass(frozen=True)
class CheckResult:
    """What :func:`check_model` found.

    Attributes:
        ok: The endpoint answered the probe.
        base_url: The URL that was checked.
        model: The model that was asked.
        reply: The model's answer to the probe (when ok).
        latency: Seconds the probe took (when ok).
        reason: What failed (when not ok).
        message: The failure, in one sentence.
        hint: What to do about it.
        suggested_base_url: A variant of the base URL that does answer (after a 404).
        models: The models the endpoint lists (after an unknown model), when it lists them.
        key_source: Where the key came from (``keyring``, ``$OPENAI_API_KEY``...), or None.
    """

    ok: bool
    base_url: str
    model: str
    reply: str | None = None
    latency: float | None = None
    reason: Reason | None = None
    message: str | None = None
    hint: str | None = None
    suggested_base_url: str | None = None
    models: list[str] = field(default_factory=list)
    key_source: str | None = None
