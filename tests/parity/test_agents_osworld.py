"""Differential tests: our ``osworld`` agent against OSWorld's PromptAgent (mm_agents/agent.py), six modes.

One scripted episode (the same screens, trees and replies) runs through the reference agent's
``predict()`` in the reference worker, its ``call_llm`` replaced by a recorder of the payload it would
send, and through our agent with ``prompts: reference`` against the OpenAI-compatible test server. The
requests must be equal (see :mod:`tests.parity.episodes`), and so must the actions: the reference's code
or JSON actions, read by our parser, against what our agent parsed from the whole reply.

Deliberate differences: desktop-env 1.0.2 cannot build PromptAgent for ``computer_13`` (its prompts' JSON
braces make ``str.format`` raise KeyError); the test builds it for pyautogui and gives it the computer_13
prompt as written, which is what our agent sends. A fenced ``WAIT`` without a ``json`` tag fails in the
reference and is read by us (:data:`LENIENT`). Not compared: OSWorld counts the table's tokens with
tiktoken's GPT-4 tables (downloaded at run time); both sides here count four characters a token, so the cut
and its mark are compared but not the tokenizer.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from osw_studio.actions import canonical_actions, parse_computer13, parse_pyautogui
from osw_studio.agent.osworld import OSWorldAgent
from osw_studio.core.actions import Action, Done, Fail, Wait
from osw_studio.core.task import Task
from osw_studio.runner.store import RunStoreWriter
from osw_studio.settings import Settings
from osw_studio.trajectory.store import RunStore
from tests.parity.episodes import (
    FAKE_TIKTOKEN,
    STUBS,
    assert_same_requests,
    observations,
    run_ours,
    screen,
    site_packages,
    tree,
)
from tests.parity.reference import Reference

pytestmark = pytest.mark.timeout(120)

INSTRUCTION = 'Save the document as "report.odt" in the Documents folder.'
MODES = [
    (obs, space)
    for obs in ("screenshot", "a11y_tree", "screenshot_a11y_tree")
    for space in ("pyautogui", "computer_13")
]
REPLIES = {
    "pyautogui": [
        "The Save button is in the middle of the window.\n```python\nimport pyautogui\n"
        "pyautogui.click(960, 540)\n```",
        "Now type the name.\n```python\npyautogui.write('report.odt')\ntime.sleep(0.5)\n"
        "pyautogui.press('enter')\n```",
        "Waiting for the dialog.\n```WAIT```",
        "```python\npyautogui.hotkey('ctrl', 's')\n```\nDONE is next.",
        "The file is saved.\n```DONE```",
    ],
    "computer_13": [
        'I click Save.\n```json\n{"action_type": "CLICK", "x": 960, "y": 540}\n```',
        '```json\n{"action_type": "TYPING", "parameters": {"text": "report.odt"}}\n```',
        "```\nWAIT\n```",
        '```json\n{"action_type": "HOTKEY", "parameters": {"keys": ["ctrl", "s"]}}\n```',
        "DONE",
    ],
}
STEPS = 5
WINDOW = 2
SAMPLE: dict[str, Any] = {"temperature": 0.5, "top_p": 0.9, "max_tokens": 1500}


def trees(observation_type: str) -> list[str | None]:
    if "a11y_tree" not in observation_type:
        return [None] * STEPS
    # step 3's tree is long enough to be cut to the 10,000-token budget
    return [tree(i, extra_rows=1200 if i == 3 else 0) for i in range(1, STEPS + 1)]


REFERENCE_EPISODE = """
import base64, copy
options = dict(
    model="gpt-4o", observation_type=obs, max_trajectory_length=window,
    temperature=sample["temperature"], top_p=sample["top_p"], max_tokens=sample["max_tokens"],
)
try:
    agent = m0.PromptAgent(action_space=space, **options)
    crashed = None
except KeyError as exc:
    # desktop-env 1.0.2 cannot build the computer_13 agent: its prompts' JSON braces break the
    # str.format of the password. Build it for pyautogui, then give it the computer_13 prompt as written.
    crashed = f"KeyError: {exc}"
    agent = m0.PromptAgent(action_space="pyautogui", **options)
    agent.action_space = space
    names = {"screenshot": "SCREENSHOT", "a11y_tree": "A11Y", "screenshot_a11y_tree": "BOTH"}
    agent.system_message = getattr(m1, "SYS_PROMPT_IN_" + names[obs] + "_OUT_ACTION")
agent.reset()
payloads, actions = [], []
for shot, a11y, reply in zip(shots, a11ys, replies):
    def call_llm(payload, reply=reply):
        payloads.append(copy.deepcopy(payload))
        return reply
    agent.call_llm = call_llm
    _, acts = agent.predict(instruction, {"screenshot": base64.b64decode(shot), "accessibility_tree": a11y})
    actions.append(acts)
