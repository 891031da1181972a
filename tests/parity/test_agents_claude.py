"""Differential test: our ``claude`` agent against OSWorld's ``mm_agents/anthropic/`` AnthropicAgent.

The reference is the package in the upstream tree beside the checkout, loaded in the reference worker
with the ``anthropic`` SDK stubbed (the worker has none): its ``Anthropic`` client is a recorder of the
``beta.messages.create`` keyword arguments that answers the scripted replies as SDK blocks. It runs as
its run script makes it (``max_tokens`` 3000, 1920x1080 screens, thinking on) but with
``provider=ANTHROPIC`` (the listed difference below) and as ``lib_run_single`` drives it: ``predict`` with
the step's screen, each action's code run. Ours runs the ``claude-sonnet-4.5`` preset with
``prompts: reference`` against the fake Messages server, which answers the same replies. Every request
must be the same once the reference's ``extra_body`` is merged into its body and our ``anthropic-beta``
header is read back as ``betas`` (``stream`` is transport); images are compared by format, size and
pixels. The actions must be the same once the reference's pyautogui code is read by our parser (a key
combination is its keys down then up; typing is one key press per character).

Deliberate differences: the reference's run script leaves the provider at its Bedrock default, where
the model id is Bedrock's and there is no prompt caching; we speak Anthropic's own API, on which the
reference enables caching, so it is compared with ``provider=ANTHROPIC``. ``zoom`` is served here from a
full-resolution crop of the screen (the reference cannot parse it and asks again); an unreadable tool use
is a step error here and the conversation is asked again at the next step (the reference re-asks at
once, three times, then fails); ``temperature`` and ``top_p`` are never sent here (the run script's default
sends neither). Not in this episode: ``[INFEASIBLE]`` fails the task on both sides.
"""

from __future__ import annotations

import base64
import copy
from pathlib import Path
from typing import Any

import pytest

from osw_studio.agent.cua_anthropic import ClaudeAgent, drop_old_images, mark_cache
from osw_studio.core.actions import Action, Done, DragTo, Hotkey, KeyDown, KeyUp, MoveTo, Press, Typing
from osw_studio.settings import Settings
from tests.fakes.messages_server import FakeMessagesServer, Turn, text, thinking, tool_use
from tests.parity.episodes import _picture, observations, play, screen
from tests.parity.reference import Reference
from tests.parity.test_agents_uitars import unpaced

pytestmark = pytest.mark.timeout(120)

UPSTREAM = Path(__file__).resolve().parents[3] / "shared" / "osworld" / "upstream"
INSTRUCTION = "Open the File menu and save the document as report.odt."
MODEL = "claude-sonnet-4-5-20250929"


def computer(action: str, **arguments: Any) -> dict[str, Any]:
    """A tool use of the computer tool."""
    return tool_use("computer", {"action": action, **arguments})


REPLIES: list[list[dict[str, Any]]] = [
    [
        thinking("The File menu is at the top left."),
        text("I will open the File menu."),
        computer("left_click", coordinate=[100, 50]),
        computer("type", text="report.odt\n"),
        computer("key", text="ctrl+s"),
    ],
    [
        computer("double_click", coordinate=[640, 360]),
        computer("scroll", coordinate=[640, 360], scroll_direction="down", scroll_amount=5),
        computer("left_click_drag", start_coordinate=[100, 200], coordinate=[400, 201]),
        computer("mouse_move", coordinate=[11, 23]),
    ],
    [
        thinking("Check the dialog."),
        computer("screenshot"),
        computer("right_click", coordinate=[1200, 700], text="shift"),
        computer("triple_click", coordinate=[500, 300]),
        computer("key", text="Escape"),
        computer("wait"),
    ],
    [text("The document is saved as report.odt.")],
]

