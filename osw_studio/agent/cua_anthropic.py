"""Claude's computer use through Anthropic's Messages API, as OSWorld's ``mm_agents/anthropic/`` runs it.

:class:`ClaudeAgent` is OSWorld's ``AnthropicAgent`` on Anthropic's own API with its run script's
defaults: the ``computer_20251124`` tool declared at 1280x720 (display 1) under the beta
``computer-use-2025-11-24`` and prompt caching's beta; every screenshot scaled down to 1280x720 and
every point scaled back to the screen (truncated, as there); thinking with a 2048-token budget
(``max_tokens`` raised above it when lower); ``max_tokens`` 3000. The whole conversation is sent each
step: the first screenshot and the task, each reply's blocks, then each ``tool_use`` answered with
``Success``, the last of a reply's (and any ``screenshot``) with the screen after the batch. The system
prompt and the three most recent user turns carry cache breakpoints as OSWorld places them; only the ten
most recent tool-result screenshots are kept, older ones dropped twenty at a time so the cache holds.

A reply's tool uses are one proposal, run in order. A reply without one ends the task (``done``); one
saying ``[INFEASIBLE]`` anywhere fails it. ``zoom`` (which OSWorld's agent cannot run) is answered with
the region cut from the full-resolution screen after the batch. What a person changed is told to the
model as a user message listing the tool inputs that really ran.

The system prompt is OSWorld's (``prompts: reference``: read at run time from
``$OSW_REFERENCE_SITE/mm_agents/anthropic/utils.py``, its date filled in as there) or our own.
"""

from __future__ import annotations

import ast
import asyncio
import base64
import copy
import hashlib
import io
import json
import os
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from osw_studio import __version__
from osw_studio.actions.claude_tools import parse_claude_action, render_claude_actions, zoom_region
from osw_studio.actions.coords import CoordinateSpace
from osw_studio.agent.base import Agent, Prediction, TokenCallback
from osw_studio.agent.clients.anthropic_messages import MessagesClient, MessagesReply
from osw_studio.agent.cua_openai import edit_note, prompt_info
from osw_studio.agent.images import prepare_image
from osw_studio.core.actions import Action, Done, Fail
from osw_studio.core.errors import ActionParseError
from osw_studio.core.observation import Observation
from osw_studio.core.step import StepRecord
from osw_studio.settings.model import ResolvedProfile

TOOL_TYPE = "computer_20251124"
COMPUTER_USE_BETA = "computer-use-2025-11-24"
PROMPT_CACHING_BETA = "prompt-caching-2024-07-31"
DISPLAY = (1280, 720)
"""The display size the tool is declared with; screenshots are scaled to it, points back from it."""
THINKING_BUDGET = 2048
KEEP_IMAGES = 10
"""Tool-result screenshots kept (OSWorld's ``only_n_most_recent_images``)."""
DROP_CHUNK = 20
"""Older screenshots are dropped this many at a time (OSWorld's threshold with caching on)."""
CACHE_BREAKPOINTS = 2
"""Cache breakpoints spent on the most recent user turns (the system prompt has its own)."""

OWN_SYSTEM_PROMPT = """You operate an Ubuntu desktop (x86_64) through the computer tool.
- The desktop may reach the internet.
- Chrome is the browser here; open it from its icon.
- Do not ask the user anything; act with the tools until the task is done.
- Scroll or zoom out before deciding that something is not on the screen.
- Send several computer actions in one reply when you can: each takes a while.
- When the task cannot be done (a missing application, a permission, a contradiction), write exactly
  "[INFEASIBLE]" in your reply.
- Today is {date}. The home folder is '/home/user'; the sudo password is 'password'."""
"""OSW Studio's own system prompt for the computer tool (``prompts: own``)."""


