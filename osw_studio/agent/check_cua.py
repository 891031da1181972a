"""``check-model`` for the computer-use APIs: probe with the agent's own tool, so a wrong tool version shows.

A GPT-5.4 profile is probed through the Responses API with the ``computer`` tool: a wrong key, base URL
or model is diagnosed as for chat endpoints, and a model that does not take the tool says
``unsupported_tool`` with the preset to pick.
"""

from __future__ import annotations

from typing import Any

from osw_studio.agent.check_result import CheckResult
from osw_studio.agent.clients.responses import ResponsesClient
from osw_studio.agent.errors import ModelCallError
from osw_studio.settings.model import ResolvedProfile
from osw_studio.settings.url import url_variants

RESPONSES_AGENTS: dict[str, list[dict[str, Any]]] = {
    "gpt54": [{"type": "computer"}],
    "openai_cua": [
        {
            "type": "computer_use_preview",
            "display_width": 1920,
            "display_height": 1080,
            "environment": "linux",
        }
    ],
}
"""Agents that speak the Responses API, and the tools their probe sends."""

PROBE = "Reply with the single word OK."


async def check_responses(
    profile: ResolvedProfile, *, api_key: str | None, key_source: str | None, wait: float
) -> CheckResult:
    """Probe a Responses API endpoint with the agent's tool definition, without retries."""
    tools = RESPONSES_AGENTS[profile.agent]

    def client(base_url: str) -> ResponsesClient:
        return ResponsesClient(
            base_url=base_url, model=profile.model, api_key=api_key, timeout=wait, max_retries=0,
            stream=False, profile=profile.name,
        )  # fmt: skip

    params = {"input": PROBE, "tools": tools, "truncation": "auto", "max_output_tokens": 16}
    async with client(profile.base_url) as probe:
        try:
            reply = await probe.create(params)
        except ModelCallError as exc:
            error = exc
        else:
            return CheckResult(
                ok=True, base_url=profile.base_url, model=profile.model, key_source=key_source,
                reply=reply.text.strip() or "(no text; the model answered)", latency=reply.latency,
            )  # fmt: skip
        models: list[str] = []
        suggestion: str | None = None
        if error.reason == "unknown_model":
            try:
                models = await probe.list_models()
            except ModelCallError:
                models = []
    if error.reason == "not_found":
        for candidate in url_variants(profile.base_url):
            async with client(candidate) as other:
                try:
                    await other.create(params)
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
                suggestion = candidate
                break
    hint = error.hint
    if suggestion:
        hint = f"the API answers at {suggestion}: set base_url to it"
    elif models:
        hint = f"the endpoint serves: {', '.join(models)}"
    return CheckResult(
        ok=False, reason=error.reason,
        message=f"{error.where}: {error.message}" if error.where else error.message,
        hint=hint, suggested_base_url=suggestion, models=models, base_url=profile.base_url,
        model=profile.model, key_source=key_source,
    )  # fmt: skip