STUB_ANTHROPIC = """
import sys, types, copy
_sdk = types.ModuleType("anthropic")
_types = types.ModuleType("anthropic.types")
_beta = types.ModuleType("anthropic.types.beta")

class BetaTextBlock:
    def __init__(self, data):
        self.type, self.text = "text", data["text"]

class _Block:
    def __init__(self, data):
        self._data = data
        for key, value in data.items():
            setattr(self, key, value)
    def model_dump(self):
        return copy.deepcopy(self._data)

_beta.BetaTextBlock = BetaTextBlock
_beta.__getattr__ = lambda name: dict
requests, left = [], []

class _Reply:
    def __init__(self, blocks):
        self.content = [BetaTextBlock(b) if b["type"] == "text" else _Block(b) for b in blocks]

class _Messages:
    def create(self, **request):
        requests.append(copy.deepcopy(request))
        return _Reply(left.pop(0))

class Anthropic:
    def __init__(self, api_key=None, max_retries=None):
        self.beta = types.SimpleNamespace(messages=_Messages())
    def with_options(self, **options):
        return self

class APIError(Exception):
    pass

_sdk.Anthropic = _sdk.AnthropicBedrock = _sdk.AnthropicVertex = Anthropic
_sdk.APIError = _sdk.APIStatusError = _sdk.APIResponseValidationError = APIError
_sdk.types, _types.beta = _types, _beta
sys.modules.update({"anthropic": _sdk, "anthropic.types": _types, "anthropic.types.beta": _beta})

import importlib.util
spec = importlib.util.spec_from_file_location(
    "anthropic_agent_reference", package + "/__init__.py", submodule_search_locations=[package]
)
agent_package = importlib.util.module_from_spec(spec)
sys.modules["anthropic_agent_reference"] = agent_package
spec.loader.exec_module(agent_package)
main = sys.modules["anthropic_agent_reference.main"]
utils = sys.modules["anthropic_agent_reference.utils"]
"""

REFERENCE_EPISODE = """
import base64
left.extend(replies)
screens = [base64.b64decode(s) for s in shots]
agent = main.AnthropicAgent(
    model=model, provider=utils.APIProvider.ANTHROPIC, max_tokens=3000, api_key="sk-test",
    screen_size=(1920, 1080), top_p=None, temperature=None, action_space="claude_computer_use",
    observation_type="screenshot", max_trajectory_length=3, provider_name="docker",
)
agent.reset()
actions = []
for shot in screens:
    reasoning, step_actions = agent.predict(instruction, {"screenshot": shot})
    actions.append([a.get("command") or a["action_type"] for a in step_actions])
    if step_actions and step_actions[0].get("action_type") in ("DONE", "FAIL"):
        break
result = {"requests": requests, "actions": actions}
"""


