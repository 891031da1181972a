"""OpenAI's computer-use models through the Responses API, as OSWorld runs them.

:class:`GPT54Agent` is ``mm_agents/gpt54_agent.py`` with its run script's defaults: the GA
``{"type": "computer"}`` tool, whose ``computer_call`` carries a batch of ``actions``; reasoning effort
``xhigh`` with a concise summary; ``truncation: auto``; no parallel tool calls; each request chained to
the last with ``previous_response_id``, so only what is new is sent: the task and the first screenshot,
then the screenshot after each batch as the call's ``computer_call_output`` (``detail: original``), its
pending safety checks acknowledged. A batch is one proposal: shown and approved as one, run in order,
and answered with the screen after its last action. A reply without a computer call ends the task
(``done``), or ``fail`` when its message says the task is infeasible, as OSWorld's run ends it.

The instructions are OSWorld's (``prompts: reference``, read at run time from the ``mm_agents`` tree
``$OSW_REFERENCE_SITE`` names) or our own. What a person changed is written back in the tool's shape: the
call is answered with the screen as it is, and a user message lists the actions that really ran.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from osw_studio import __version__
from osw_studio.actions.coords import CoordinateSpace
from osw_studio.actions.cua_tools import parse_openai_actions, render_openai_actions
from osw_studio.agent.base import Agent, Prediction, TokenCallback
from osw_studio.agent.clients.responses import ResponsesClient, ResponsesReply
from osw_studio.agent.images import PreparedImage, prepare_image
from osw_studio.core.actions import Action, Done, Fail
from osw_studio.core.errors import ActionParseError
from osw_studio.core.observation import Observation
from osw_studio.core.step import StepRecord
from osw_studio.settings.model import ResolvedProfile

PASSWORD = "password"
"""The guest's sudo password, told to the model (OSWorld's VMs outside AWS)."""

OWN_INSTRUCTIONS = """
Working notes:
- This is a {PLATFORM} desktop; it may reach the internet.
- When a command needs sudo, the password is "{CLIENT_PASSWORD}".
- Today is {CURRENT_DATE}; the user's home folder is "{HOME_DIR}".
- Keep to the application or site that is already open for the task where you can.
- Use Chrome rather than another browser unless the task names one.
- Do not ask for confirmation; act.
- Look for hidden content by scrolling or zooming out before concluding it is not there.
- Put several GUI actions into one computer call when you can.
- When the task cannot be done (an application or a permission is missing, the request contradicts
  itself, or something else blocks it for good), answer with exactly "[INFEASIBLE]".
"""
"""OSW Studio's own instructions for the computer tool (``prompts: own``)."""

INFEASIBLE_WORDS = (
    "[infeasible]",
    "infeasible",
    "unfeasible",
    "impossible",
    "cannot be done",
    "not feasible",
)
"""A final message holding one of these ends the task as ``fail`` (OSWorld ends the run there too)."""


def reference_instructions(module: str = "gpt54_agent.py") -> tuple[str, str] | None:
    """OSWorld's instructions of an agent module and where they were read, or None when no tree holds it."""
    import hashlib
    import os
    from pathlib import Path

    from osw_studio.agent.reference import _constants

    site = os.environ.get("OSW_REFERENCE_SITE")
    if not site:
        return None
    path = Path(site) / "mm_agents" / module
    if not path.is_file():
        return None
    text = _constants(path).get("OPERATOR_PROMPT")
    if text is None:
        return None
    return (
        text,
        f"mm_agents/{module}:OPERATOR_PROMPT sha256={hashlib.sha256(text.encode()).hexdigest()}",
    )


def prompt_info(found: tuple[str, str] | None, prompts: str, wanted: str) -> dict[str, Any]:
    """Where an agent's prompt came from: the reference (``found``: its text and source) or our own."""
    if found:
        return {"source": found[1], "faithful": True}
    info: dict[str, Any] = {"source": "own", "faithful": False}
    if prompts == "reference":
        info["reason"] = f"no {wanted} under $OSW_REFERENCE_SITE"
    return info


