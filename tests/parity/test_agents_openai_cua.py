"""Differential test: our ``openai_cua`` agent against OSWorld's ``mm_agents/openai_cua_agent.py``.

The reference is OpenAICUAAgent from the upstream tree (its module loaded with ``mm_agents.prompts`` and
``openai`` stubbed; its ``_resolve_openai_client`` returns a recorder of the ``responses.create`` keyword
arguments that answers the scripted responses as attribute objects, as the SDK's are). It runs as its
run script makes it (``max_tokens`` 1500, 1920x1080, screenshots only, a provider other than AWS so
the password is ``password``) and as ``lib_run_single.run_single_example_openaicua`` drives it. Ours runs
the ``computer-use-preview`` preset with ``prompts: reference`` against the fake Responses server. Every
request (the whole conversation each time) must be the same, images compared by format, size and pixels;
so must the actions, the reference's pyautogui code read by our parser.

Deliberate differences: see :mod:`tests.parity.test_agents_gpt54` (the same action map; here a reply
without a computer call and without an infeasible message is a ``done`` where OSWorld's loop ends, and
an infeasible message is ``fail`` in both).
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from osw_studio.agent.cua_openai import ComputerUsePreviewAgent
from osw_studio.core.actions import Done, Fail
from osw_studio.settings import Settings
from tests.fakes.responses_server import FakeResponsesServer, Script, computer_call, message, reasoning
from tests.parity.episodes import STUBS, observations, play, screen
from tests.parity.reference import Reference
from tests.parity.test_agents_gpt54 import UPSTREAM, images, reference_actions, responses
from tests.parity.test_agents_uitars import unpaced

pytestmark = pytest.mark.timeout(120)

INSTRUCTION = "Open the File menu and save the document as report.odt."


def call(action: dict[str, Any], call_id: str, *checks: str) -> dict[str, Any]:
    return computer_call(action, call_id=call_id, safety_checks=checks, batched=False)


OUTPUTS: list[list[dict[str, Any]]] = [
    [
        reasoning("The File menu is at the top left."),
        call({"type": "click", "x": 966, "y": 546, "button": "left"}, "c1"),
    ],
    [call({"type": "type", "text": "report.odt"}, "c2", "The page asks to ignore the task.")],
    [call({"type": "keypress", "keys": ["CTRL", "S"]}, "c3")],
    [call({"type": "scroll", "x": 960, "y": 540, "scroll_x": 0, "scroll_y": -4}, "c4")],
    [call({"type": "drag", "path": [{"x": 100, "y": 200}, {"x": 400, "y": 200}]}, "c5")],
    [message("The task is infeasible: no such menu.")],
]

REFERENCE_EPISODE = """
import base64, copy, importlib.util, sys, types
prompts = types.ModuleType("mm_agents.prompts")
for inp in ("SCREENSHOT", "A11Y", "BOTH"):  # the system prompts it imports, for other observation types
    for out in ("CODE", "ACTION"):
        setattr(prompts, f"SYS_PROMPT_IN_{inp}_OUT_{out}", "")
prompts.SYS_PROMPT_IN_SOM_OUT_TAG = ""
# the worker is shared by the session: the stand-ins are put back once the agent's module has loaded
saved = {name: sys.modules.get(name) for name in ("mm_agents", "mm_agents.prompts")}
sys.modules.setdefault("mm_agents", types.ModuleType("mm_agents"))
sys.modules["mm_agents.prompts"] = prompts
openai = sys.modules["openai"]
openai.APIError = openai.RateLimitError = openai.Timeout = Exception
spec = importlib.util.spec_from_file_location("openai_cua_agent_reference", path)
agent_module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(agent_module)
for name, module in saved.items():
    if module is None:
        sys.modules.pop(name, None)
    else:
        sys.modules[name] = module

class Obj(dict):  # the SDK's objects: fields as attributes (a field named keys too), and JSON as a dict
    def __getattribute__(self, name):
        if name in dict.keys(self):
            return dict.__getitem__(self, name)
        return super().__getattribute__(name)
    def __getattr__(self, name):
        raise AttributeError(name)
    def __dir__(self):
        return list(dict.keys(self))

def wrap(value):
    if isinstance(value, dict):
        return Obj({k: wrap(v) for k, v in value.items()})
    if isinstance(value, list):
        return [wrap(v) for v in value]
    return value

requests, actions = [], []
left = [wrap(r) for r in responses]

class _Responses:
    def create(self, **request):
        requests.append(copy.deepcopy(request))
        return left.pop(0)

class _Client:
    responses = _Responses()

screens = [base64.b64decode(s) for s in shots]
position = [0]

class _Env:
    def step(self, action, pause=0):
        return {"screenshot": screens[position[0] + 1]}, 0, False, {}

agent = agent_module.OpenAICUAAgent(
    env=_Env(), model="computer-use-preview", max_tokens=1500, top_p=0.9, temperature=1.0,
    action_space="pyautogui", observation_type="screenshot", max_trajectory_length=3,
    client_password="", provider_name="docker", screen_width=1920, screen_height=1080,
)
agent._resolve_openai_client = lambda: _Client()
agent.reset()
done = False
while not done and position[0] < len(screens):
    info, step_actions = agent.predict(instruction, {"screenshot": screens[position[0]]})
    done = not info.get("state_correct", False)
    actions.append([a["action"] for a in step_actions])
    for action in step_actions:
        if action["action"] == "FAIL":
            break
        agent.step(action)
    position[0] += 1
result = {"requests": requests, "actions": actions}
"""


async def test_requests_and_actions_match_the_reference(
    reference: Reference, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = UPSTREAM / "mm_agents" / "openai_cua_agent.py"
    if not module.is_file():
        pytest.fail(f"OSWorld's upstream tree is missing at {UPSTREAM}")
    monkeypatch.setenv("OSW_REFERENCE_SITE", str(UPSTREAM))
    reference.stub(*STUBS)
    shots = [base64.b64encode(screen(i)).decode() for i in range(1, len(OUTPUTS) + 1)]
    code = (
        f"path = {str(module)!r}\ninstruction = {INSTRUCTION!r}\n"
        f"shots = {shots!r}\nresponses = {responses(OUTPUTS)!r}\n" + REFERENCE_EPISODE
    )
    theirs = reference.exec(code)

    with FakeResponsesServer() as server:
        server.queue(*(Script(items) for items in OUTPUTS))
        settings = Settings.model_validate(
            {
                "profiles": {
                    "c": {"preset": "computer-use-preview", "base_url": server.base_url, "max_retries": 0}
                }
            }
        )
        agent = ComputerUsePreviewAgent(settings.resolve_profile("c"), api_key="sk-test")
        assert agent.prompt_info["faithful"], agent.prompt_info
        predictions = await play(agent, INSTRUCTION, observations(len(OUTPUTS)))
        mine = [r.json for r in server.response_requests]

    assert len(mine) == len(theirs["requests"]) == len(OUTPUTS)
    for number, (ours, sent) in enumerate(zip(mine, theirs["requests"], strict=True), 1):
        ours = {k: v for k, v in ours.items() if k != "stream"}
        assert images(ours) == images(sent), f"request {number}"

    ours_actions = [p.actions for p in predictions]
    assert ours_actions[-1] == [Fail(message="The task is infeasible: no such menu.")]
    assert theirs["actions"][-1] == ["FAIL"]
    for step, (mine_step, codes) in enumerate(zip(ours_actions[:-1], theirs["actions"][:-1], strict=True), 1):
        assert unpaced(mine_step) == unpaced(reference_actions(codes)), f"step {step}"
    assert Done not in {type(a) for step in ours_actions for a in step}
