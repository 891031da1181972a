"""Fuzzing: whatever the text, parsers return actions or raise ActionParseError, and nothing outside the
whitelist is ever accepted."""

from __future__ import annotations

import ast
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from osw_studio.actions import CoordinateSpace, parse_computer13, parse_pyautogui, parse_uitars
from osw_studio.actions.pyautogui import PYAUTOGUI_FUNCTIONS
from osw_studio.core.actions import Action
from osw_studio.core.errors import ActionParseError

SPACE = CoordinateSpace(mode="smart")
PARSERS: dict[str, Callable[[str], list[Action]]] = {
    "pyautogui": parse_pyautogui,
    "computer13": parse_computer13,
    "uitars": lambda text: parse_uitars(text, SPACE).actions,
}
SEEDS = {
    "pyautogui": "Thought.\n```python\nimport pyautogui\ntag_1 = (10, 20)\npyautogui.click(tag_1)\n"
    "pyautogui.write('hello')\npyautogui.hotkey('ctrl', 's')\ntime.sleep(0.5)\n```\nDONE",
    "computer13": '```json\n[{"action_type": "CLICK", "parameters": {"x": 10, "y": 20}}, '
    '{"action_type": "TYPING", "parameters": {"text": "hi"}}, "DONE"]\n```',
    "uitars": "Thought: Click then type.\nAction: click(start_box='<|box_start|>(100,200)<|box_end|>')\n\n"
    "type(content='hello\\n')\n\nscroll(start_box='(5,5)', direction='down')",
}
ODD = st.characters(
    categories=("Cc", "Cf", "Co", "Lo", "Mn", "So", "Zl", "Zp", "Zs"), exclude_characters="\x00"
) | st.sampled_from(["\x00", "\u202e", "\ufeff", "\u200b", "𝕏", "🙂", "\\", "'", '"', "`", "(", "{", "["])


def run(fmt: str, text: str) -> None:
    try:
        result = PARSERS[fmt](text)
    except ActionParseError as exc:
        assert str(exc)
    else:
        assert isinstance(result, list) and result


@pytest.mark.parametrize("fmt", sorted(PARSERS))
@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=300))
def test_random_text_raises_only_parse_errors(fmt: str, text: str) -> None:
    run(fmt, text)


@pytest.mark.parametrize("fmt", sorted(PARSERS))
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_truncated_replies_raise_only_parse_errors(fmt: str, data: st.DataObject) -> None:
    seed = SEEDS[fmt]
    cut = data.draw(st.integers(0, len(seed)))
    run(fmt, seed[:cut])


@pytest.mark.parametrize("fmt", sorted(PARSERS))
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_odd_unicode_spliced_into_replies(fmt: str, data: st.DataObject) -> None:
    seed = SEEDS[fmt]
    at = data.draw(st.integers(0, len(seed)))
    junk = data.draw(st.text(alphabet=ODD, min_size=1, max_size=20))
    run(fmt, seed[:at] + junk + seed[at:])


@pytest.mark.parametrize("fmt", sorted(PARSERS))
@pytest.mark.parametrize("depth", [50, 1000, 100_000])
def test_deeply_nested_input_is_refused(fmt: str, depth: int) -> None:
    for text in (
        "pyautogui.click(" + "(" * depth + "1" + ")" * depth + ", 2)",
        "[" * depth + "]" * depth,
        '{"action_type": ' * depth,
        "Action: click(start_box='" + "(" * depth + "1,2" + ")" * depth + "')",
    ):
        run(fmt, text)


@pytest.mark.parametrize("fmt", sorted(PARSERS))
def test_huge_inputs_are_refused_quickly(fmt: str) -> None:
    with pytest.raises(ActionParseError, match="characters long"):
        PARSERS[fmt]("x" * 2_000_000)
    run(fmt, "pyautogui.click(" + "9" * 10_000 + ", 1)")
    run(fmt, '{"action_type": "CLICK", "parameters": {"x": ' + "9" * 10_000 + ', "y": 1}}')


