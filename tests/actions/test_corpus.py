"""The corpus: realistic replies per format (GPT-4o, Claude, UI-TARS, DART-GUI style), each with the
actions it must give or the error it must raise.

Each file under ``corpus/`` holds cases::

    ### name
    --- reply
    (the reply, verbatim, any number of lines)
    --- expect
    [actions as JSON, defaults left out]      (or: --- error, then a substring of the message)
    --- space
    {"mode": "rel1000"}                       (optional, uitars only; default smart on 1920x1080)
    --- thought
    (optional, uitars only: the expected thought)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from osw_studio.actions import CoordinateSpace, parse_computer13, parse_pyautogui, parse_uitars
from osw_studio.core.actions import dump_actions
from osw_studio.core.errors import ActionParseError

CORPUS = Path(__file__).parent / "corpus"
FORMATS = ("pyautogui", "computer13", "uitars")


def load(fmt: str) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    section = ""
    for line in (CORPUS / f"{fmt}.txt").read_text(encoding="utf-8").split("\n"):
        if line.startswith("### "):
            cases.append({"name": line[4:].strip()})
            section = ""
        elif line.startswith("--- ") and line[4:].strip() in ("reply", "expect", "error", "space", "thought"):
            section = line[4:].strip()
            cases[-1][section] = []
        elif section:
            cases[-1][section].append(line)
    for case in cases:
        for key in ("reply", "expect", "error", "space", "thought"):
            if key in case:
                case[key] = "\n".join(case[key]).rstrip("\n")
    return cases


def parse(fmt: str, case: dict[str, Any]) -> tuple[str | None, list[Any]]:
    if fmt == "pyautogui":
        return None, parse_pyautogui(case["reply"])
    if fmt == "computer13":
        return None, parse_computer13(case["reply"])
    options = json.loads(case.get("space") or "{}")
    reply = parse_uitars(case["reply"], CoordinateSpace(**{"mode": "smart", **options}))
    return reply.thought, reply.actions


ALL = [(fmt, case) for fmt in FORMATS for case in load(fmt)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_corpus_is_large_and_mixed(fmt: str) -> None:
    cases = load(fmt)
    assert len(cases) >= 60
    assert len({c["name"] for c in cases}) == len(cases), "case names repeat"
    assert sum("error" in c for c in cases) >= 15, "too few malformed or adversarial replies"
    assert all(("expect" in c) != ("error" in c) for c in cases), "each case needs expect or error"


@pytest.mark.parametrize(("fmt", "case"), ALL, ids=[f"{f}:{c['name']}" for f, c in ALL])
def test_corpus_case(fmt: str, case: dict[str, Any]) -> None:
    if "error" in case:
        with pytest.raises(ActionParseError) as info:
            parse(fmt, case)
        assert case["error"] in str(info.value)
        return
    thought, actions = parse(fmt, case)
    assert dump_actions(actions) == json.loads(case["expect"])
    if "thought" in case:
        assert thought == case["thought"]