class GPT54Agent(Agent):
    """GPT-5.4 with the ``computer`` tool, chained through the Responses API.

    Args:
        profile: The resolved settings profile (model, endpoint, reasoning effort, safety-check policy).
        client: The Responses client (default: one made from the profile and ``api_key``).
        api_key: The key for the default client.
    """

    name = "gpt54"
    kind = "gpt54"
    tool_type = "computer"
    reference_module = "gpt54_agent.py"

    def __init__(
        self, profile: ResolvedProfile, *, client: ResponsesClient | None = None, api_key: str | None = None
    ) -> None:
        super().__init__()
        self.profile = profile
        self.client = client or ResponsesClient.from_profile(profile, api_key=api_key)
        self.model_name = profile.model
        self.call_user_tries = profile.call_user_tries
        self.secrets = (api_key,) if api_key else ()
        self.reasoning_effort = profile.reasoning_effort or "xhigh"
        self.safety_checks = profile.safety_checks
        found = reference_instructions(self.reference_module) if profile.prompts == "reference" else None
        self.instructions_template = found[0] if found else OWN_INSTRUCTIONS
        self.prompt_info = prompt_info(found, profile.prompts, f"mm_agents/{self.reference_module}")
        self.previous_response_id: str | None = None
        self._calls: list[
            dict[str, Any]
        ] = []  # the last reply's computer calls, answered by the next request
        self._notes: list[str] = []  # what the next request tells the model besides the screenshot
        self._space: CoordinateSpace | None = None

    def run_info(self) -> dict[str, Any]:
        """The instructions' source and the agent's setup."""
        return {
            "prompt": dict(self.prompt_info),
            "agent_setup": {
                "preset": self.profile.preset,
                "tool": self.tool_type,
                "reasoning_effort": self.reasoning_effort,
                "safety_checks": self.safety_checks,
                "screenshot_size": self.profile.screenshot_size,
            },
        }

    def reset(self, task: Any = None) -> None:
        """Start a new episode: a new chain."""
        super().reset(task)
        self.previous_response_id = None
        self._calls = []
        self._notes = []

    async def aclose(self) -> None:
        """Close the client."""
        await self.client.aclose()

    # --- the request --------------------------------------------------------------------------------

    def instructions(self) -> str:
        """The ``instructions`` sent with every request."""
        return self.instructions_template.format(
            CLIENT_PASSWORD=PASSWORD,
            CURRENT_DATE=datetime.now().strftime("%A, %B %d, %Y"),
            HOME_DIR="/home/user",
            PLATFORM="ubuntu",
        )

    def tools(self, space: CoordinateSpace) -> list[dict[str, Any]]:
        """The tool definitions (GPT-5.4's tool has no display size: it reads the screenshot's)."""
        return [{"type": self.tool_type}]

    def request_params(self, space: CoordinateSpace) -> dict[str, Any]:
        """Everything the request sends besides ``model`` and ``input``."""
        params: dict[str, Any] = {
            "instructions": self.instructions(),
            "tools": self.tools(space),
            "parallel_tool_calls": False,
            "reasoning": {"effort": self.reasoning_effort, "summary": "concise"},
            "truncation": "auto",
        }
        if self.previous_response_id:
            params["previous_response_id"] = self.previous_response_id
        return params

    def screenshot_part(self, image: PreparedImage) -> dict[str, Any]:
        """The screenshot as an ``input_image`` part."""
        return {"type": "input_image", "image_url": image.data_url(), "detail": "original"}

    def call_output(self, call: dict[str, Any], image: PreparedImage) -> dict[str, Any]:
        """The answer to one computer call: the screen after it, its safety checks acknowledged."""
        item: dict[str, Any] = {
            "type": "computer_call_output",
            "call_id": call.get("call_id", ""),
            "output": {"type": "computer_screenshot", "image_url": image.data_url(), "detail": "original"},
        }
        checks = call.get("pending_safety_checks") or []
        if checks:
            item["acknowledged_safety_checks"] = checks
        return item

    def build_input(self, instruction: str, image: PreparedImage) -> list[dict[str, Any]]:
        """The ``input`` items of this step: the task first, then the answers to the last calls."""
        if not self.previous_response_id:
            content = [{"type": "input_text", "text": instruction}, self.screenshot_part(image)]
            return [{"role": "user", "content": content}]
        items = [self.call_output(call, image) for call in self._calls]
        if self._notes:
            items.append(
                {"role": "user", "content": [{"type": "input_text", "text": "\n".join(self._notes)}]}
            )
        if not items:
            text = "Continue from the latest screenshot."
            items = [
                {
                    "role": "user",
                    "content": [{"type": "input_text", "text": text}, self.screenshot_part(image)],
                }
            ]
        return items

    # --- a step -------------------------------------------------------------------------------------

    async def predict(
        self, instruction: str, observation: Observation, *, on_token: TokenCallback | None = None
    ) -> Prediction:
        """Send this step's input, chained to the last response, and read its computer calls."""
        t0 = time.perf_counter()
        image = await asyncio.to_thread(
            prepare_image,
            observation.screenshot,
            size=self.profile.screenshot_size,
            fmt=self.profile.image_format,
        )
        screen = observation.size
        space = CoordinateSpace(
            screen=screen, mode="abs" if image.size == screen else "resized", image=image.size
        )
        self._space = space
        items = self.build_input(instruction, image)
        params = {**self.request_params(space), "input": items}
        timings = {"prepare": time.perf_counter() - t0}
        t1 = time.perf_counter()
        reply = await self.client.create(params, on_token=on_token)
        timings["model"] = time.perf_counter() - t1
        self.previous_response_id = reply.response_id
        self.remember(reply)
        self._calls = [item for item in reply.output if item.get("type") == "computer_call"]
        self._notes = []
        return self.prediction(reply, space, timings)

    def remember(self, reply: ResponsesReply) -> None:
        """Keep what the next request needs of this reply (the chain keeps it all on the server here)."""

    def prediction(
        self, reply: ResponsesReply, space: CoordinateSpace, timings: dict[str, float]
    ) -> Prediction:
        """The step's proposal: every computer call's batch, in order, as one list of core actions."""
        t0 = time.perf_counter()
        base = Prediction(
            response=response_text(reply),
            thought=reply.reasoning or None,
            coordinate_mode=space.mode,
            usage=None if reply.usage is None else reply.usage.as_usage(),
            latency=reply.latency,
            timings=timings,
            request=None
            if reply.request is None
            else reply.request.model_copy(
                update={"prompt_source": f"osw-studio {__version__} {self.name} agent"}
            ),
        )
        actions: list[Action] = []
        try:
            for call in self._calls:
                batch = call.get("actions")
                if batch is None:
                    batch = [call["action"]] if call.get("action") is not None else []
                if not isinstance(batch, list):
                    raise ActionParseError("the computer call's actions are not a list")
                actions.extend(parse_openai_actions(batch, space))
                checks = call.get("pending_safety_checks") or []
                if checks:  # the episode asks the person, or follows safety_checks when no one attends
                    said = "; ".join(
                        str(c.get("message") or c.get("code") or "a safety check") for c in checks
                    )
                    base.confirm = f"{base.confirm}; {said}" if base.confirm else said
        except ActionParseError as exc:
            base.error = str(exc)
        else:
            text = reply.text
            if any(word in text.lower() for word in INFEASIBLE_WORDS):
                actions.append(Fail(message=text))
            elif not self._calls:
                actions.append(Done(message=text or None))
            base.actions = actions
        timings["parse"] = time.perf_counter() - t0
        return base

    def record(self, step: StepRecord) -> None:
        """Keep the step; when a person changed what ran, tell the model so in the next request."""
        super().record(step)
        note = edit_note(step, lambda actions: render_openai_actions(actions, self._space))
        if note:
            self._notes.append(note)


