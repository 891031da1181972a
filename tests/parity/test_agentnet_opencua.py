"""Every AgentNet action we export is read by OpenCUA's own reply parser, and means what ran.

OpenCUA's agent (``mm_agents/opencua`` in OSWorld's package) turns a reply's code into screen-pixel
pyautogui code, or WAIT / DONE / FAIL. Each exported step is put in its reply shape (``## Thought``,
``## Action``, ``## Code``), parsed there, and the code it yields is read back into actions that must
equal the ones the step executed, within the half pixel that 0-1 coordinates round to.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from osw_studio.actions.canonical import canonical_actions
from osw_studio.actions.pyautogui import parse_pyautogui
from osw_studio.core.actions import (
    Action,
    Click,
    Done,
    DoubleClick,
    DragTo,
    Fail,
    Hotkey,
    KeyDown,
    KeyUp,
    MouseDown,
    MouseUp,
    MoveTo,
    Press,
    RightClick,
    Scroll,
    TripleClick,
    Typing,
    Wait,
)
from osw_studio.core.step import EpisodeResult, StepRecord
from osw_studio.core.task import Task
from osw_studio.runner.store import RunStoreWriter
from osw_studio.trajectory.export import export_options, export_runs
from tests.fakes.runs import tiny_png
from tests.parity.reference import Reference

SCREEN = (1920, 1080)

STEPS: list[list[Action]] = [
    [Click(x=960, y=540)],
    [Click(x=17, y=1063, button="right")],
    [Click(x=300, y=200, button="middle")],
    [DoubleClick(x=1919, y=0)],
    [TripleClick(x=641, y=359)],
    [RightClick(x=5, y=6)],
    [MoveTo(x=1000, y=700)],
    [DragTo(x=1500, y=800, start_x=100, start_y=120)],
    [Scroll(dy=-5, x=700, y=300)],
    [Scroll(dx=3)],
    [Typing(text="It's 'quoted' and \"double\"\nnext line")],
    [Press(key="enter")],
    [Hotkey(keys=["ctrl", "shift", "s"])],
    [KeyDown(key="shift"), Click(x=400, y=401), KeyUp(key="shift")],
    [MouseDown(x=10, y=20), MoveTo(x=30, y=40), MouseUp(x=30, y=40)],
    [Wait()],
    [Fail()],
    [Done()],
]


def write_run(root: Path) -> Path:
    task = Task.model_validate(
        {"id": "opencua", "instruction": "Use every action.", "evaluator": {"func": "infeasible"}}
    )
    writer = RunStoreWriter.create(
        root, task, domain="os", model="m", agent="osworld", action_space="pyautogui", screen_size=SCREEN
    )
    png = tiny_png(*SCREEN)
    with writer:
        for index, actions in enumerate(STEPS, start=1):
            human = index % 3 == 0
            writer.write_step(
                StepRecord(
                    index=index,
                    source="human" if human else "agent",
                    verdict="human" if human else "auto",
                    response=None if human else "reply",
                    thought=None if human else f"Thought of step {index}.",
                    proposed=[] if human else actions,
                    executed=actions,
                ),
                png,
            )
        writer.finish(
            EpisodeResult(success=True, score=1.0, steps=len(STEPS), task_id="opencua", domain="os")
        )
    return writer.path


def close_enough(got: list[Action], want: list[Action]) -> bool:
    if len(got) != len(want):
        return False
    for a, b in zip(got, want, strict=True):
        da, db = a.model_dump(), b.model_dump()
        for key in set(da) | set(db):
            va, vb = da.get(key), db.get(key)
            if isinstance(va, int) and isinstance(vb, int) and key in ("x", "y", "start_x", "start_y"):
                if abs(va - vb) > 1:
                    return False
            elif va != vb:
                return False
    return True


def test_opencua_parses_every_exported_action(reference: Reference, tmp_path: Path) -> None:
    reference.stub("openai")  # imported by the agent module, never called by its parser
    path = write_run(tmp_path / "runs")
    export_runs([path], "agentnet", tmp_path / "out", export_options())
    row = json.loads((tmp_path / "out" / "data.jsonl").read_text())
    assert len(row["traj"]) == len(STEPS)
    for entry, executed in zip(row["traj"], STEPS, strict=True):
        value = entry["value"]
        assert "time.sleep" not in value["code"] and value["thought"]
        reply = (
            f"## Thought:\n{value['thought']}\n\n## Action:\n{value['action']}\n\n"
            f"## Code:\n```python\n{value['code']}\n```"
        )
        result: Any = reference.call(
            "mm_agents.opencua.opencua_agent",
            "parse_response_to_cot_and_action",
            reply,
            list(SCREEN),
            "relative",
        )
        action, codes, _sections = result
        assert not str(action).startswith("<Error>"), (value["code"], action)
        special = {Wait: "WAIT", Done: "DONE", Fail: "FAIL"}.get(type(executed[0]))
        if special is not None:
            assert codes == [special], value["code"]
            continue
        got = canonical_actions(parse_pyautogui(codes[0]))
        assert close_enough(got, canonical_actions(executed)), (value["code"], codes[0], got)