# A small grammar of Python statements, some whitelisted and some not.
_MODULES = st.sampled_from(["pyautogui", "time", "pyperclip", "os", "subprocess", "sys", "builtins", "pg"])
_FUNCS = st.sampled_from(
    [*PYAUTOGUI_FUNCTIONS, "sleep", "copy", "paste", "system", "run", "popen", "screenshot", "exit", "eval"]
)
_BARE = st.sampled_from(
    ["eval", "exec", "open", "__import__", "getattr", "print", "compile", "click", "input"]
)
_LITERALS = st.one_of(
    st.integers(-5000, 5000).map(str),
    st.sampled_from(["'a'", "'enter'", "'ctrl'", "(1, 2)", "[3, 4]", "tag_1", "'x' * 3", "1 + 1"]),
    st.sampled_from(["os.environ", "lambda: 0", "[i for i in range(3)]", "f'{1}'", "*tag_1", "**{}"]),
)


@st.composite
def _statements(draw: st.DrawFn) -> str:
    args = ", ".join(draw(st.lists(_LITERALS, max_size=3)))
    kind = draw(st.integers(0, 9))
    if kind < 5:
        return f"{draw(_MODULES)}.{draw(_FUNCS)}({args})"
    if kind == 5:
        return f"{draw(_BARE)}({args})"
    if kind == 6:
        return f"import {draw(_MODULES)}" + draw(st.sampled_from(["", " as pg", " as os"]))
    if kind == 7:
        return draw(st.sampled_from(["tag_1 = (10, 20)", "DONE", "WAIT", "x = os", "pass"]))
    if kind == 8:
        return f"for i in range(2): {draw(_MODULES)}.{draw(_FUNCS)}({args})"
    return f"{draw(_MODULES)}.{draw(_FUNCS)}.{draw(_FUNCS)}({args})"


_ALLOWED_CALLS = {("pyautogui", f) for f in PYAUTOGUI_FUNCTIONS} | {("time", "sleep"), ("pyperclip", "copy")}


def _calls(code: str) -> list[tuple[str, str]]:
    aliases = {"pyautogui": "pyautogui", "time": "time", "pyperclip": "pyperclip"}
    found = []
    for stmt in ast.parse(code).body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.name in aliases:
                    aliases[alias.asname or alias.name] = alias.name
                else:
                    aliases.pop(alias.asname or alias.name, None)
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                    found.append((aliases.get(func.value.id, func.value.id), func.attr))
                else:
                    found.append(("?", ast.unparse(func)))
    return found


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(_statements(), min_size=1, max_size=6), fenced=st.booleans())
@example(lines=["pyautogui.click(**{}, 0)", "DONE"], fenced=False)
def test_no_call_outside_the_whitelist_is_ever_accepted(lines: list[str], fenced: bool) -> None:
    code = "\n".join(lines)
    text = f"```python\n{code}\n```" if fenced else code
    try:
        accepted = parse_pyautogui(text)
    except ActionParseError:
        return
    try:
        calls = _calls(code)
    except SyntaxError:
        # Not code: only a reply's closing WAIT / DONE / FAIL word may have been read, never a call.
        assert [a.kind for a in accepted] in (["wait"], ["done"], ["fail"]), (accepted, code)
        return
    for call in calls:
        assert call in _ALLOWED_CALLS, f"accepted {call} in:\n{code}"


@pytest.mark.parametrize(
    "code",
    [
        "import os; os.system('rm -rf /')",
        "pyautogui.click(*args)",
        "eval('pyautogui.click(1, 2)')",
        "exec('import os')",
        "open('/etc/passwd')",
        "__import__('os').system('id')",
        "pyautogui.click(x=__import__('os').getpid(), y=1)",
        "[pyautogui.click(i, i) for i in range(3)]",
        "while True: pyautogui.press('a')",
        "pyautogui.press(**{'keys': 'a'})",
        "getattr(pyautogui, 'click')(1, 2)",
        "pyautogui.screenshot().save('/tmp/x.png')",
        "import subprocess as pyautogui\npyautogui.run(['id'])",
        "from os import system as click\nclick('id')",
        "def f():\n    pyautogui.click(1, 2)\nf()",
        "pyautogui.write(open('/etc/passwd').read())",
        "pyautogui.click(lambda: 1, 2)",
        "with open('x') as f: pass",
        "pyautogui.platformModule._keyDown('a')",
        "pyautogui.click(1, 2) if True else None",
        "x = pyautogui.position()\npyautogui.click(x)",
    ],
)
def test_adversarial_code_is_refused(code: str) -> None:
    with pytest.raises(ActionParseError):
        parse_pyautogui(f"```python\n{code}\n```")
