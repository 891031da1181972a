"""Token counts of one call to a vendor API, in one typed shape whatever the API names them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from osw_studio.core.step import Usage


@dataclass(frozen=True)
class TokenUsage:
    """What one call used, as the API reported it.

    Attributes:
        input_tokens: Tokens of the request (OpenAI ``input_tokens``, Anthropic ``input_tokens``).
        output_tokens: Tokens generated, reasoning included.
        reasoning_tokens: Of the output, the tokens spent on hidden reasoning.
        cached_tokens: Of the input, the tokens read from the provider's prompt cache.
        cache_write_tokens: Of the input, the tokens written to the prompt cache (Anthropic).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Input and output together."""
        return self.input_tokens + self.output_tokens

    def as_usage(self) -> Usage:
        """The step's usage record (prompt, completion and total tokens).

        >>> TokenUsage(input_tokens=10, output_tokens=3).as_usage().total_tokens
        13
        """
        return Usage(
            prompt_tokens=self.input_tokens,
            completion_tokens=self.output_tokens,
            total_tokens=self.total_tokens,
        )

    @classmethod
    def from_responses(cls, usage: Any) -> TokenUsage | None:
        """The usage of an OpenAI Responses reply (``input_tokens_details.cached_tokens``...).

        >>> TokenUsage.from_responses({"input_tokens": 5, "output_tokens": 2,
        ...     "output_tokens_details": {"reasoning_tokens": 1}}).reasoning_tokens
        1
        """
        if usage is None:
            return None
        data = usage if isinstance(usage, dict) else usage.model_dump()
        inputs = data.get("input_tokens_details") or {}
        outputs = data.get("output_tokens_details") or {}
        return cls(
            input_tokens=int(data.get("input_tokens") or 0),
            output_tokens=int(data.get("output_tokens") or 0),
            reasoning_tokens=int(outputs.get("reasoning_tokens") or 0),
            cached_tokens=int(inputs.get("cached_tokens") or 0),
        )