result = {"payloads": payloads, "actions": actions, "crashed": crashed}
"""


def reference_episode(reference: Reference, obs: str, space: str) -> dict[str, Any]:
    reference.stub(*STUBS)
    reference.exec(FAKE_TIKTOKEN)
    code = (
        f"obs, space, window = {obs!r}, {space!r}, {WINDOW}\n"
        f"sample = {SAMPLE!r}\ninstruction = {INSTRUCTION!r}\n"
        f"shots = {[base64.b64encode(screen(i)).decode() for i in range(1, STEPS + 1)]!r}\n"
        f"a11ys = {trees(obs)!r}\nreplies = {REPLIES[space]!r}\n" + REFERENCE_EPISODE
    )
    return reference.exec(code, modules=("mm_agents.agent", "mm_agents.prompts"))  # type: ignore[no-any-return]


LENIENT = {
    ("computer_13", 3): (
        "a fenced WAIT without a json tag: OSWorld's parse_actions_from_string returns the string "
        "'Failed to parse JSON: ...' instead of a list (its runner then steps through its characters and "
        "crashes); we read the WAIT the model meant",
        [Wait()],
    ),
}
"""Steps where the reference fails and we deliberately read the reply: why, and what we read."""


def reference_actions(space: str, produced: Any) -> list[Action] | None:
    """The reference's output for one step (code strings or JSON actions) as our actions; None: it failed."""
    if isinstance(produced, str):
        return None
    actions: list[Action] = []
    words = {"WAIT": Wait(), "DONE": Done(), "FAIL": Fail()}
    for item in produced:
        if isinstance(item, str) and item in words:
            actions.append(words[item])
        elif space == "pyautogui":
            actions += parse_pyautogui(f"```python\n{item}\n```")
        else:
            actions += parse_computer13(json.dumps(item))
    return actions


@pytest.mark.parametrize(("obs", "space"), MODES, ids=[f"{o}-{s}" for o, s in MODES])
async def test_requests_and_actions_match_the_reference(
    reference: Reference, monkeypatch: pytest.MonkeyPatch, obs: str, space: str
) -> None:
    monkeypatch.setenv("OSW_REFERENCE_SITE", str(site_packages(reference)))
    theirs = reference_episode(reference, obs, space)
    # The reference crashes building exactly the computer_13 agents (we send the prompt as written).
    assert (theirs["crashed"] is not None) == (space == "computer_13"), theirs["crashed"]
    predictions, requests = await run_ours(
        OSWorldAgent, "gpt-4o", "osworld", INSTRUCTION, REPLIES[space], observations(STEPS, trees=trees(obs)),
        observation_type=obs, action_space=space, history_window=WINDOW, **SAMPLE,
    )  # fmt: skip
    assert len(requests) == STEPS
    assert_same_requests(requests, theirs["payloads"])
    ours = [p.actions for p in predictions]
    for step, (mine_actions, produced) in enumerate(zip(ours, theirs["actions"], strict=True), 1):
        expected = reference_actions(space, produced)
        if expected is None:
            assert (space, step) in LENIENT, f"step {step}: the reference failed ({produced!r}), we did not"
            expected = LENIENT[space, step][1]
        else:
            assert (space, step) not in LENIENT, f"step {step}: the reference no longer fails"
        assert canonical_actions(mine_actions) == canonical_actions(expected), f"step {step}"


def test_the_long_table_is_cut_as_the_reference_cuts_it(reference: Reference) -> None:
    from osw_studio.agent.a11y import linearize_accessibility_tree, trim_to_budget

    reference.stub(*STUBS)
    reference.exec(FAKE_TIKTOKEN)
    xml = tree(3, extra_rows=1200)
    theirs = reference.exec(
        f"t = m0.linearize_accessibility_tree({xml!r})\nresult = [t, m0.trim_accessibility_tree(t, 10000)]",
        modules=("mm_agents.agent",),
    )
    table = linearize_accessibility_tree(xml)
    assert table == theirs[0]
    assert trim_to_budget(table, 10000) == theirs[1] and theirs[1].endswith("[...]\n")


def test_the_run_records_which_prompt_was_sent(
    reference: Reference, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    site = site_packages(reference)
    settings = Settings.model_validate(
        {"model_provider": {"base_url": "http://127.0.0.1:9/v1", "model": "gpt-4o"},
         "profiles": {"faithful": {"preset": "osworld"}, "own": {"preset": "osworld", "prompts": "own"}}}
    )  # fmt: skip
    task = Task.model_validate({"id": "t", "instruction": "Do it", "evaluator": {"func": "infeasible"}})

    monkeypatch.setenv("OSW_REFERENCE_SITE", str(site))
    agent = OSWorldAgent(settings.resolve_profile("faithful"), api_key="k")
    store = RunStoreWriter.create(tmp_path / "a", task, **agent.run_info())
    prompt = RunStore(store.path).meta.model_dump()["prompt"]
    store.close()
    text = (site / "mm_agents" / "prompts.py").read_text(encoding="utf-8")
    assert (
        prompt["faithful"] is True
        and "mm_agents/prompts.py:SYS_PROMPT_IN_SCREENSHOT_OUT_CODE" in prompt["source"]
    )
    digest = prompt["sha256"]["system"]
    system = (
        agent.system_prompt("x", (1920, 1080))
        .split("\nYou are asked")[0]
        .replace("'password'", "'{CLIENT_PASSWORD}'")
    )
    assert hashlib.sha256(system.encode()).hexdigest() == digest and system in text

    # Without the package: our own prompts, and the run says the requests are not OSWorld's.
    monkeypatch.setenv("OSW_REFERENCE_SITE", str(tmp_path / "nothing-here"))
    fallback = OSWorldAgent(settings.resolve_profile("faithful"), api_key="k")
    assert fallback.run_info()["prompt"]["faithful"] is False
    assert "desktop-env is not installed" in fallback.run_info()["prompt"]["reason"]
    own = OSWorldAgent(settings.resolve_profile("own"), api_key="k")
    assert own.run_info()["prompt"] == {"source": "own", "faithful": False}