def _render_fstring(node: ast.JoinedStr) -> str | None:
    """An f-string of the reference whose only fields are ``datetime.today().strftime(<format>)``."""
    parts: list[str] = []
    for value in node.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            parts.append(value.value)
            continue
        if not isinstance(value, ast.FormattedValue):
            return None
        call = value.value
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "strftime"
            and len(call.args) == 1
            and isinstance(call.args[0], ast.Constant)
            and isinstance(call.args[0].value, str)
            and "today" in ast.unparse(call.func.value)
        ):
            return None
        parts.append(datetime.today().strftime(call.args[0].value))
    return "".join(parts)


def reference_system_prompt() -> tuple[str, str] | None:
    """OSWorld's Ubuntu system prompt for Claude and where it was read, or None when no tree holds it."""
    site = os.environ.get("OSW_REFERENCE_SITE")
    if not site:
        return None
    path = Path(site) / "mm_agents" / "anthropic" / "utils.py"
    if not path.is_file():
        return None
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "SYSTEM_PROMPT"
        ):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                text: str | None = node.value.value
            elif isinstance(node.value, ast.JoinedStr):
                text = _render_fstring(node.value)
            else:
                text = None
            if text is None:
                return None
            digest = hashlib.sha256(ast.unparse(node.value).encode()).hexdigest()
            return text, f"mm_agents/anthropic/utils.py:SYSTEM_PROMPT sha256={digest}"
    return None


def _image_block(png: bytes) -> dict[str, Any]:
    data = base64.b64encode(png).decode()
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


def _history_block(block: dict[str, Any]) -> dict[str, Any] | None:
    """A reply's block as it is sent back (an empty text block is dropped, as OSWorld drops it)."""
    kind = block.get("type")
    if kind == "text":
        return {"type": "text", "text": block["text"]} if block.get("text") else None
    if kind == "thinking":
        return {"type": "thinking", "thinking": block.get("thinking"), "signature": block.get("signature")}
    if kind == "tool_use":
        return {k: block[k] for k in ("id", "input", "name", "type") if k in block}
    return dict(block)


def mark_cache(messages: list[dict[str, Any]], budget: int = CACHE_BREAKPOINTS) -> None:
    """Put cache breakpoints on the latest user turns that fit ``budget`` blocks, as OSWorld places them.

    Walking back from the newest, a user turn whose block count fits what is left spends it and marks its
    last block; an older turn loses its mark, except the first turn (the task), which keeps it.
    """
    users = [m for m in messages if m["role"] == "user" and isinstance(m["content"], list)]
    left = budget
    for seen, message in enumerate(reversed(users), 1):
        content = message["content"]
        if left >= len(content):
            left -= len(content)
            content[-1]["cache_control"] = {"type": "ephemeral"}
        elif seen != len(users):
            content[-1].pop("cache_control", None)


