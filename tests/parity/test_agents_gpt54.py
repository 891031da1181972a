"""Differential test: our ``gpt54`` agent against OSWorld's ``mm_agents/gpt54_agent.py`` GPT54Agent.

The reference is the agent in the upstream tree beside the checkout (desktop-env 1.0.2 predates it),
loaded from its file in the reference worker with the ``openai`` import stubbed: its ``OpenAI`` client is
replaced by a recorder of the ``responses.create`` keyword arguments that answers the scripted
responses. It runs as its run script makes it (``reasoning_effort`` xhigh, no ``max_tokens``, 1920x1080,
a provider other than AWS so the password is ``password``) and as ``lib_run_single.run_single_example_gpt54``
drives it: ``predict``, then ``step`` for each action of the batch, its env answering the next screen.
Ours runs the ``gpt-5.4`` preset with ``prompts: reference`` against the fake Responses server, which
answers the same responses. Every request must be the same after the images are compared by format,
size and pixels (``stream`` is transport and not compared); the actions must be the same once the
reference's pyautogui code is read by our parser.

Deliberate differences (not in this episode): a reply without a computer call is a ``done`` action
here (OSWorld's loop just ends; the task is then evaluated as here), and ``fail`` when its message says
the task is infeasible (OSWorld ends without a FAIL, so an infeasible task scores 0 there);
``scroll_x`` scrolls right when positive as the API means (the reference's ``hscroll(-scroll_x)`` scrolls
left); ``triple_click`` triple-clicks (the reference drops the whole batch as unsupported); non-ASCII
text is typed exactly rather than pasted through the clipboard (the same text arrives); a drag's path
of more than two points is a press, moves and a release rather than a chain of ``dragTo``.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from osw_studio.agent.cua_openai import GPT54Agent
from osw_studio.core.actions import Action, Done, Hotkey, Press
from osw_studio.settings import Settings
from tests.fakes.responses_server import FakeResponsesServer, Script, computer_call, message, reasoning
from tests.parity.episodes import STUBS, _picture, observations, play, screen
from tests.parity.reference import Reference
from tests.parity.test_agents_uitars import unpaced

pytestmark = pytest.mark.timeout(120)

UPSTREAM = Path(__file__).resolve().parents[3] / "shared" / "osworld" / "upstream"
INSTRUCTION = "Open the File menu and save the document as report.odt."

OUTPUTS: list[list[dict[str, Any]]] = [
    [
        reasoning("The File menu is at the top left."),
        computer_call(
            {"type": "click", "x": 966, "y": 546, "button": "left"},
            {"type": "type", "text": "report.odt"},
            {"type": "keypress", "keys": ["CTRL", "S"]},
            call_id="call_a",
        ),
    ],
    [
        computer_call(
            {"type": "double_click", "x": 500, "y": 300},
            {"type": "scroll", "x": 960, "y": 540, "scroll_x": 0, "scroll_y": 5},
            {"type": "drag", "path": [{"x": 100, "y": 200}, {"x": 400, "y": 200}]},
            call_id="call_b",
            safety_checks=("The page asks to ignore the task.",),
        ),
    ],
    [
        computer_call(
            {"type": "click", "x": 1500, "y": 900, "button": "right"},
            {"type": "move", "x": 10, "y": 20},
            {"type": "keypress", "keys": ["Enter"]},
            {"type": "type", "text": "two\nlines"},
            {"type": "wait"},
            {"type": "screenshot"},
            call_id="call_c",
        )
    ],
    [message("The document is saved as report.odt.")],
]

REFERENCE_EPISODE = """
import base64, copy, importlib.util
spec = importlib.util.spec_from_file_location("gpt54_agent_reference", path)
agent_module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(agent_module)
requests, actions = [], []
left = list(responses)

class _Responses:
    def create(self, **request):
        requests.append(copy.deepcopy(request))
        return left.pop(0)

class _Client:
    def __init__(self, api_key=None):
        self.responses = _Responses()

agent_module.OpenAI = _Client
screens = [base64.b64decode(s) for s in shots]
position = [0]

class _Env:
    def step(self, action, pause):
        return {"screenshot": screens[position[0] + 1]}, 0, False, {}

