r"""Prompt templates, kept as text files under ``resources/prompts/``, not scattered in code.

Templates use ``$name`` placeholders (:class:`string.Template`), so the JSON and code they show need no
escaping. The files ship inside the wheel as ``osw_studio/resources/prompts/``; in a checkout they are
read from the repository's ``resources/prompts/``.

Examples:
    >>> "$instruction" in load_prompt("uitars_computer")
    True
    >>> render_prompt("osworld_step_a11y_tree", accessibility_tree="tag name").splitlines()[-1]
    'tag name'
"""

from __future__ import annotations

import functools
import string
from pathlib import Path

from osw_studio.core.errors import OswError

_PACKAGE_DIR = Path(__file__).resolve().parent.parent


def prompt_dirs() -> list[Path]:
    """Where templates are looked for: the installed package's resources, then the checkout's."""
    return [_PACKAGE_DIR / "resources" / "prompts", _PACKAGE_DIR.parent / "resources" / "prompts"]


@functools.cache
def load_prompt(name: str) -> str:
    """The text of template ``name`` (without extension; ``.txt`` or ``.md``), trailing newline removed.

    Raises:
        OswError: If no such template exists (a broken installation).
    """
    for folder in prompt_dirs():
        for suffix in (".txt", ".md"):
            path = folder / f"{name}{suffix}"
            if path.is_file():
                return path.read_text(encoding="utf-8").rstrip("\n")
    raise OswError(
        f"prompt template {name!r} not found",
        where=" or ".join(str(d) for d in prompt_dirs()),
        hint="reinstall OSW Studio; the resources folder is missing",
    )


def render_prompt(name: str, **values: object) -> str:
    """Template ``name`` with ``$placeholders`` filled in; unknown placeholders are left as they are."""
    return string.Template(load_prompt(name)).safe_substitute({k: str(v) for k, v in values.items()})
