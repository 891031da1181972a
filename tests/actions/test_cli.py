"""``osw-studio actions parse`` and ``actions render`` as a user runs them."""

from __future__ import annotations

import io
import json

import pytest

from osw_studio.cli import main


def run(argv: list[str], stdin: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_parse_prints_actions_as_json(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reply = (
        "Thought: Save it.\nAction: hotkey(key='ctrl s')\n\n"
        "click(start_box='<|box_start|>(500,500)<|box_end|>')"
    )
    code, out, err = run(
        ["actions", "parse", "--format", "uitars", "--coords", "rel1000"], reply, monkeypatch, capsys
    )
    assert code == 0 and err == ""
    assert json.loads(out) == [
        {"kind": "hotkey", "keys": ["ctrl", "s"]},
        {"kind": "click", "x": 960, "y": 540},
    ]


def test_parse_error_goes_to_stderr_with_exit_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        ["actions", "parse", "--format", "pyautogui"],
        "```python\nimport os\nos.system('id')\n```",
        monkeypatch,
        capsys,
    )
    assert code == 1 and out == ""
    assert err.startswith("error: line 3: call of os.system is not allowed")
    assert "Traceback" not in err


def test_parse_with_a_resized_image(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["actions", "parse", "--format", "computer13", "--coords", "resized", "--image", "1280x720"]
    code, out, _ = run(
        argv, '{"action_type": "MOVE_TO", "parameters": {"x": 640, "y": 360}}', monkeypatch, capsys
    )
    assert code == 0 and json.loads(out) == [{"kind": "move_to", "x": 960, "y": 540}]


def test_bad_screen_size_is_a_user_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        ["actions", "parse", "--format", "pyautogui", "--screen", "big"], "DONE", monkeypatch, capsys
    )
    assert code == 1 and "--screen must look like 1920x1080" in err


def test_render_then_parse_round_trips(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    actions = [{"kind": "click", "x": 100, "y": 200}, {"kind": "typing", "text": "grüß\n"}, {"kind": "done"}]
    for fmt in ("pyautogui", "computer13", "uitars"):
        code, text, _ = run(["actions", "render", "--to", fmt], json.dumps(actions), monkeypatch, capsys)
        assert code == 0
        code, out, _ = run(["actions", "parse", "--format", fmt], text, monkeypatch, capsys)
        assert code == 0
        parsed = json.loads(out)
        if fmt == "pyautogui":  # pasted lines and Enter come back as separate actions
            assert parsed == [
                actions[0],
                {"kind": "typing", "text": "grüß"},
                {"kind": "press", "key": "enter"},
                actions[2],
            ]
        else:
            assert parsed == actions


def test_render_refuses_invalid_actions(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        ["actions", "render", "--to", "pyautogui"], '[{"kind": "click", "x": "left"}]', monkeypatch, capsys
    )
    assert code == 1 and out == "" and err.startswith("error: $[0].click.x:")
    code, _, err = run(
        ["actions", "render", "--to", "pyautogui"], '[{"kind": "call_user"}]', monkeypatch, capsys
    )
    assert code == 1 and "call_user has no pyautogui form" in err
