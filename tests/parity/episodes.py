"""Scripted episodes for the agents' differential tests: screens, accessibility trees, replies, comparisons.

The same episode goes through OSWorld's agent (in the reference worker, its model call intercepted where
the payload is sent) and through ours (:func:`run_ours`: against the OpenAI-compatible test server on
127.0.0.1). Requests are compared after :func:`normalise` (:func:`assert_same_requests`): text equal after
whitespace normalisation; images in the same number and order, with the same size, format, pixels and
``detail``; the same sampling parameters.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from osw_studio.agent.base import Agent, Prediction
from osw_studio.agent.model_agent import ModelAgent
from osw_studio.core.observation import Observation
from osw_studio.core.step import StepRecord
from osw_studio.settings import Settings
from tests.fakes.openai_server import FakeOpenAIServer
from tests.parity.reference import Reference

SAMPLING = ("model", "temperature", "top_p", "max_tokens", "frequency_penalty", "top_k", "presence_penalty")
"""Request keys that change what the model does (streaming and transport keys are not compared)."""

STUBS = (
    "dashscope",
    "google.generativeai",
    "google.api_core.exceptions",
    "groq",
    "dotenv",
    "openai",
    "loguru",
)
"""Model SDKs OSWorld's agent modules import at the top but the compared code never calls."""

# tiktoken downloads its tables at run time, which tests cannot do: the reference counts tokens of four
# characters instead, which is what our own budget estimate counts, so the cut itself is compared.
FAKE_TIKTOKEN = """
import sys, types
class _Encoding:
    def encode(self, text):
        return [text[i:i + 4] for i in range(0, len(text), 4)]
    def decode(self, tokens):
        return "".join(tokens)
_tiktoken = types.ModuleType("tiktoken")
_tiktoken.encoding_for_model = lambda name: _Encoding()
sys.modules["tiktoken"] = _tiktoken
"""


SCRIPTED_VLM = """
import base64, copy, types
requests, actions = [], []
replies_left = list(replies)

def create(**request):
    requests.append(copy.deepcopy(request))
    message = types.SimpleNamespace(content=replies_left.pop(0))
    return types.SimpleNamespace(choices=[types.SimpleNamespace(message=message)])

completions = types.SimpleNamespace(create=create)
agent.vlm = types.SimpleNamespace(chat=types.SimpleNamespace(completions=completions))
agent.reset()
for shot in shots:
    _, acts = agent.predict(instruction, {"screenshot": base64.b64decode(shot), "accessibility_tree": None})
    actions.append(acts)
result = {"requests": requests, "actions": actions}
"""
"""Reference-side code that plays ``shots`` through an OSWorld agent built as ``agent`` whose ``vlm`` client
is replaced by a recorder answering ``replies`` in order; it leaves the requests sent and the actions."""


SCRIPTED_OPENAI = """
import copy, types
requests, actions = [], []
replies_left = list(replies)

class Client:
    def __init__(self, base_url=None, api_key=None):
        completions = types.SimpleNamespace(create=self.create)
        self.chat = types.SimpleNamespace(completions=completions)

    def create(self, **request):
        requests.append(copy.deepcopy(request))
        message = types.SimpleNamespace(content=replies_left.pop(0))
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=message)])
"""
"""Reference-side code defining ``Client``, a stand-in for ``openai.OpenAI`` that records each request in
``requests`` and answers ``replies`` in order (for agents that make their own client)."""


OPENAI_AGENT_EPISODE = (
    SCRIPTED_OPENAI
    + """
import base64, types
agent_module = load(module)

agent_module.openai = types.SimpleNamespace(OpenAI=Client)
agent = getattr(agent_module, agent_class)(model=model, **arguments)
agent.reset()
for shot in shots:
    _, code = agent.predict(instruction, {"screenshot": base64.b64decode(shot)})
    actions.append(code)
result = {"requests": requests, "actions": actions}
"""
)
"""Reference-side code that builds ``agent_class`` of ``module`` with ``arguments``, its ``openai.OpenAI``
replaced by :data:`SCRIPTED_OPENAI`'s recorder, and plays ``shots``; it leaves the requests and actions."""


def openai_agent_episode(
    reference: Reference,
    agent: str,
    model: str,
    arguments: dict[str, Any],
    instruction: str,
    size: tuple[int, int],
    replies: Sequence[str],
) -> dict[str, Any]:
    """An OSWorld agent that makes its own OpenAI client (``agent``: ``module:Class``) through the episode.

    One :func:`screen` of ``size`` per reply; returns ``{"requests": [...], "actions": [...]}``.
    """
    module, agent_class = agent.split(":")
    shots = [base64.b64encode(screen(i, size)).decode() for i in range(1, len(replies) + 1)]
    values = {"module": module, "agent_class": agent_class, "model": model, "arguments": arguments,
              "instruction": instruction, "shots": shots, "replies": list(replies)}  # fmt: skip
    code = "".join(f"{name} = {value!r}\n" for name, value in values.items()) + OPENAI_AGENT_EPISODE
    return reference.exec(code)  # type: ignore[no-any-return]


