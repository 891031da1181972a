"""What the vendor API clients share: where they call, how they retry and stream, the SDK they close."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

from osw_studio.agent.retry import RetryCallback

if TYPE_CHECKING:
    from osw_studio.settings.model import ResolvedProfile

NO_KEY = "no-key"
"""The SDKs insist on a key; local servers ignore this one."""


class VendorClient:
    """One model at one vendor API, through that vendor's SDK client ``sdk`` (its own retries off).

    Args:
        base_url: The API's base URL.
        model: The model id.
        api_key: The key (None: none is sent); only whether there is one is kept, for messages.
        timeout: Seconds the endpoint may stay silent.
        max_retries: Retries after a retryable failure (see :mod:`osw_studio.agent.clients.retry`).
        stream: Stream replies (needed for the live callbacks).
        profile: The profile name, for messages.
        on_retry: Told about each retry and its wait.
    """

    def __init__(
        self,
        sdk: Any,
        *,
        base_url: str,
        model: str,
        api_key: str | None,
        timeout: float,
        max_retries: int,
        stream: bool,
        profile: str | None,
        on_retry: RetryCallback | None,
    ) -> None:
        self._client = sdk
        self.base_url = base_url
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.stream = stream
        self.profile = profile
        self.on_retry = on_retry
        self.has_key = bool(api_key)

    @classmethod
    def from_profile(cls, profile: ResolvedProfile, *, api_key: str | None = None, **kwargs: Any) -> Self:
        """A client for a resolved settings profile."""
        return cls(
            base_url=profile.base_url,
            model=profile.model,
            api_key=api_key,
            timeout=profile.timeout,
            max_retries=profile.max_retries,
            profile=profile.name,
            **kwargs,
        )

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._client.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
