"""Core models: actions, steps and results keep their shape through JSON."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from osw_studio.core.actions import ACTION_KINDS, Click, DragTo, Hotkey, Typing, dump_actions, parse_actions
from osw_studio.core.errors import (
    ActionParseError,
    EvaluationError,
    ExportError,
    GuestError,
    ModelError,
    OswError,
    SettingsError,
    TaskError,
)
from osw_studio.core.step import EpisodeResult, StepRecord

EXAMPLES = [
    {"kind": "move_to", "x": 1, "y": 2},
    {"kind": "click", "x": 3, "y": 4, "button": "right", "clicks": 2},
    {"kind": "right_click"},
    {"kind": "double_click", "x": 5, "y": 6},
    {"kind": "triple_click", "x": 5, "y": 6},
    {"kind": "mouse_down", "button": "middle"},
    {"kind": "mouse_up"},
    {"kind": "drag_to", "x": 10, "y": 11, "start_x": 1, "start_y": 2},
    {"kind": "scroll", "dy": -5, "x": 100, "y": 100},
    {"kind": "typing", "text": "Ünïcode € 日本\n"},
    {"kind": "press", "key": "enter"},
    {"kind": "key_down", "key": "shift"},
    {"kind": "key_up", "key": "shift"},
    {"kind": "hotkey", "keys": ["ctrl", "shift", "t"]},
    {"kind": "wait", "seconds": 2.5},
    {"kind": "done", "message": "ok"},
    {"kind": "fail"},
    {"kind": "call_user", "message": "need a password"},
]


def test_every_kind_round_trips_through_plain_data() -> None:
    actions = parse_actions(EXAMPLES)
    assert [a.kind for a in actions] == list(ACTION_KINDS)
    assert dump_actions(actions) == EXAMPLES


@pytest.mark.parametrize(
    "bad",
    [
        {"kind": "teleport"},
        {"kind": "click", "x": "here"},
        {"kind": "click", "clicks": 9},
        {"kind": "hotkey", "keys": []},
        {"kind": "typing"},
        {"kind": "move_to", "x": 1, "y": 2, "z": 3},
    ],
)
def test_invalid_actions_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        parse_actions([bad])


def test_terminal_and_point() -> None:
    done, click, drag = parse_actions(
        [{"kind": "done"}, {"kind": "click"}, {"kind": "drag_to", "x": 1, "y": 2}]
    )
    assert done.is_terminal and not click.is_terminal
    assert click.point is None
    assert drag.point == (1, 2)
    assert isinstance(drag, DragTo)


def test_step_record_keeps_proposal_and_execution() -> None:
    step = StepRecord(
        index=3,
        verdict="edited",
        response="Action: click(start_box='(1,2)')",
        proposed=[Click(x=1, y=2)],
        executed=[Click(x=5, y=6), Typing(text="hi"), Hotkey(keys=["ctrl", "s"])],
        timings={"predict": 0.5},
    )
    again = StepRecord.model_validate_json(step.model_dump_json())
    assert again == step
    assert again.executed[1] == Typing(text="hi")


def test_episode_result_bounds() -> None:
    EpisodeResult(success=True, score=1.0, steps=3, task_id="t")
    with pytest.raises(ValidationError):
        EpisodeResult(success=True, score=1.5, steps=3, task_id="t")


@pytest.mark.parametrize(
    "cls", [TaskError, ActionParseError, GuestError, ModelError, EvaluationError, SettingsError, ExportError]
)
def test_error_tree(cls: type[OswError]) -> None:
    err = cls("it broke", where="step 3", hint="try again")
    assert isinstance(err, OswError)
    assert str(err) == "step 3: it broke (try again)"
