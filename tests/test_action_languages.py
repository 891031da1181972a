"""The action languages are listed once (``core/action_languages.py``); every other list derives from it."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import pytest

from osw_studio.core.action_languages import ACTION_SPACES, IDS, PARSED, language

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "osw_studio" / "core" / "action_languages.py"
NAMES = {*IDS, *ACTION_SPACES}


def _literal_slices(tree: ast.AST) -> set[int]:
    """The nodes that are a ``Literal[...]``'s arguments (types, checked against the spec below)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == "Literal"
        ):
            out.add(id(node.slice))
    return out


def _hand_written(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    types = _literal_slices(tree)
    lines = []
    for node in ast.walk(tree):
        if id(node) in types:
            continue
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [k for k in node.keys if k is not None]
        else:
            continue
        named = {i.value for i in items if isinstance(i, ast.Constant) and i.value in NAMES}
        if len(named) >= 2:
            lines.append(node.lineno)
    return lines


def test_no_module_lists_the_languages_by_hand() -> None:
    found = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / "osw_studio").rglob("*.py"))
        if path != SPEC and (lines := _hand_written(path))
    }
    assert found == {}, (
        f"action languages written by hand (derive them from core/action_languages.py): {found}"
    )


def test_the_types_name_the_spec_languages() -> None:
    from osw_studio.actions import FORMATS, ActionFormat
    from osw_studio.settings.model import ActionSpace
    from osw_studio.trajectory.exporters.replies import Language

    assert typing.get_args(ActionFormat) == PARSED == FORMATS
    assert set(typing.get_args(Language)) == set(IDS)
    assert typing.get_args(ActionSpace) == ACTION_SPACES


def test_the_cli_offers_the_parsed_languages() -> None:
    from osw_studio.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    actions = sub.choices["actions"]  # type: ignore[index]
    commands = next(a for a in actions._actions if a.choices and "parse" in a.choices)
    for name, option in (("parse", "format"), ("render", "to")):
        command = commands.choices[name]  # type: ignore[index]
        choices = next(a.choices for a in command._actions if a.dest == option)
        assert tuple(choices) == PARSED


@pytest.mark.parametrize(("name", "expected"), [("computer_13", "computer13"), ("computer13", "computer13")])
def test_either_spelling_names_the_json_language(name: str, expected: str) -> None:
    assert language(name).id == expected


def test_an_unknown_language_says_the_nearest() -> None:
    with pytest.raises(ValueError, match=r"did you mean 'computer13'"):
        language("computer-13")
