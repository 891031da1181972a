"""Claude's agent: its computer tool's actions as core actions, zoom, edits told back, the task's end."""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import pytest
from PIL import Image

from osw_studio.actions.claude_tools import parse_claude_action, render_claude_actions
from osw_studio.actions.coords import CoordinateSpace
from osw_studio.agent.cua_anthropic import ClaudeAgent
from osw_studio.core.actions import (
    Action,
    Click,
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
from osw_studio.core.errors import ActionParseError
from osw_studio.core.observation import Observation
from osw_studio.core.step import StepRecord
from osw_studio.settings import Settings
from tests.fakes.messages_server import FakeMessagesServer, Turn, text, tool_use

pytestmark = pytest.mark.timeout(30)

SPACE = CoordinateSpace(screen=(1920, 1080), mode="resized", image=(1280, 720), rounding="trunc")
MODEL = "claude-sonnet-4-5-20250929"

CASES: list[tuple[dict[str, Any], list[Action]]] = [
    ({"action": "left_click", "coordinate": [101, 51]}, [Click(x=151, y=76)]),
    ({"action": "left_click"}, [Click()]),
    ({"action": "right_click", "coordinate": [10, 10]}, [RightClick(x=15, y=15)]),
    ({"action": "middle_click", "coordinate": [10, 10]}, [Click(x=15, y=15, button="middle")]),
    ({"action": "double_click", "coordinate": [10, 10]}, [DoubleClick(x=15, y=15)]),
    ({"action": "triple_click", "coordinate": [10, 10]}, [TripleClick(x=15, y=15)]),
    (
        {"action": "left_click", "coordinate": [10, 10], "text": "ctrl+shift"},
        [KeyDown(key="ctrl"), KeyDown(key="shift"), Click(x=15, y=15), KeyUp(key="shift"), KeyUp(key="ctrl")],
    ),
    (
        {"action": "left_press", "coordinate": [10, 10]},
        [MouseDown(x=15, y=15), Wait(seconds=1.0), MouseUp(x=15, y=15)],
    ),
    ({"action": "left_mouse_down"}, [MouseDown()]),
    ({"action": "left_mouse_up"}, [MouseUp()]),
    ({"action": "mouse_move", "coordinate": [1279, 719]}, [MoveTo(x=1918, y=1078)]),
    (
        {"action": "left_click_drag", "start_coordinate": [0, 0], "coordinate": [100, 100]},
        [DragTo(start_x=0, start_y=0, x=150, y=150)],
    ),
    ({"action": "key", "text": "Return"}, [Press(key="enter")]),
    ({"action": "key", "text": "ctrl+Page_Down"}, [Hotkey(keys=["ctrl", "pagedown"])]),
    ({"action": "hold_key", "text": "shift"}, [KeyDown(key="shift")]),
    ({"action": "type", "text": "héllo\n"}, [Typing(text="héllo\n")]),
    (
        {"action": "scroll", "coordinate": [10, 10], "scroll_direction": "down", "scroll_amount": 3},
        [Scroll(x=15, y=15, dy=-3)],
    ),
    ({"action": "scroll", "scroll_direction": "right", "scroll_amount": 2}, [Scroll(dx=2)]),
    ({"action": "wait"}, [Wait(seconds=0.5)]),
    ({"action": "screenshot"}, [Wait(seconds=0.1)]),
    ({"action": "zoom", "region": [0, 0, 640, 360]}, [Wait(seconds=0.1)]),
]


@pytest.mark.parametrize(
    ("tool_input", "expected"), CASES, ids=[str(c[0]["action"]) + str(i) for i, c in enumerate(CASES)]
)
def test_each_action_maps_to_core_actions(tool_input: dict[str, Any], expected: list[Action]) -> None:
    assert parse_claude_action(tool_input, SPACE) == expected


@pytest.mark.parametrize(
    ("tool_input", "said"),
    [
        ({"action": "fly"}, "unknown action 'fly'"),
        ({"action": "left_click", "coordinate": [1, "x"]}, "no point 'coordinate'"),
        ({"action": "key", "text": "hyperkey"}, "unknown key 'hyperkey'"),
        ({"action": "scroll", "scroll_direction": "sideways", "scroll_amount": 1}, "no direction"),
        ({"action": "zoom", "region": [5, 5, 5, 9]}, "encloses no area"),
    ],
)
def test_unusable_actions_say_what_is_wrong(tool_input: dict[str, Any], said: str) -> None:
    with pytest.raises(ActionParseError, match=said):
        parse_claude_action(tool_input, SPACE)


def test_a_persons_actions_render_in_the_tools_frame() -> None:
    actions: list[Action] = [Click(x=150, y=75), Hotkey(keys=["ctrl", "s"]), Scroll(x=15, y=15, dy=-3)]
    assert render_claude_actions(actions, SPACE) == [
        {"action": "left_click", "coordinate": [100, 50]},
        {"action": "key", "text": "ctrl+s"},
        {"action": "scroll", "coordinate": [10, 10], "scroll_direction": "down", "scroll_amount": 3},
    ]


def screen_png() -> bytes:
    image = Image.new("RGB", (1920, 1080), "white")
    for x in range(0, 1920, 7):
        image.putpixel((x, (x * 3) % 1080), (x % 256, 0, 255 - x % 256))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def decoded(block: dict[str, Any]) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(block["source"]["data"])))


