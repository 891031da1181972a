"""Action parity on replies in OSWorld's two PromptAgent action spaces: OSWorld's parsers against ours.

Each reply goes through what OSWorld does with it (``parse_code_from_string`` or
``parse_actions_from_string`` of ``mm_agents/agent.py``, then ``DesktopEnv.step``: its ``'<'`` fix on
pyautogui code, ``PythonController.execute_action`` turning a computer_13 action into pyautogui code,
the loop of ``lib_run_single`` stopping at ``DONE``/``FAIL``), run in the side environment; and through
ours (:func:`~osw_studio.actions.parse_reply`, then :func:`~osw_studio.actions.render_pyautogui`, the
code our guests run, with the runner keeping ``DONE``/``FAIL`` for the end of the step). Both sides'
code is read into the input events a guest would see by :mod:`tests.parity.pyautogui_calls` (never run).

The replies: ``corpus/promptagent_replies.txt`` (published replies, each with its source) and the
format corpora of ``tests/actions/corpus`` (hand-written replies in the styles of GPT-4o and Claude, with
malformed and hostile ones). The events must be equal, or the reply must be listed in
:data:`DIFFERENCES` with why. Allowed reasons: the reference crashes (its example ends with an error)
or does nothing where we act or refuse; or the reference would run something we refuse for safety.
When the reference runs nothing and we refuse the reply, both execute nothing: that counts as equal.
Pauses are compared by place, not length (OSWorld sleeps 2 s on ``WAIT``, our runner 1 s).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from osw_studio.actions import parse_reply, render_pyautogui
from osw_studio.core.actions import Action, CallUser, Done, Fail, Wait
from osw_studio.core.errors import ActionParseError
from tests.actions.test_corpus import load as load_format_corpus
from tests.parity.episodes import FAKE_TIKTOKEN, STUBS
from tests.parity.pyautogui_calls import Event, events
from tests.parity.reference import Reference

CORPUS = Path(__file__).parent / "corpus" / "promptagent_replies.txt"
_SOURCE = re.compile(r"\(commit [0-9a-f]{40}\)|https://github\.com/\S+/issues/\d+")
SPACES = {"pyautogui": "pyautogui", "computer13": "computer_13"}


def load_published() -> list[dict[str, str]]:
    """The replies of ``corpus/promptagent_replies.txt`` (``name``, ``source``, ``space``, ``reply``)."""
    cases: list[dict[str, Any]] = []
    section = ""
    for line in CORPUS.read_text(encoding="utf-8").split("\n"):
        if line.startswith("### "):
            cases.append({"name": line[4:].strip()})
            section = ""
        elif line.startswith("--- ") and line[4:].strip() in ("source", "space", "reply"):
            section = line[4:].strip()
            cases[-1][section] = []
        elif section:
            cases[-1][section].append(line)
    return [{k: v if k == "name" else "\n".join(v).rstrip("\n") for k, v in case.items()} for case in cases]


def _cases() -> list[dict[str, str]]:
    cases = [{**case, "space": case["space"].strip()} for case in load_published()]
    for fmt, space in SPACES.items():
        cases += [
            {"name": f"{fmt}:{case['name']}", "space": space, "reply": case["reply"], "source": ""}
            for case in load_format_corpus(fmt)
        ]
    return cases


CASES = _cases()

_CRASH = (
    "OSWorld crashes on it (its example ends in an error, no action); we run what the model plainly meant"
)
_CRASH_REFUSE = "OSWorld crashes on it (its example ends in an error); we refuse the reply as a step error"
_NOTHING = "OSWorld runs nothing for it; we run what the model plainly meant (more lenient)"
_RAISES = "OSWorld's guest code raises or pyautogui sends nothing, so nothing happens; we refuse the reply"
_WORD = (
    "OSWorld does nothing: step() compares the JSON object with the bare words, so DONE/FAIL do not end the "
    "episode and WAIT does not pause; we take the model's word"
)
_UNSAFE = "OSWorld would run this Python on the guest; we run only literal pyautogui calls (safety)"
_STRICT = "OSWorld passes it on and pyautogui acts on it; we refuse it as malformed (stricter)"
_NON_ASCII = (
    "pyautogui cannot type these characters on X11, so OSWorld types nothing of them; we paste the text "
    "through the clipboard (more lenient)"
)
DIFFERENCES: dict[str, str] = {
    "science-semicolons-in-string": (
        f"OSWorld splits the code at every ';', also inside a string, and the guest's code does not parse: "
        f"{_NOTHING}"
    ),
    "science-not-pyautogui": _RAISES,
    "science-done-as-language-tag": (
        "```DONE``` on lines of its own: OSWorld's fence pattern takes DONE for the language tag and runs "
        f"an empty block, so the episode goes on: {_NOTHING}"
    ),
    "pyautogui:prose-then-done-line": f"DONE on its own line after prose: {_NOTHING}",
    "pyautogui:bare-code-no-fences": f"code without a fence: {_NOTHING}",
    "pyautogui:semicolon-inside-string": (
        f"OSWorld splits the code at every ';', also inside a string, and the guest's code does not parse: "
        f"{_NOTHING}"
    ),
    "pyautogui:key-aliases-normalised": (
        "'control' is not a pyautogui key (OSWorld's hotkey presses shift+esc only); we read it as ctrl"
    ),
    "pyautogui:unicode-write-kept": _NON_ASCII,
    "pyautogui:move-rel-without-pointer": (
        "a relative move from a pointer the step did not place: OSWorld moves from wherever the pointer is; "
        "we refuse it, since the result is not reproducible (stricter)"
    ),
    **{
        f"pyautogui:adversarial-{name}": _UNSAFE
        for name in (
            "os-system", "eval", "open", "subprocess", "dunder-import", "getattr", "screenshot", "loop",
            "comprehension", "function-def", "arithmetic", "starred-args",
        )
    },
    **{
        f"pyautogui:{name}": _RAISES
        for name in ("not-an-action-locate", "image-path-click", "unknown-key", "undefined-tag",
                     "one-coordinate", "unknown-keyword")
    },
    "pyautogui:bool-coordinate": f"True as a coordinate: {_STRICT}",
    "pyautogui:too-many-clicks": f"five clicks at once: {_STRICT}",
    "pyautogui:tween-refused": f"a tween function as an argument: {_STRICT}",
    **{
        f"computer13:{name}": f"a JSON array of actions in one block: {_CRASH}"
        for name in ("raw-list", "fenced-list-multiline", "done-string-in-list", "mouse-down-up",
                     "key-down-up", "claude-json-with-reasoning")
    },
    "computer13:prose-then-raw-json": f"JSON after prose, without a fence: {_CRASH}",
    "computer13:jsonc-tag": f"a ```jsonc fence: {_CRASH}",
    "computer13:wait-in-block": f"WAIT inside a fence: {_CRASH}",
    "computer13:hotkey-plus-string": f"keys written 'ctrl+alt+t': {_CRASH}",
    "computer13:lowercase-action-type": f"a lower-case action_type: {_CRASH}",
    "computer13:call-user-extension": (
        f"CALL_USER (not one of OSWorld's types): {_CRASH} (hand the task back)"
    ),
    **{
        f"computer13:{name}": _WORD
        for name in ("done-object", "fail-object-with-parameters", "done-with-message", "null-parameters",
                     "wait-seconds-extension")
    },
    "computer13:typing-unicode": _NON_ASCII,
    "computer13:typing-unicode-escapes": _NON_ASCII,
    **{
        f"computer13:{name}": _CRASH_REFUSE
        for name in (
            "unknown-action-type", "missing-action-type", "missing-required-parameter", "x-without-y",
            "unknown-key", "unknown-key-in-hotkey", "num-clicks-too-many", "scroll-without-amount",
            "trailing-comma", "truncated-json", "truncated-fence", "python-instead-of-json", "prose-only",
            "number-not-action", "parameters-is-list", "adversarial-negative-clicks", "second-block-invalid",
            "empty-list", "unknown-action-type-flat",
        )
    },
    **{
        f"computer13:{name}": f"an unknown parameter, which OSWorld ignores: {_STRICT}"
        for name in ("unknown-parameter", "flat-form-unknown-parameter", "extra-top-level-key")
    },
    **{
        f"computer13:{name}": f"a coordinate that is not a usable number: {_STRICT}"
        for name in ("string-coordinate", "bool-coordinate", "nan-coordinate", "adversarial-huge-number")
    },
    "computer13:fractional-scroll": f"a scroll of 2.5 clicks: {_STRICT}",
    "computer13:empty-hotkey": _RAISES,
    "computer13:bad-button": _RAISES,
}  # fmt: skip
"""Replies on which we deliberately differ from the reference, and why (one of the reasons above)."""

REFERENCE = """
import random
random.seed(0)
agent, controller_module, env_module = m0, m1, m2

