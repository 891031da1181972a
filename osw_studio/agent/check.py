"""One-click diagnosis of a model endpoint: send a tiny request and explain whatever goes wrong.

The CLI's ``osw-studio check-model`` and the settings dialog's *Check* button both use
:func:`check_model`. On a 404 it tries the base URL with and without ``/v1`` and names the one that
answers; on an unknown model it lists the models the endpoint serves.
"""

from __future__ import annotations

from collections.abc import Callable

from osw_studio.agent.check_result import CheckResult as CheckResult
from osw_studio.agent.errors import ModelCallError
from osw_studio.agent.model_client import ModelClient
from osw_studio.settings.model import ResolvedProfile
from osw_studio.settings.url import url_variants

PROBE_MESSAGES = [{"role": "user", "content": "Reply with the single word OK."}]


async def check_model(
    profile: ResolvedProfile,
    *,
    api_key: str | None,
    key_source: str | None = None,
    wait_s: float | None = None,
) -> CheckResult:
    """Probe ``profile``'s endpoint and model with a tiny request, without retries.

    Args:
        profile: The resolved profile to check.
        api_key: Its key (None: send none).
        key_source: Where the key came from, to report.
        wait_s: Seconds to wait for an answer (default: the profile's timeout, at most 30).
    """
    wait = wait_s if wait_s is not None else min(profile.timeout, 30.0)
    from osw_studio.agent.check_cua import check_responses
    from osw_studio.core.agent_specs import MESSAGES_AGENTS, RESPONSES_AGENTS

    if profile.agent in RESPONSES_AGENTS:
        return await check_responses(profile, api_key=api_key, key_source=key_source, wait=wait)
    from osw_studio.agent.check_cua import check_messages

    if profile.agent in MESSAGES_AGENTS:
        return await check_messages(profile, api_key=api_key, key_source=key_source, wait=wait)

    def client(base_url: str) -> ModelClient:
        return ModelClient(
            base_url=base_url,
            model=profile.model,
            api_key=api_key,
            timeout=wait,
            max_retries=0,
            stream=False,
            profile=profile.name,
        )

    async with client(profile.base_url) as probe:
        try:
            reply = await probe.complete(PROBE_MESSAGES, max_tokens=8, temperature=0)
        except ModelCallError as exc:
            error = exc
        else:
            return CheckResult(
                ok=True,
                base_url=profile.base_url,
                model=profile.model,
                key_source=key_source,
                reply=reply.text.strip(),
                latency=reply.latency,
            )
        models: list[str] = []
        suggestion: str | None = None
        if error.reason == "unknown_model":
            try:
                models = await probe.list_models()
            except ModelCallError:
                models = []
        elif error.reason == "not_found":
            suggestion = await _find_answering_url(profile.base_url, client)
    hint = error.hint
    if suggestion:
        hint = f"the API answers at {suggestion}: set base_url to it"
    elif models:
        hint = f"the endpoint serves: {', '.join(models)}"
    return CheckResult(
        ok=False,
        reason=error.reason,
        message=f"{error.where}: {error.message}" if error.where else error.message,
        hint=hint,
        suggested_base_url=suggestion,
        models=models,
        base_url=profile.base_url,
        model=profile.model,
        key_source=key_source,
    )


async def _find_answering_url(base_url: str, client: Callable[[str], ModelClient]) -> str | None:
    """The first variant of ``base_url`` where the chat API exists (any answer but a path 404)."""
    for candidate in url_variants(base_url):
        async with client(candidate) as probe:
            try:
                await probe.complete(PROBE_MESSAGES, max_tokens=8, temperature=0)
            except ModelCallError as exc:
                if exc.reason in (
                    "not_found",
                    "refused",
                    "dns",
                    "tls",
                    "connection",
                    "timeout",
                    "invalid_reply",
                ):
                    continue
            return candidate
    return None