async def episode(
    turns: list[Turn], steps: int, edit: list[Action] | None = None
) -> tuple[list[Any], list[Any]]:
    """Our agent through ``steps`` steps of the same screen; the first step's actions replaced by ``edit``."""
    shot = screen_png()
    with FakeMessagesServer(models=(MODEL,)) as server:
        server.queue(*turns)
        settings = Settings.model_validate(
            {"profiles": {"c": {"preset": "claude-sonnet-4.5", "base_url": server.base_url, "max_retries": 0,
                                "prompts": "own"}}}
        )  # fmt: skip
        agent = ClaudeAgent(settings.resolve_profile("c"), api_key="k")
        agent.reset()
        predictions = []
        try:
            for index in range(1, steps + 1):
                p = await agent.predict("Do it.", Observation(screenshot=shot, width=1920, height=1080))
                predictions.append(p)
                ran = edit if index == 1 and edit is not None else p.actions
                agent.record(StepRecord(index=index, response=p.response, proposed=p.actions, executed=ran,
                                        error=p.error))  # fmt: skip
        finally:
            await agent.aclose()
        return predictions, [r.json for r in server.message_requests]


async def test_zoom_is_answered_with_the_full_resolution_region() -> None:
    turns = [
        Turn([tool_use("computer", {"action": "zoom", "region": [640, 360, 1280, 720]})]),
        Turn([text("ok")]),
    ]
    _, requests = await episode(turns, 2)
    [result] = requests[1]["messages"][2]["content"]
    crop = decoded(result["content"][1])
    assert crop.size == (960, 540)  # the region at the screen's resolution, not the 1280x720 screenshot's
    full = Image.open(io.BytesIO(screen_png())).crop((960, 540, 1920, 1080))
    assert crop.convert("RGB").tobytes() == full.convert("RGB").tobytes()
    assert decoded(requests[0]["messages"][0]["content"][0]).size == (1280, 720)


async def test_a_persons_edit_is_told_to_the_model() -> None:
    turns = [
        Turn([tool_use("computer", {"action": "left_click", "coordinate": [10, 10]})]),
        Turn([text("ok")]),
    ]
    _, requests = await episode(turns, 2, edit=[Click(x=150, y=75)])
    note = requests[1]["messages"][-1]["content"][0]["text"]
    assert note.startswith("A person changed your actions; what ran: ")
    assert json.loads(note.split("ran: ", 1)[1]) == [{"action": "left_click", "coordinate": [100, 50]}]


async def test_infeasible_fails_and_an_unreadable_reply_is_asked_again() -> None:
    turns = [
        Turn([tool_use("computer", {"action": "fly"})]),
        Turn([text("This cannot be done. [INFEASIBLE]")]),
    ]
    predictions, requests = await episode(turns, 2)
    assert predictions[0].error is not None and "unknown action 'fly'" in predictions[0].error
    assert requests[1]["messages"] == requests[0]["messages"]  # the same conversation, asked again
    assert predictions[1].actions == [Fail(message="This cannot be done. [INFEASIBLE]")]