def screen(step: int, size: tuple[int, int] = (1920, 1080)) -> bytes:
    """A distinct screenshot per step (PNG): a window, a button and the step's mark."""
    image = Image.new("RGB", size, (30 + step * 20, 60, 110))
    draw = ImageDraw.Draw(image)
    w, h = size
    draw.rectangle((w // 8, h // 8, w * 7 // 8, h * 7 // 8), fill=(235, 235, 235))
    draw.rectangle((w // 2 - 60, h // 2 - 20, w // 2 + 60, h // 2 + 20), fill=(40, 120, 200))
    draw.text((w // 8 + 10, h // 8 + 10), f"step {step}", fill=(0, 0, 0))
    buf = io.BytesIO()
    image.save(buf, "PNG")
    return buf.getvalue()


NS = (
    'xmlns:st="https://accessibility.ubuntu.example.org/ns/state" '
    'xmlns:cp="https://accessibility.ubuntu.example.org/ns/component" '
    'xmlns:attr="https://accessibility.ubuntu.example.org/ns/attributes" '
    'xmlns:wattr="https://accessibility.windows.example.org/ns/attributes"'
)
SHOWN = 'st:showing="true" st:visible="true"'


def tree(step: int, extra_rows: int = 0) -> str:
    """An accessibility tree with the cases OSWorld's table treats specially."""
    rows = [
        f'<push-button name="Save {step}" {SHOWN} st:enabled="true" cp:screencoord="(900, 520)" '
        'cp:size="(120, 40)" attr:class="btn"/>',
        # quotes in the text are doubled and the cell quoted; tabs and newlines stay as they are
        f'<label name="Status" {SHOWN} st:enabled="true" cp:screencoord="(10, 1000)" cp:size="(300, 20)">'
        'Saved "report.odt"\tat\n10:00</label>',
        # expandable but not enabled: kept
        f'<menu-item name="File" {SHOWN} st:expandable="true" cp:screencoord="(0, 0)" cp:size="(40, 20)"/>',
        # not enabled, editable, expandable or checkable: dropped
        f'<push-button name="Disabled" {SHOWN} cp:screencoord="(50, 50)" cp:size="(40, 20)"/>',
        # off the screen to the left: dropped; empty size: dropped
        f'<push-button name="Off" {SHOWN} st:enabled="true" cp:screencoord="(-5, 50)" cp:size="(40, 20)"/>',
        f'<push-button name="Flat" {SHOWN} st:enabled="true" cp:screencoord="(5, 50)" cp:size="(0, 20)"/>',
        # no name and no text: dropped; text only: kept
        f'<entry name="" {SHOWN} st:editable="true" cp:screencoord="(300, 300)" cp:size="(200, 30)"/>',
        f'<paragraph {SHOWN} st:enabled="true" cp:screencoord="(300, 400)" cp:size="(600, 30)">'
        "Plain text</paragraph>",
        # class and description in the Windows attribute namespace (read by OSWorld on Ubuntu too)
        f'<table-cell name="A1" {SHOWN} st:enabled="true" cp:screencoord="(100, 200)" cp:size="(80, 20)" '
        'wattr:class="cell" wattr:description="first cell">42</table-cell>',
        # a tag kept by its ending (textarea) and one kept by name (document-frame)
        f'<sheet-textarea name="Notes" {SHOWN} st:editable="true" cp:screencoord="(0, 600)" '
        'cp:size="(500, 100)"/>',
        f'<document-frame name="Doc" {SHOWN} st:enabled="true" cp:screencoord="(0, 30)" '
        'cp:size="(1920, 1000)"/>',
        # hidden: dropped
        '<push-button name="Hidden" st:showing="false" st:visible="true" st:enabled="true" '
        'cp:screencoord="(1, 1)" cp:size="(10, 10)"/>',
    ]
    rows += [
        f'<list-item name="Row {i} of a long list" {SHOWN} st:enabled="true" '
        f'cp:screencoord="({i % 1900}, {i % 1000})" cp:size="(200, 18)">item {i}</list-item>'
        for i in range(extra_rows)
    ]
    return f'<desktop-frame {NS} name="main"><frame name="Editor">{"".join(rows)}</frame></desktop-frame>'


def site_packages(reference: Reference) -> Path:
    """The reference environment's folder that holds ``mm_agents``."""
    path = reference.exec("result = load('mm_agents.prompts').__file__")
    return Path(path).parent.parent


@functools.lru_cache(maxsize=256)
def _picture(data: str) -> tuple[str | None, tuple[int, int], str]:
    """Format, size and a pixel hash of a base64 image (the same image recurs in every later request)."""
    with Image.open(io.BytesIO(base64.b64decode(data))) as image:
        return image.format, image.size, hashlib.sha256(image.convert("RGB").tobytes()).hexdigest()[:16]


def normalise(messages: list[dict[str, Any]]) -> list[tuple[str, list[tuple[Any, ...]]]]:
    """Messages as (role, parts): text with whitespace collapsed; images as format, size, pixels, detail."""
    out = []
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        parts: list[tuple[Any, ...]] = []
        for part in content:
            if part["type"] == "text":
                parts.append(("text", " ".join(part["text"].split())))
                continue
            url = part["image_url"]["url"]
            head, data = url.split(",", 1)
            parts.append(("image", head, *_picture(data), part["image_url"].get("detail")))
        out.append((message["role"], parts))
    return out


def first_difference(ours: list[Any], theirs: list[Any]) -> str:
    """Where two normalised requests first differ, for the assertion message."""
    if len(ours) != len(theirs):
        return f"{len(ours)} messages here, {len(theirs)} in the reference"
    for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        if a != b:
            return f"message {index}:\n  ours:      {str(a)[:1500]}\n  reference: {str(b)[:1500]}"
    return "no difference"


def sampling(request: dict[str, Any]) -> dict[str, Any]:
    """The request's sampling parameters."""
    return {key: request[key] for key in SAMPLING if key in request}


def assert_same_requests(
    mine: list[dict[str, Any]], theirs: list[dict[str, Any]], label: str = "step"
) -> None:
    """Our requests and the reference's: as many, each with the same messages and sampling parameters."""
    assert len(mine) == len(theirs), f"{len(mine)} requests here, {len(theirs)} in the reference"
    for number, (ours, sent) in enumerate(zip(mine, theirs, strict=True), 1):
        a, b = normalise(ours["messages"]), normalise(sent["messages"])
        assert a == b, f"{label} {number}: " + first_difference(a, b)
        assert sampling(ours) == sampling(sent), f"{label} {number}: {sampling(ours)} != {sampling(sent)}"


def observations(
    count: int, size: tuple[int, int] = (1920, 1080), trees: Sequence[str | None] | None = None
) -> list[Observation]:
    """The episode's observations: :func:`screen` ``1 .. count`` (with ``trees``' accessibility trees)."""
    return [
        Observation(
            screenshot=screen(index, size),
            width=size[0],
            height=size[1],
            accessibility_tree=None if trees is None else trees[index - 1],
        )
        for index in range(1, count + 1)
    ]


def settings_for(server: FakeOpenAIServer, preset: str, **own: Any) -> Settings:
    """Settings whose profile ``p`` is ``preset`` (with ``own`` settings) asking the test server."""
    return Settings.model_validate(
        {
            "model_provider": {"base_url": server.base_url, "model": server.models[0], "max_retries": 0},
            "profiles": {"p": {"preset": preset, **own}},
        }
    )


async def play(
    agent: Agent, instruction: str, steps: Iterable[Observation], *, errors: bool = False
) -> list[Prediction]:
    """Our agent through ``steps``, each step recorded as the episode records it; the agent is closed after.

    ``errors``: a reply that cannot be read is a step that runs nothing (else the test fails on it).
    """
    agent.reset()
    predictions: list[Prediction] = []
    try:
        for index, observation in enumerate(steps, 1):
            prediction = await agent.predict(instruction, observation)
            assert errors or prediction.error is None, prediction.error
            predictions.append(prediction)
            executed = [] if prediction.error else prediction.actions
            agent.record(
                StepRecord(index=index, response=prediction.response, thought=prediction.thought,
                           proposed=executed, executed=executed, error=prediction.error)
            )  # fmt: skip
    finally:
        await agent.aclose()
    return predictions


async def run_ours(
    agent_type: type[ModelAgent],
    model: str,
    preset: str,
    instruction: str,
    replies: Sequence[str],
    steps: Sequence[Observation],
    *,
    errors: bool = False,
    **own: Any,
) -> tuple[list[Prediction], list[dict[str, Any]]]:
    """Our agent (``preset`` with ``own`` settings and OSWorld's prompts) through a scripted episode.

    The test server answers ``replies`` in order. Returns the predictions and the requests the server got.
    """
    with FakeOpenAIServer(models=[model]) as server:
        server.queue(*replies)
        agent = agent_type(settings_for(server, preset, **own).resolve_profile("p"), api_key="sk-test")
        assert agent.prompt_info["faithful"], agent.prompt_info
        predictions = await play(agent, instruction, steps, errors=errors)
        return predictions, [r.json for r in server.chat_requests]