def drop_old_images(messages: list[dict[str, Any]], keep: int = KEEP_IMAGES, chunk: int = DROP_CHUNK) -> None:
    """Drop the oldest tool-result screenshots beyond ``keep``, a whole multiple of ``chunk`` at a time."""
    results = [
        block
        for message in messages
        if isinstance(message["content"], list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    count = sum(
        1
        for r in results
        for part in r.get("content") or []
        if isinstance(part, dict) and part.get("type") == "image"
    )
    extra = count - keep
    extra -= extra % chunk
    for result in results:
        parts = result.get("content")
        if not isinstance(parts, list):
            continue
        kept = []
        for part in parts:
            if isinstance(part, dict) and part.get("type") == "image" and extra > 0:
                extra -= 1
                continue
            kept.append(part)
        result["content"] = kept


def crop_png(screenshot: bytes, box: tuple[int, int, int, int]) -> bytes:
    """The ``box`` of a screenshot at full resolution, fitted within the tool's display size, as PNG."""
    from PIL import Image

    with Image.open(io.BytesIO(screenshot)) as image:
        left, top, right, bottom = box
        width, height = image.size
        part = image.crop((max(0, left), max(0, top), min(width, right), min(height, bottom)))
        if part.width > DISPLAY[0] or part.height > DISPLAY[1]:
            part.thumbnail(DISPLAY, Image.Resampling.LANCZOS)
        out = io.BytesIO()
        part.save(out, format="PNG")
        return out.getvalue()


class ClaudeAgent(Agent):
    """Claude with the ``computer_20251124`` tool through the Messages API.

    Args:
        profile: The resolved settings profile (model, endpoint, ``max_tokens``).
        client: The Messages client (default: one made from the profile and ``api_key``).
        api_key: The key for the default client.
    """

    name = "claude"
    kind = "claude"

    def __init__(
        self, profile: ResolvedProfile, *, client: MessagesClient | None = None, api_key: str | None = None
    ) -> None:
        super().__init__()
        self.profile = profile
        self.client = client or MessagesClient.from_profile(profile, api_key=api_key)
        self.model_name = profile.model
        self.call_user_tries = profile.call_user_tries
        self.secrets = (api_key,) if api_key else ()
        found = reference_system_prompt() if profile.prompts == "reference" else None
        self.system_prompt = (
            found[0] if found else OWN_SYSTEM_PROMPT.format(date=datetime.today().strftime("%A, %B %d, %Y"))
        )
        self.prompt_info = prompt_info(found, profile.prompts, "mm_agents/anthropic/utils.py")
        self.messages: list[dict[str, Any]] = []
        self._uses: list[dict[str, Any]] = []  # the last reply's tool uses, answered by the next request
        self._notes: list[str] = []
        self._space: CoordinateSpace | None = None

    def run_info(self) -> dict[str, Any]:
        """The system prompt's source and the agent's setup."""
        return {
            "prompt": dict(self.prompt_info),
            "agent_setup": {
                "preset": self.profile.preset,
                "tool": TOOL_TYPE,
                "betas": [COMPUTER_USE_BETA, PROMPT_CACHING_BETA],
                "display": list(DISPLAY),
                "thinking_budget": THINKING_BUDGET,
                "max_tokens": self.max_tokens,
                "keep_images": KEEP_IMAGES,
            },
        }

    @property
    def max_tokens(self) -> int:
        """The profile's ``max_tokens``, above the thinking budget (OSWorld adds 500 when it is not)."""
        wanted = self.profile.max_tokens
        return wanted if wanted > THINKING_BUDGET else THINKING_BUDGET + 500

    def reset(self, task: Any = None) -> None:
        """Start a new conversation."""
        super().reset(task)
        self.messages = []
        self._uses = []
        self._notes = []

    async def aclose(self) -> None:
        """Close the client."""
        await self.client.aclose()

    def tools(self) -> list[dict[str, Any]]:
        """The computer tool at the declared display size."""
        width, height = DISPLAY
        return [
            {"name": "computer", "type": TOOL_TYPE, "display_width_px": width, "display_height_px": height,
             "display_number": 1}
        ]  # fmt: skip

    def request_params(self) -> dict[str, Any]:
        """Everything the request sends besides ``model`` (the betas go as the ``anthropic-beta`` header)."""
        return {
            "max_tokens": self.max_tokens,
            "messages": copy.deepcopy(self.messages),
            "system": [{"type": "text", "text": self.system_prompt, "cache_control": {"type": "ephemeral"}}],
            "tools": self.tools(),
            "betas": [COMPUTER_USE_BETA, PROMPT_CACHING_BETA],
            "thinking": {"type": "enabled", "budget_tokens": THINKING_BUDGET},
        }

    def add_turn(self, instruction: str, screen: bytes, shown: bytes) -> None:
        """This step's user turns: the task first, then the answer to each of the last reply's tool uses."""
        if not self.messages:
            self.messages.append(
                {"role": "user", "content": [_image_block(shown), {"type": "text", "text": instruction}]}
            )
        for index, use in enumerate(self._uses):
            raw = use.get("input")
            tool_input: dict[str, Any] = raw if isinstance(raw, dict) else {}
            content: list[dict[str, Any]] = [{"type": "text", "text": "Success"}]
            if tool_input.get("action") == "zoom":
                try:
                    content.append(_image_block(crop_png(screen, zoom_region(tool_input, self._space))))
                except ActionParseError:
                    content.append(_image_block(shown))
            elif tool_input.get("action") == "screenshot" or index == len(self._uses) - 1:
                content.append(_image_block(shown))
            result = {"type": "tool_result", "tool_use_id": use.get("id", ""), "content": content}
            self.messages.append({"role": "user", "content": [result]})
        if self._notes:
            self.messages.append(
                {"role": "user", "content": [{"type": "text", "text": "\n".join(self._notes)}]}
            )
        self._uses = []
        self._notes = []

    async def predict(
        self, instruction: str, observation: Observation, *, on_token: TokenCallback | None = None
    ) -> Prediction:
        """Send the conversation with this step's screen and read the reply's tool uses."""
        t0 = time.perf_counter()
        image = await asyncio.to_thread(prepare_image, observation.screenshot, size=DISPLAY, fmt="png")
        self._space = CoordinateSpace(
            screen=observation.size, mode="resized", image=DISPLAY, rounding="trunc"
        )
        self.add_turn(instruction, observation.screenshot, image.data)
        mark_cache(self.messages)
        drop_old_images(self.messages)
        params = self.request_params()
        timings = {"prepare": time.perf_counter() - t0}
        t1 = time.perf_counter()
        reply = await self.client.create(params, on_token=on_token)
        timings["model"] = time.perf_counter() - t1
        blocks = [b for b in (_history_block(block) for block in reply.content) if b is not None]
        self.messages.append({"role": "assistant", "content": blocks})
        return self.prediction(reply, blocks, timings)

    def prediction(
        self, reply: MessagesReply, blocks: list[dict[str, Any]], timings: dict[str, float]
    ) -> Prediction:
        """The step's proposal: every tool use's action, in order."""
        t0 = time.perf_counter()
        base = Prediction(
            response=response_text(reply),
            thought=reply.thinking or None,
            coordinate_mode="resized",
            usage=None if reply.usage is None else reply.usage.as_usage(),
            latency=reply.latency,
            timings=timings,
            request=None
            if reply.request is None
            else reply.request.model_copy(
                update={"prompt_source": f"osw-studio {__version__} {self.name} agent"}
            ),
        )
        uses = [b for b in blocks if b.get("type") == "tool_use"]
        actions: list[Action] = []
        try:
            for index, use in enumerate(uses):
                try:
                    actions.extend(parse_claude_action(use.get("input") or {}, self._space))
                except ActionParseError as exc:
                    raise ActionParseError(f"tool use {index + 1} of {len(uses)}: {exc}") from None
        except ActionParseError as exc:
            base.error = str(exc)
            self.messages.pop()  # asked again from the same conversation, as OSWorld retries
            timings["parse"] = time.perf_counter() - t0
            return base
        if "[INFEASIBLE]" in response_text(reply):
            actions = [Fail(message=reply.text or None)]
        elif not uses:
            actions = [Done(message=reply.text or None)]
        base.actions = actions
        self._uses = uses
        timings["parse"] = time.perf_counter() - t0
        return base

    def record(self, step: StepRecord) -> None:
        """Keep the step; when a person changed what ran, tell the model so in the next request."""
        super().record(step)
        note = edit_note(step, lambda actions: render_claude_actions(actions, self._space))
        if note:
            self._notes.append(note)


def response_text(reply: MessagesReply) -> str:
    """The reply as the step shows it: thinking, text, then each tool use's input."""
    parts = [reply.thinking, reply.text]
    parts += [f"[{u.get('name')}: {json.dumps(u.get('input'))}]" for u in reply.tool_uses]
    return "\n".join(p for p in parts if p)
