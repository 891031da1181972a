"""The Qwen3-VL and OpenCUA reply parsers, where they read more (or less) than OSWorld's.

What they share with OSWorld's parsers is compared against OSWorld's code in tests/parity; these are
the documented differences and the errors.
"""

from __future__ import annotations

import json

import pytest

from osw_studio.actions import CoordinateSpace
from osw_studio.actions.opencua import WAIT_SECONDS, parse_opencua
from osw_studio.actions.qwen3vl import parse_qwen3vl, render_qwen3vl
from osw_studio.core.actions import (
    Action,
    Click,
    Done,
    DragTo,
    Fail,
    Hotkey,
    MoveTo,
    Press,
    Scroll,
    TripleClick,
    Typing,
    Wait,
)
from osw_studio.core.errors import ActionParseError

REL999 = CoordinateSpace(screen=(1920, 1080), mode="rel999", rounding="trunc")
NORM = CoordinateSpace(screen=(1920, 1080), mode="norm")


def call(action: str, **arguments: object) -> str:
    return json.dumps({"name": "computer_use", "arguments": {"action": action, **arguments}})


def test_qwen3vl_reads_text_with_quotes_and_newlines_as_written() -> None:
    text = 'It\'s "done"\nnext'
    reply = f"Action: Type.\n<tool_call>\n{call('type', text=text)}\n</tool_call>"
    assert parse_qwen3vl(reply, REL999) == ("Type.", [Typing(text=text)])


def test_qwen3vl_reads_a_call_on_one_line_and_a_bare_json_line() -> None:
    one_line = f"Action: Click.\n<tool_call>{call('left_click', coordinate=[0, 0])}</tool_call>"
    assert parse_qwen3vl(one_line, REL999)[1] == [Click(x=0, y=0)]
    bare = call("triple_click", coordinate=[999, 999])
    assert parse_qwen3vl(bare, REL999) == ("Performing tripleClick action", [TripleClick(x=1919, y=1079)])


def test_qwen3vl_terminate_is_done_whatever_its_status_as_in_osworld() -> None:
    reply = f"<tool_call>\n{call('terminate', status='failure')}\n</tool_call>"
    assert parse_qwen3vl(reply, REL999)[1] == [Done()]


def test_qwen3vl_key_names_are_normalised_and_mangled_ones_refused() -> None:
    assert parse_qwen3vl(f"<tool_call>\n{call('key', keys=['Return'])}\n</tool_call>", REL999) == (
        "Performing press action",
        [Press(key="enter")],
    )
    # a list written inside the string: OSWorld strips "keys=[" and "]" but leaves a quote, and its
    # generated code does not run; here the key is refused
    with pytest.raises(ActionParseError, match="not a key"):
        parse_qwen3vl(
            f"<tool_call>\n{call('key', keys=[chr(91) + chr(39) + 'ctrl' + chr(39) + chr(93)])}\n</tool_call>"
        )


def test_qwen3vl_ignores_other_tools_and_actions_it_has_no_code_for() -> None:
    other = json.dumps({"name": "mobile_use", "arguments": {"action": "click", "coordinate": [1, 2]}})
    other = f"<tool_call>\n{other}\n</tool_call>"
    assert parse_qwen3vl(other, REL999) == ("", [])
    answer = f"Action: Answer.\n<tool_call>\n{call('answer', text='42')}\n</tool_call>"
    assert parse_qwen3vl(answer, REL999) == ("Answer.", [])


@pytest.mark.parametrize(
    "arguments",
    [
        {"action": "key", "keys": []},
        {"action": "key", "keys": ["not a key"]},
        {"action": "left_click", "coordinate": [1]},
        {"action": "left_click", "coordinate": ["a", "b"]},
        {"action": "scroll", "pixels": 1.5},
        {"action": "type", "text": 3},
    ],
)
def test_qwen3vl_refuses_unusable_arguments(arguments: dict[str, object]) -> None:
    reply = f"<tool_call>\n{json.dumps({'name': 'computer_use', 'arguments': arguments})}\n</tool_call>"
    with pytest.raises(ActionParseError):
        parse_qwen3vl(reply, REL999)


def test_qwen3vl_refuses_a_tool_call_that_is_not_json() -> None:
    with pytest.raises(ActionParseError, match="not JSON"):
        parse_qwen3vl('<tool_call>\n{"name": "computer_use", "arguments": {\n</tool_call>', REL999)


def test_qwen3vl_rendering_reads_back_to_the_same_actions() -> None:
    actions: list[Action] = [
        Click(x=960, y=540),
        Typing(text="a'b"),
        Hotkey(keys=["ctrl", "s"]),
        Scroll(dy=-3),
        Wait(),
        Fail(),
    ]
    text = render_qwen3vl(actions, REL999, instruction="Do it.")
    instruction, parsed = parse_qwen3vl(text, REL999)
    assert instruction == "Do it."
    # Fail is written as terminate(failure), which OSWorld reads as done; waits lose their length
    assert parsed == [
        Click(x=960, y=540),
        Typing(text="a'b"),
        Hotkey(keys=["ctrl", "s"]),
        Scroll(dy=-3),
        Wait(),
        Done(),
    ]


def opencua(code: str, *, action: str | None = "Do it.", fence: str = "python") -> str:
    head = "## Thought:\nThinking.\n\n" + (f"## Action:\n{action}\n\n" if action else "")
    return head + f"## Code:\n```{fence}\n{code}\n```"


def test_opencua_sections_and_keyword_coordinates() -> None:
    parsed = parse_opencua(opencua("pyautogui.moveTo(x=0.25, y=0.5)\npyautogui.dragTo(x=0.75, y=0.5)"), NORM)
    assert (parsed.thought, parsed.action) == ("Thinking.", "Do it.")
    assert parsed.actions == [MoveTo(x=480, y=540), DragTo(x=1440, y=540)]


def test_opencua_wait_and_terminate_as_osworld_reads_them() -> None:
    assert parse_opencua(opencua("computer.wait()", fence="code")).actions == [Wait(seconds=WAIT_SECONDS)]
    assert parse_opencua(opencua("computer.terminate(status='failure')", fence="code")).actions == [Fail()]
    assert parse_opencua(opencua("computer.terminate(status='success')", action=None)).actions == [Done()]
    with pytest.raises(ActionParseError, match="status"):
        parse_opencua(opencua("computer.terminate()"))


def test_opencua_reads_what_osworld_leaves_unprojected_or_broken() -> None:
    # OSWorld projects only click/move/drag calls and has no `computer` for triple_click
    assert parse_opencua(opencua("pyautogui.scroll(-5, x=0.5, y=0.5)"), NORM).actions == [
        Scroll(dy=-5, x=960, y=540)
    ]
    assert parse_opencua(opencua("computer.triple_click(x=0.5, y=0.5)"), NORM).actions == [
        TripleClick(x=960, y=540)
    ]


def test_opencua_refuses_replies_osworld_would_ask_again_for() -> None:
    with pytest.raises(ActionParseError, match="no code block"):
        parse_opencua("## Action:\nClick.\n")
    with pytest.raises(ActionParseError, match="Action"):
        parse_opencua(opencua("pyautogui.click(x=0.5, y=0.5)", action=None), NORM)
    with pytest.raises(ActionParseError):
        parse_opencua(opencua("import os\nos.system('rm -rf /')"), NORM)
