"""The ``evocua`` agent: EvoCUA's ``computer_use`` tool calls, as OSWorld's ``mm_agents/evocua/`` asks (S2).

The request has the shape of OSWorld's ``EvoCUAAgent`` in its ``S2`` prompt style, the one its run script
uses by default: a system message describing the ``computer_use`` tool; for the last ``history_window``
steps each step's screenshot as a user turn (the first followed by the instruction text) and its reply as
an assistant turn; then the current screenshot (with the instruction text on the first step). The
instruction text lists, as ``Step n: ...``, the low-level instructions of the steps older than the window
(each reply's ``Action:`` line, else ``Performing <call> action``). Screenshots are resized (bicubic) to
the smart-resize of factor 32 (at most 16*16*4*12800 pixels) and sent as PNG; the model's numbers are
999ths of the screen (``coordinate_type="relative"``, ``rel999``) or, with ``abs``, pixels of the image
sent, truncated. ``temperature``, ``top_p`` and ``max_tokens`` are sent; a ``terminate`` whose status is
``failure`` fails the task. With ``prompts: reference`` the prompt is OSWorld's own, evaluated at run
time from its source (:func:`osw_studio.agent.reference.evocua_prompt`).
"""

from __future__ import annotations

import json
from typing import Any

from osw_studio.actions import CoordinateSpace
from osw_studio.actions.qwen3vl import parse_qwen3vl, tool_calls
from osw_studio.agent.model_agent import ModelAgent, ReplyParser
from osw_studio.agent.qwen3vl import Qwen3VLAgent
from osw_studio.agent.reference import CodePrompt, evocua_prompt
from osw_studio.core.actions import Action, Done, Fail


def _gives_up(text: str) -> bool:
    """Whether a reply's ``computer_use`` calls include ``terminate`` with the status ``failure``."""
    for raw in tool_calls(text)[1]:
        try:
            call = json.loads(raw)
        except ValueError:
            continue
        args = call.get("arguments") if isinstance(call, dict) else None
        if isinstance(args, dict) and args.get("action") == "terminate":
            return str(args.get("status", "success")).lower() == "failure"
    return False


class EvoCUAAgent(Qwen3VLAgent):
    """EvoCUA (see the module docs)."""

    name = kind = "evocua"

    def load_reference(self) -> CodePrompt | None:
        """OSWorld's EvoCUA S2 prompt code (None: not found), evaluated as the Qwen3-VL agent's is."""
        return evocua_prompt()

    def sampling(self, temperature: float | None) -> dict[str, Any]:
        """``temperature``, ``top_p`` and ``max_tokens``, as OSWorld's agent sends."""
        return ModelAgent.sampling(self, temperature)

    def reply_parser(self, space: CoordinateSpace) -> ReplyParser:
        """Reads ``Action: ...`` and ``computer_use`` tool calls; ``terminate`` with ``failure`` fails."""

        def parse(text: str) -> tuple[str | None, list[Action]]:
            instruction, actions = parse_qwen3vl(text, space)
            if _gives_up(text):
                actions = [Fail(message=a.message) if isinstance(a, Done) else a for a in actions]
            return instruction, actions

        return parse