class Recorder(controller_module.PythonController):
    def __init__(self):
        self.commands = []
    def execute_python_command(self, command):
        self.commands.append(command)

def run(space, reply):
    try:
        if space == "pyautogui":
            parsed = agent.parse_code_from_string(reply)
        else:
            parsed = agent.parse_actions_from_string(reply)
    except ValueError as exc:  # PromptAgent.predict returns no actions; lib_run_single iterates None
        return [["crash", "ValueError: " + str(exc)[:80]]]
    if isinstance(parsed, str):  # the JSON error comes back as the actions; stepping a character fails
        return [["crash", parsed[:80]]]
    steps = []
    for action in parsed:
        if action in ["WAIT", "FAIL", "DONE"]:
            steps.append(["word", action])
            if action != "WAIT":
                break
            continue
        if space == "pyautogui":
            steps.append(["code", env_module._fix_pyautogui_less_than_bug(action)])
            continue
        recorder = Recorder()
        try:
            recorder.execute_action(action)
        except Exception as exc:
            steps.append(["crash", type(exc).__name__ + ": " + str(exc)[:80]])
            break
        if isinstance(action, dict) and action.get("action_type") in ["WAIT", "FAIL", "DONE"]:
            steps.append(["nothing", action["action_type"]])  # step() compares the dict with the words
        steps += [["code", command] for command in recorder.commands]
    return steps

