"""``check-model`` for the computer-use APIs: probe with the agent's own tool, so a wrong tool version shows.

A GPT-5.4 profile is probed through the Responses API with the ``computer`` tool: a wrong key, base URL
or model is diagnosed as for chat endpoints, and a model that does not take the tool says
``unsupported_tool`` with the preset to pick. A Claude profile is probed through the Messages API with
the ``computer_20251124`` tool and its beta header, so a refused tool version or beta says so too.
"""

from __future__ import annotations

from typing import Any

from osw_studio.agent.check_result import CheckResult
from osw_studio.agent.clients.responses import ResponsesClient
from osw_studio.agent.errors import ModelCallError
from osw_studio.core import agent_specs
from osw_studio.settings.model import ResolvedProfile
from osw_studio.settings.url import url_variants

RESPONSES_TOOLS: dict[str, list[dict[str, Any]]] = {
    "computer": [{"type": "computer"}],
    "computer_use_preview": [
        {
            "type": "computer_use_preview",
            "display_width": 1920,
            "display_height": 1080,
            "environment": "linux",
        }
    ],
}
"""The Responses API's computer tools (an agent's ``AgentSpec.tool``), as the probe sends them."""

PROBE = "Reply with the single word OK."

MESSAGES_TOOLS: dict[str, tuple[list[dict[str, Any]], list[str]]] = {
    "computer_20251124": (
        [{"name": "computer", "type": "computer_20251124", "display_width_px": 1280,
          "display_height_px": 720, "display_number": 1}],
        ["computer-use-2025-11-24"],
    ),
}  # fmt: skip
"""The Messages API's computer tools (an agent's ``AgentSpec.tool``), with the betas the probe sends."""


def _tool(profile: ResolvedProfile) -> str:
    tool = agent_specs.spec(profile.agent).tool
    if tool is None:
        raise ValueError(f"agent {profile.agent!r} declares no computer-use tool")
    return tool


async def check_messages(
    profile: ResolvedProfile, *, api_key: str | None, key_source: str | None, wait: float
) -> CheckResult:
    """Probe a Messages API endpoint with the agent's tool and beta header, without retries."""
    from osw_studio.agent.clients.anthropic_messages import MessagesClient

    tools, betas = MESSAGES_TOOLS[_tool(profile)]
    params = {
        "max_tokens": 16,
        "messages": [{"role": "user", "content": [{"type": "text", "text": PROBE}]}],
        "tools": tools,
        "betas": betas,
    }
    async with MessagesClient(
        base_url=profile.base_url, model=profile.model, api_key=api_key, timeout=wait, max_retries=0,
        stream=False, profile=profile.name,
    ) as probe:  # fmt: skip
        try:
            reply = await probe.create(params)
        except ModelCallError as error:
            hint = error.hint
            if error.reason == "not_found" and profile.base_url.rstrip("/").endswith("/v1"):
                hint = f"the SDK adds /v1 itself: set base_url to {profile.base_url.rstrip('/')[:-3]}"
            return CheckResult(
                ok=False, reason=error.reason,
                message=f"{error.where}: {error.message}" if error.where else error.message,
                hint=hint, base_url=profile.base_url, model=profile.model, key_source=key_source,
            )  # fmt: skip
    return CheckResult(
        ok=True, base_url=profile.base_url, model=profile.model, key_source=key_source,
        reply=reply.text.strip() or "(no text; the model answered)", latency=reply.latency,
    )  # fmt: skip


async def check_responses(
    profile: ResolvedProfile, *, api_key: str | None, key_source: str | None, wait: float
) -> CheckResult:
    """Probe a Responses API endpoint with the agent's tool definition, without retries."""
    tools = RESPONSES_TOOLS[_tool(profile)]

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
