"""The recorded requests of the computer-use agents as chat tool-call conversations, for the chat exports.

A GPT-5.4 or computer-use-preview step records its Responses API ``input`` as sent: input items, not chat
messages. The chat exports need messages, so each is rewritten: a user message's ``input_text`` parts are
``text`` parts and its screenshot an image part; a ``computer_call`` is an assistant turn with one tool
call of the function ``computer`` whose arguments are ``{"actions": [...]}`` in the tool's own shape;
its ``computer_call_output`` is a ``tool`` message holding the screen after it; reasoning items are left
out. GPT-5.4's requests are chained (each sends only what is new), so its conversation is built up step
by step, each step's assistant turn written from what the step proposed.

A Claude step records its Messages API ``messages``, the whole conversation: :func:`messages_chat` writes
each reply as an assistant turn (its text; its thinking left out) with a tool call of ``computer`` per
``tool_use`` (the arguments its input, in the tool's own shape), and each ``tool_result`` as a ``tool``
message (its text and the screen after the batch).

Examples:
    >>> from osw_studio.core.actions import Click
    >>> convo = ToolCallConversation(chained=True)
    >>> first = convo.prompt(StepRecord(index=1, proposed=[Click(x=5, y=6)]),
    ...                      [{"role": "user", "content": [{"type": "input_text", "text": "Save."}]}])
    >>> first
    [{'role': 'user', 'content': [{'type': 'text', 'text': 'Save.'}]}]
    >>> shot = {"type": "image_ref", "file": "step_0002.png"}
    >>> answer = {"type": "computer_call_output", "call_id": "c1", "output": shot}
    >>> second = convo.prompt(StepRecord(index=2), [answer])
    >>> second[1]["tool_calls"][0]["function"]["arguments"]
    '{"actions": [{"type": "click", "button": "left", "x": 5, "y": 6}]}'
    >>> second[2]
    {'role': 'tool', 'tool_call_id': 'c1', 'content': [{'type': 'image_ref', 'file': 'step_0002.png'}]}
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from osw_studio.actions.cua_tools import render_openai_actions
from osw_studio.core import agent_specs
from osw_studio.core.step import StepRecord
from osw_studio.trajectory.requests import IMAGE_REF

__all__ = [
    "MESSAGES_AGENTS",
    "RESPONSES_AGENTS",
    "ToolCallConversation",
    "chat_messages",
    "messages_chat",
    "tool_call",
]

RESPONSES_AGENTS: dict[str, bool] = {s.id: s.chained for s in agent_specs.SPECS if s.api == "responses"}
"""The agents whose requests are Responses API input, and whether each chains its requests."""

MESSAGES_AGENTS = frozenset(agent_specs.MESSAGES_AGENTS)
"""The agents whose requests are Anthropic Messages API ``messages``."""

TOOL = "computer"
"""The function name the tool calls take in a chat conversation."""


def tool_call(call_id: str, actions: list[dict[str, Any]]) -> dict[str, Any]:
    """One chat tool call of the computer tool."""
    arguments = json.dumps({"actions": actions}, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": TOOL, "arguments": arguments}}


def _part(part: Any) -> Any:
    if not isinstance(part, Mapping):
        return part
    kind = part.get("type")
    if kind in ("input_text", "output_text"):
        return {"type": "text", "text": part.get("text", "")}
    if kind == IMAGE_REF:
        return {k: v for k, v in part.items() if k != "sent_as"}
    if kind in ("input_image", "computer_screenshot") and isinstance(part.get("image_url"), str):
        return {"type": "image_url", "image_url": {"url": part["image_url"]}}
    return dict(part)


def chat_messages(items: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Responses API items as chat messages (see the module docs)."""
    out: list[dict[str, Any]] = []
    for item in items:
        kind = item.get("type")
        if "role" in item and kind in (None, "message"):
            content = item.get("content")
            parts = [_part(p) for p in content] if isinstance(content, list) else content
            out.append({"role": item["role"], "content": parts})
        elif kind == "computer_call":
            actions = item.get("actions")
            if actions is None:
                actions = [item["action"]] if item.get("action") is not None else []
            call = tool_call(str(item.get("call_id", "")), list(actions))
            last = out[-1] if out else None
            if last is not None and last.get("role") == "assistant" and "tool_calls" not in last:
                last["tool_calls"] = [call]  # the reply's message and its call are one turn
            else:
                out.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif kind == "computer_call_output":
            output = item.get("output")
            out.append(
                {"role": "tool", "tool_call_id": str(item.get("call_id", "")), "content": [_part(output)]}
            )
    return out


class ToolCallConversation:
    """One run's conversation, step by step (``chained``: each request sent only what was new).

    Args:
        chained: Whether the requests were chained with ``previous_response_id`` (GPT-5.4).
    """

    def __init__(self, *, chained: bool) -> None:
        self.chained = chained
        self._history: list[dict[str, Any]] = []
        self._last: StepRecord | None = None

    def prompt(self, step: StepRecord, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The chat conversation step ``step`` was decided from, its request's ``items`` rewritten."""
        converted = chat_messages(items)
        if not self.chained:
            return converted
        if self._last is not None:
            calls = [m["tool_call_id"] for m in converted if m.get("role") == "tool"]
            self._history.append(_assistant_turn(self._last, calls))
        self._history.extend(converted)
        self._last = step
        return list(self._history)


def _assistant_turn(step: StepRecord, call_ids: list[str]) -> dict[str, Any]:
    """What the model said at ``step``: its thought and, when the next request answered it, its call."""
    turn: dict[str, Any] = {"role": "assistant", "content": step.thought or ""}
    if call_ids:
        turn["tool_calls"] = [tool_call(call_ids[0], render_openai_actions(step.proposed, None))]
    else:
        turn["content"] = step.response or step.thought or ""
    return turn


def messages_chat(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Messages API messages as chat messages with tool calls (see the module docs).

    >>> use = {"type": "tool_use", "id": "t1", "name": "computer", "input": {"action": "wait"}}
    >>> result = {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "Success"}]}
    >>> chat = messages_chat([{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}])
    >>> chat[0]["tool_calls"][0]["function"]["arguments"], chat[1]["role"], chat[1]["tool_call_id"]
    ('{"action": "wait"}', 'tool', 't1')
    """  # noqa: E501
    out: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content")
        if not isinstance(content, list):
            out.append({"role": message.get("role"), "content": content})
            continue
        if message.get("role") == "assistant":
            texts = [str(b.get("text", "")) for b in content if b.get("type") == "text"]
            turn: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts)}
            calls = [
                {"id": str(b.get("id", "")), "type": "function",
                 "function": {"name": str(b.get("name", TOOL)),
                              "arguments": json.dumps(b.get("input") or {}, ensure_ascii=False)}}
                for b in content
                if b.get("type") == "tool_use"
            ]  # fmt: skip
            if calls:
                turn["tool_calls"] = calls
            out.append(turn)
            continue
        parts: list[Any] = []
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "tool_result":
                inner = block.get("content")
                inner_parts = [_part(p) for p in inner] if isinstance(inner, list) else [inner]
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": str(block.get("tool_use_id", "")),
                        "content": inner_parts,
                    }
                )
            else:
                parts.append(_part(block))
        if parts:
            out.append({"role": message.get("role"), "content": parts})
    return out