result = {name: run(space, reply) for name, space, reply in cases}
"""


@pytest.fixture(scope="module")
def theirs(reference: Reference) -> dict[str, list[list[str]]]:
    """The reference's steps for every reply, in one call."""
    reference.stub(*STUBS)
    reference.exec(FAKE_TIKTOKEN)
    reference.exec("", modules=("desktop_env.controllers.python",))
    reference.stub(
        "gymnasium", "desktop_env.controllers.setup", "desktop_env.evaluators", "desktop_env.providers"
    )
    cases = [(c["name"], c["space"], c["reply"]) for c in CASES]
    return reference.exec(  # type: ignore[no-any-return]
        f"cases = {cases!r}\n" + REFERENCE,
        modules=("mm_agents.agent", "desktop_env.controllers.python", "desktop_env.desktop_env"),
    )


def _pauses(found: list[Event]) -> list[Event]:
    merged: list[Event] = []
    for event in found:
        event = ("wait",) if event[0] == "sleep" else event
        if not (event == ("wait",) and merged and merged[-1] == ("wait",)):
            merged.append(event)
    return merged


def reference_events(steps: list[list[str]]) -> list[Event]:
    """What the guest sees when OSWorld steps through ``steps``."""
    found: list[Event] = []
    for kind, value in steps:
        if kind == "code":
            # A guest's python -c that does not parse runs nothing.
            found += [event for event in events(value) if event[0] != "syntax_error"]
        elif kind == "word":
            found.append(("wait",) if value == "WAIT" else (value.lower(),))
        else:
            found.append((kind, value))
    return _pauses(found)


def our_events(actions: list[Action]) -> list[Event]:
    """What the guest sees when our runner executes ``actions`` (terminal ones end the step)."""
    found: list[Event] = []
    for action in actions:
        if isinstance(action, Wait):
            found.append(("wait",))
        elif isinstance(action, CallUser):
            found.append(("call_user",))
        elif not isinstance(action, Done | Fail):
            found += events(render_pyautogui([action]))
    found += [("done",) if isinstance(a, Done) else ("fail",) for a in actions if isinstance(a, Done | Fail)][
        :1
    ]
    return _pauses(found)


def test_the_corpus_is_large_and_varied() -> None:
    published = load_published()
    assert all(case.get("source") for case in published), "every published reply names its source"
    for case in published:  # a repository path at a commit, or an issue's address
        assert _SOURCE.search(case["source"]), f"{case['name']}: name the commit or the issue's address"
    assert any("hand-written" not in c["source"] and "by hand" not in c["source"] for c in published), (
        "the corpus keeps real model replies, not only hand-written fixtures"
    )
    assert len(CASES) >= 100
    assert len({c["name"] for c in CASES}) == len(CASES), "case names repeat"


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_replies_lead_to_the_reference_actions(
    theirs: dict[str, list[list[str]]], case: dict[str, str]
) -> None:
    expected = reference_events(theirs[case["name"]])
    fmt = "pyautogui" if case["space"] == "pyautogui" else "computer13"
    try:
        ours: list[Event] | str = our_events(parse_reply(case["reply"], fmt)[1])
    except ActionParseError as exc:
        ours = f"refused: {exc}"
    same = ours == expected or (isinstance(ours, str) and expected == [])
    if case["name"] in DIFFERENCES:
        assert not same, f"{case['name']} no longer differs: drop it from DIFFERENCES"
    else:
        assert same, f"{case['name']}: ours {ours!r}, reference {expected!r}"


def test_each_listed_difference_is_a_corpus_reply_with_an_allowed_reason() -> None:
    reasons = (
        _CRASH,
        _CRASH_REFUSE,
        _NOTHING,
        _RAISES,
        _WORD,
        _UNSAFE,
        _STRICT,
        _NON_ASCII,
        "'control'",
        "a relative",
    )
    names = {case["name"] for case in CASES}
    for name, reason in DIFFERENCES.items():
        assert name in names, f"{name} is not in the corpus"
        assert any(r in reason or reason.startswith(r) for r in reasons), f"{name}: {reason}"
