"""What an evaluation found: the score, and per metric the getters' outputs and the metric's verdict.

The task-authoring UI shows this as "Check evaluator now", so every part says what it saw.

Examples:
    >>> summarize("/tmp/cache/report.xlsx")
    "'/tmp/cache/report.xlsx'"
    >>> summarize("x" * 300)[-14:]
    'x… (300 chars)'
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

_LIMIT = 200


def summarize(value: Any) -> str:
    """A short, readable rendering of a getter's output (paths, strings, dicts, lists)."""
    text = repr(value)
    if len(text) > _LIMIT:
        size = f"{len(value)} chars" if isinstance(value, str | bytes) else f"{len(text)} chars as text"
        text = f"{text[:_LIMIT]}… ({size})"
    return text


class GetterOutcome(BaseModel):
    """One getter call: which getter, and a summary of what it returned (or why it failed)."""

    role: str = Field(description="'result' or 'expected'")
    type: str
    summary: str
    missing: bool = Field(default=False, description="the file it should fetch does not exist")


class MetricOutcome(BaseModel):
    """One metric of the evaluator: its inputs' summaries and its verdict."""

    index: int
    func: str
    score: float | None = Field(default=None, description="None when the metric was not reached")
    reason: str = ""
    getters: list[GetterOutcome] = Field(default_factory=list)
    options: dict[str, Any] = Field(default_factory=dict)
    environment: str = Field(
        default="",
        description="a cause of this score that points at the environment, not the agent (a guest that "
        "failed a command, a missing cache or expected file); empty when there is none",
    )


class EvaluationResult(BaseModel):
    """The score of one episode's end state, and how it was reached."""

    task_id: str
    score: float = Field(ge=0.0, le=1.0)
    conj: str | None = None
    reason: str
    metrics: list[MetricOutcome] = Field(default_factory=list)
    environment: list[str] = Field(
        default_factory=list,
        description="causes of the score that point at the environment rather than the agent, one per "
        "metric concerned ('func[i] name: why'); the score stands as OSWorld gives it, these say why",
    )
    scored_by: dict[str, str] = Field(
        default_factory=dict,
        description="who scored: evaluator (osw-studio or osworld) and version; for osworld also reference "
        "(package or checkout), path and digest (of OSWorld's evaluator sources)",
    )

    @property
    def success(self) -> bool:
        """Whether the task counts as solved (OSWorld: a score of 1)."""
        return self.score >= 1.0
