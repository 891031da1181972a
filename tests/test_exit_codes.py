"""One table of exit codes: every command's code comes from ``core/exit_codes.py``, the README shows it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from osw_studio.core.exit_codes import ExitCode, markdown_table

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = [*sorted((ROOT / "osw_studio" / "cli").glob("*.py")), ROOT / "osw_studio" / "app.py"]


def test_the_readme_table_is_the_module_table() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert markdown_table() in readme
    start = readme.index("| code | name | meaning |")
    rows = readme[start:].split("\n\n", 1)[0]
    assert rows == markdown_table()


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: p.name)
def test_commands_return_codes_from_the_table(path: Path) -> None:
    """No handler returns a bare number: a code not in the table could not be looked up."""
    tree = ast.parse(path.read_text(encoding="utf-8"))

    def bare(value: ast.expr | None) -> bool:
        if isinstance(value, ast.IfExp):
            return bare(value.body) or bare(value.orelse)
        return isinstance(value, ast.Constant) and type(value.value) is int

    numbers = [ret.lineno for ret in ast.walk(tree) if isinstance(ret, ast.Return) and bare(ret.value)]
    assert numbers == [], f"{path.name} returns bare numbers at lines {numbers}: use ExitCode"


def test_check_model_codes_are_in_the_table() -> None:
    from osw_studio.cli.model import EXIT_CODES, OTHER_FAILURE

    assert {*EXIT_CODES.values(), OTHER_FAILURE} <= set(ExitCode)
    assert len({*EXIT_CODES.values(), OTHER_FAILURE}) == len(ExitCode) - 4  # all but 0, 1, 2 and 130