agent = agent_module.GPT54Agent(
    env=_Env(), model="gpt-5.4", max_tokens=None, top_p=0.9, temperature=1.0, action_space="pyautogui",
    observation_type="screenshot", max_trajectory_length=3, client_password="", provider_name="docker",
    screen_width=1920, screen_height=1080, sleep_after_execution=0.0, reasoning_effort="xhigh",
)
agent.reset()
done = False
while not done and position[0] < len(screens):
    info, step_actions = agent.predict(instruction, {"screenshot": screens[position[0]]})
    done = not info.get("state_correct", False)
    actions.append([a["action"] for a in step_actions])
    for action in step_actions:
        agent.step(action)
    position[0] += 1
result = {"requests": requests, "actions": actions}
"""


def responses(outputs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The scripted responses as the fake server numbers them (ids, call ids, usage)."""
    out = []
    for number, items in enumerate(outputs, 1):
        output = [{**item, "id": f"item_{number}_{index}"} for index, item in enumerate(items)]
        usage = {"input_tokens": 100, "output_tokens": 20}
        out.append({"id": f"resp_{number}", "status": "completed", "output": output, "usage": usage})
    return out


def images(value: Any) -> Any:
    """The request with each data URL replaced by its image's format, size and pixels."""
    if isinstance(value, dict):
        return {k: images(v) for k, v in value.items()}
    if isinstance(value, list):
        return [images(v) for v in value]
    if isinstance(value, str) and value.startswith("data:image/"):
        head, data = value.split(",", 1)
        return ("image", head, *_picture(data))
    return value


def reference_actions(codes: list[str]) -> list[Action]:
    """The reference's pyautogui code of one step, read by our parser."""
    from osw_studio.actions import parse_pyautogui

    actions: list[Action] = []
    for code in codes:
        body = code.replace(", interval=0.03", "").replace(", duration=0.2, button='left'", "")
        actions += parse_pyautogui(f"```python\n{body}\n```")
    # a one-key keypress is hotkey('enter') there, a press here: the same key
    return [Press(key=a.keys[0]) if isinstance(a, Hotkey) and len(a.keys) == 1 else a for a in actions]


async def test_requests_and_actions_match_the_reference(
    reference: Reference, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not (UPSTREAM / "mm_agents" / "gpt54_agent.py").is_file():
        pytest.fail(f"OSWorld's upstream tree is missing at {UPSTREAM}")
    monkeypatch.setenv("OSW_REFERENCE_SITE", str(UPSTREAM))
    reference.stub(*STUBS)
    shots = [base64.b64encode(screen(i)).decode() for i in range(1, len(OUTPUTS) + 1)]
    code = (
        f"path = {str(UPSTREAM / 'mm_agents' / 'gpt54_agent.py')!r}\ninstruction = {INSTRUCTION!r}\n"
        f"shots = {shots!r}\nresponses = {responses(OUTPUTS)!r}\n" + REFERENCE_EPISODE
    )
    theirs = reference.exec(code)

    with FakeResponsesServer() as server:
        server.queue(*(Script(items) for items in OUTPUTS))
        settings = Settings.model_validate(
            {"profiles": {"g": {"preset": "gpt-5.4", "base_url": server.base_url, "max_retries": 0}}}
        )
        agent = GPT54Agent(settings.resolve_profile("g"), api_key="sk-test")
        assert agent.prompt_info["faithful"], agent.prompt_info
        predictions = await play(agent, INSTRUCTION, observations(len(OUTPUTS)))
        mine = [r.json for r in server.response_requests]

    assert len(mine) == len(theirs["requests"]) == len(OUTPUTS)
    for number, (ours, sent) in enumerate(zip(mine, theirs["requests"], strict=True), 1):
        ours = {k: v for k, v in ours.items() if k != "stream"}
        assert images(ours) == images(sent), f"request {number}"
    assert os.environ["OSW_REFERENCE_SITE"] == str(UPSTREAM)

    ours_actions = [p.actions for p in predictions]
    assert ours_actions[-1] == [Done(message="The document is saved as report.odt.")]  # listed difference
    assert theirs["actions"][-1] == []
    for step, (mine_step, codes) in enumerate(zip(ours_actions[:-1], theirs["actions"][:-1], strict=True), 1):
        assert unpaced(mine_step) == unpaced(reference_actions(codes)), f"step {step}"