def edit_note(step: StepRecord, render: Callable[[list[Action]], list[dict[str, Any]]]) -> str | None:
    """What to tell the model when a person took over or changed the step, in the tool's words."""
    if step.source != "human" and step.executed == step.proposed:
        return None
    who = (
        "The person took over and did"
        if step.source == "human"
        else "A person changed your actions; what ran"
    )
    return f"{who}: {json.dumps(render(list(step.executed)))}"


def response_text(reply: ResponsesReply) -> str:
    """The reply as the step shows it: the reasoning summary, the message, then each call's actions."""
    from osw_studio.agent.clients.responses import describe_call

    parts = [reply.reasoning, reply.text, *(describe_call(c) for c in reply.tool_calls)]
    return "\n".join(p for p in parts if p)


class ComputerUsePreviewAgent(GPT54Agent):
    """``computer-use-preview`` with the ``computer_use_preview`` tool, as ``mm_agents/openai_cua_agent.py``.

    One action per computer call; the tool is told the display's size and ``linux``; no chaining: every
    request sends the whole conversation (the task's message, screenshot first, the instructions after
    the task in its text; each reply's output items; each call's output, its safety checks always
    acknowledged, the screen as an ``input_image``), with ``truncation: auto``, a concise reasoning
    summary and ``max_output_tokens`` the profile's ``max_tokens`` (1500 in OSWorld's run script).
    """

    name = "openai_cua"
    kind = "openai_cua"
    tool_type = "computer_use_preview"
    reference_module = "openai_cua_agent.py"

    def __init__(
        self, profile: ResolvedProfile, *, client: ResponsesClient | None = None, api_key: str | None = None
    ) -> None:
        super().__init__(profile, client=client, api_key=api_key)
        self._conversation: list[dict[str, Any]] = []

    def reset(self, task: Any = None) -> None:
        """Start a new conversation."""
        super().reset(task)
        self._conversation = []

    def tools(self, space: CoordinateSpace) -> list[dict[str, Any]]:
        """The preview tool, told the size of the screenshots it is sent."""
        width, height = space.image or space.screen
        return [
            {"type": self.tool_type, "display_width": width, "display_height": height, "environment": "linux"}
        ]

    def request_params(self, space: CoordinateSpace) -> dict[str, Any]:
        """The tool, a concise summary, automatic truncation and the output cap."""
        return {
            "tools": self.tools(space),
            "reasoning": {"summary": "concise"},
            "truncation": "auto",
            "max_output_tokens": self.profile.max_tokens,
        }

    def call_output(self, call: dict[str, Any], image: PreparedImage) -> dict[str, Any]:
        """The answer to a call: its safety checks (always listed) and the screen after it."""
        return {
            "type": "computer_call_output",
            "call_id": call.get("call_id", ""),
            "acknowledged_safety_checks": call.get("pending_safety_checks") or [],
            "output": {"type": "input_image", "image_url": image.data_url()},
        }

    def build_input(self, instruction: str, image: PreparedImage) -> list[dict[str, Any]]:
        """The whole conversation so far, with this step's screenshot answering the last calls."""
        if not self._conversation:
            text = "\n        " + instruction + self.instructions()
            content = [
                {"type": "input_image", "image_url": image.data_url()},
                {"type": "input_text", "text": text},
            ]
            self._conversation.append({"role": "user", "content": content})
        else:
            self._conversation.extend(self.call_output(call, image) for call in self._calls)
            if self._notes:
                note = [{"type": "input_text", "text": "\n".join(self._notes)}]
                self._conversation.append({"role": "user", "content": note})
        return list(self._conversation)

    def remember(self, reply: ResponsesReply) -> None:
        """The reply's output items join the conversation, as they came."""
        self._conversation.extend(reply.output)