def replies(turns: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """The scripted replies' blocks with the tool use ids the fake server gives them."""
    out = []
    for number, blocks in enumerate(turns, 1):
        out.append(
            [
                {**b, "id": f"toolu_{number}_{index}"} if b["type"] == "tool_use" else b
                for index, b in enumerate(blocks)
            ]
        )
    return out


def images(value: Any) -> Any:
    """The request with each base64 image replaced by its format, size and pixels."""
    if isinstance(value, dict):
        if value.get("type") == "base64" and isinstance(value.get("data"), str):
            return ("image", value.get("media_type"), *_picture(value["data"]))
        return {k: images(v) for k, v in value.items()}
    if isinstance(value, list):
        return [images(v) for v in value]
    return value


def keys_down_up(actions: list[Action]) -> list[Action]:
    """Our actions as the reference writes them: a key or combination as downs then ups, typing by key."""
    out: list[Action] = []
    for action in actions:
        if isinstance(action, Press | Hotkey):
            keys = [action.key] if isinstance(action, Press) else list(action.keys)
            out += [KeyDown(key=k) for k in keys] + [KeyUp(key=k) for k in reversed(keys)]
        elif isinstance(action, Typing):
            out += [Press(key="enter" if c == "\n" else c) for c in action.text]
        elif isinstance(action, DragTo) and action.start_x is not None and action.start_y is not None:
            out += [MoveTo(x=action.start_x, y=action.start_y), DragTo(x=action.x, y=action.y)]
        else:
            out.append(action)
    return out


def reference_actions(codes: list[str]) -> list[Action]:
    """The reference's pyautogui code of one step, read by our parser."""
    from osw_studio.actions import parse_pyautogui

    actions: list[Action] = []
    for code in codes:
        body = code.replace("pyautogui.sleep(", "time.sleep(").replace(", duration=0.5", "")
        actions += parse_pyautogui(f"```python\n{body}\n```")
    return actions


def loader() -> str:
    """Code loading the reference package (``main``, ``utils``) with its SDK stubbed."""
    package = UPSTREAM / "mm_agents" / "anthropic"
    if not (package / "main.py").is_file():
        pytest.fail(f"OSWorld's upstream tree is missing at {UPSTREAM}")
    return f"package = {str(package)!r}\n" + STUB_ANTHROPIC


async def test_requests_and_actions_match_the_reference(
    reference: Reference, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSW_REFERENCE_SITE", str(UPSTREAM))
    shots = [base64.b64encode(screen(i)).decode() for i in range(1, len(REPLIES) + 1)]
    code = loader() + (
        f"instruction = {INSTRUCTION!r}\nmodel = {MODEL!r}\nshots = {shots!r}\n"
        f"replies = {replies(REPLIES)!r}\n" + REFERENCE_EPISODE
    )
    theirs = reference.exec(code)

    with FakeMessagesServer(api_key="sk-test", models=(MODEL,)) as server:
        server.queue(*(Turn(blocks) for blocks in REPLIES))
        settings = Settings.model_validate(
            {
                "profiles": {
                    "c": {"preset": "claude-sonnet-4.5", "base_url": server.base_url, "max_retries": 0}
                }
            }
        )
        agent = ClaudeAgent(settings.resolve_profile("c"), api_key="sk-test")
        assert agent.prompt_info["faithful"], agent.prompt_info
        predictions = await play(agent, INSTRUCTION, observations(len(REPLIES)))
        sent = server.message_requests

    mine = []
    for request in sent:
        body = {k: v for k, v in request.json.items() if k != "stream"}
        body["betas"] = [b.strip() for b in request.headers["anthropic-beta"].split(",")]
        mine.append(body)
    assert len(mine) == len(theirs["requests"]) == len(REPLIES)
    for number, (ours, raw) in enumerate(zip(mine, theirs["requests"], strict=True), 1):
        expected = {k: v for k, v in raw.items() if k != "extra_body"} | raw.get("extra_body", {})
        assert images(ours) == images(expected), f"request {number}"

    ours_actions = [p.actions for p in predictions]
    assert ours_actions[-1] == [Done(message="The document is saved as report.odt.")]
    assert theirs["actions"][-1] == ["DONE"]
    for step, (mine_step, codes) in enumerate(zip(ours_actions[:-1], theirs["actions"][:-1], strict=True), 1):
        assert unpaced(keys_down_up(mine_step)) == unpaced(reference_actions(codes)), f"step {step}"


def test_cache_marks_and_image_dropping_match_the_reference(reference: Reference) -> None:
    """A long conversation: the cache breakpoints and the screenshots kept, step after step, as there."""
    shot = base64.b64encode(screen(1, (64, 36))).decode()
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": shot}}
    additions: list[list[dict[str, Any]]] = [
        [{"role": "user", "content": [copy.deepcopy(image), {"type": "text", "text": "task"}]}]
    ]
    for step in range(34):
        use = {"type": "tool_use", "id": f"t{step}", "name": "computer", "input": {}}
        parts = [{"type": "text", "text": "Success"}, copy.deepcopy(image)]
        added = [
            {"role": "assistant", "content": [use]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t{step}", "content": parts}],
            },
        ]
        if step % 3 == 0:
            added.append({"role": "user", "content": [{"type": "text", "text": f"note {step}"}]})
        additions.append(added)
    messages: list[dict[str, Any]] = []
    history = []
    for added in additions:
        messages.extend(copy.deepcopy(added))
        mark_cache(messages)
        drop_old_images(messages)
        history.append(copy.deepcopy(messages))
    code = loader() + (
        "import copy\n"
        f"additions = {additions!r}\n"
        "out, messages = [], []\n"
        "for added in additions:\n"
        "    messages.extend(copy.deepcopy(added))\n"
        "    utils._inject_prompt_caching(messages)\n"
        "    utils._maybe_filter_to_n_most_recent_images(messages, 10, min_removal_threshold=20)\n"
        "    out.append(copy.deepcopy(messages))\n"
        "result = out\n"
    )
    theirs = reference.exec(code)
    assert len(theirs) == len(history)
    assert (
        sum(p.get("type") == "image" for m in history[-1] for b in m["content"] for p in b.get("content", []))
        < 34
    )
    for step, (ours, ref) in enumerate(zip(history, theirs, strict=True)):
        assert ours == ref, f"after step {step + 1}"
