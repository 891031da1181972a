"""What a model's tokens cost: a :class:`Price` per million tokens, and the cost of a call's usage.

A price a person has not entered is unknown, and a cost computed from an unknown price is unknown too
(None): nothing here guesses. Input tokens read from the provider's prompt cache are charged at the
cached price; reasoning tokens are part of the output and charged as output, as the APIs bill them.

Examples:
    >>> from osw_studio.core.step import Usage
    >>> price = Price(input=2.5, cached_input=1.25, output=10.0)
    >>> price.cost(Usage(prompt_tokens=1000, completion_tokens=100, cached_tokens=400))
    0.003
    >>> Price(input=2.5).cost(Usage(prompt_tokens=1000, completion_tokens=100)) is None
    True
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from osw_studio.core.step import Usage

PER = 1_000_000
"""Prices are per this many tokens."""


class Price(BaseModel):
    """A model's price per million tokens; a missing number is unknown.

    Attributes:
        input: Per million input tokens.
        cached_input: Per million input tokens read from the prompt cache.
        output: Per million output tokens (reasoning tokens included).
    """

    model_config = ConfigDict(extra="forbid")

    input: float | None = Field(default=None, ge=0)
    cached_input: float | None = Field(default=None, ge=0)
    output: float | None = Field(default=None, ge=0)

    @property
    def known(self) -> bool:
        """Whether the input and output prices are both given."""
        return self.input is not None and self.output is not None

    def cost(self, usage: Usage | None) -> float | None:
        """What ``usage`` costs, or None when the usage or a price it needs is unknown.

        >>> Price(input=1.0, output=2.0).cost(Usage(prompt_tokens=10, completion_tokens=5, cached_tokens=0))
        2e-05
        >>> Price(input=1.0, output=2.0).cost(Usage(prompt_tokens=10, cached_tokens=3)) is None
        True
        """
        if usage is None or self.input is None or self.output is None:
            return None
        cached = usage.cached_tokens or 0
        if cached and self.cached_input is None:
            return None
        uncached = max(0, usage.prompt_tokens - cached)
        total = (
            uncached * self.input
            + cached * (self.cached_input or 0.0)
            + usage.completion_tokens * self.output
        )
        return round(total / PER, 9)


def total_cost(costs: list[float | None]) -> float | None:
    """The sum of calls' costs; None when any is unknown (a partial sum would read as the whole).

    >>> total_cost([0.5, 0.25]), total_cost([0.5, None]), total_cost([])
    (0.75, None, None)
    """
    if not costs or any(c is None for c in costs):
        return None
    return round(sum(c for c in costs if c is not None), 9)
