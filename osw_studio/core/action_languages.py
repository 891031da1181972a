"""One spec per action language (what a model writes its actions in) that every list of them derives from.

Parsing (``actions.parse_reply``), rendering, the exporters and the CLI's ``--format`` choices derive
their lists from :data:`LANGUAGES`; ``tests/test_action_languages.py`` fails on a list written by hand.
OSWorld's settings spell the JSON action space ``computer_13`` (:attr:`LanguageSpec.action_space`); the
language itself is ``computer13`` everywhere else, and :func:`language` takes either spelling.

Examples:
    >>> PARSED, language("computer_13").id, language_of_action_space("computer_13")
    (('pyautogui', 'computer13', 'uitars'), 'computer13', 'computer13')
    >>> try:
    ...     language("uitar")
    ... except ValueError as exc:
    ...     print(str(exc).split(";")[0])
    unknown action language 'uitar' (did you mean 'uitars'?)
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class LanguageSpec:
    """One action language.

    Attributes:
        id: Its name in the studio (``--format``, exports, the agent specs' ``language``).
        parsed: Whether ``actions.parse_reply`` and ``actions.render`` read and write it (the others have
            parsers of their own: ``actions.qwen3vl``, ``actions.opencua``).
        action_space: Its name as a settings ``action_space`` (OSWorld's spelling), or None when no
            setting names it (a language only its own agent writes).
        coords: The coordinate mode ``osw-studio actions parse`` assumes without ``--coords`` (the agents
            that write a language say their own, in ``core/agent_specs.py``).
        truncates: OSWorld's agents for it truncate the model's numbers to pixels (the others round).
    """

    id: str
    parsed: bool
    action_space: str | None
    coords: str = "abs"
    truncates: bool = False


LANGUAGES: tuple[LanguageSpec, ...] = (
    LanguageSpec("pyautogui", parsed=True, action_space="pyautogui"),
    LanguageSpec("computer13", parsed=True, action_space="computer_13"),
    LanguageSpec("uitars", parsed=True, action_space="uitars", coords="smart"),
    LanguageSpec("qwen3vl", parsed=False, action_space=None, truncates=True),
    LanguageSpec("opencua", parsed=False, action_space=None, truncates=True),
)
"""Every action language, in the order the CLI lists them."""

COMPUTER13 = LANGUAGES[1]

IDS: tuple[str, ...] = tuple(spec.id for spec in LANGUAGES)
"""Every language's id."""

PARSED: tuple[str, ...] = tuple(spec.id for spec in LANGUAGES if spec.parsed)
"""The languages ``actions.parse_reply`` reads and ``actions.render`` writes."""

ACTION_SPACES: tuple[str, ...] = tuple(spec.action_space for spec in LANGUAGES if spec.action_space)
"""The settings' ``action_space`` values."""

_BY_NAME = {**{s.action_space: s for s in LANGUAGES if s.action_space}, **{s.id: s for s in LANGUAGES}}


def language(name: str) -> LanguageSpec:
    """The spec of a language, by its id or its settings spelling.

    Raises:
        ValueError: No language has that name; the message names the nearest one.
    """
    spec = _BY_NAME.get(name)
    if spec is not None:
        return spec
    near = difflib.get_close_matches(name, list(_BY_NAME), n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    raise ValueError(f"unknown action language {name!r}{hint}; known: {', '.join(IDS)}")


def language_of_action_space(action_space: str | None) -> Literal["pyautogui", "computer13"]:
    """The language a prompt agent with this settings ``action_space`` writes: JSON or pyautogui code.

    >>> [language_of_action_space(s) for s in ("computer_13", "uitars", None)]
    ['computer13', 'pyautogui', 'pyautogui']
    """
    return "computer13" if action_space == COMPUTER13.action_space else "pyautogui"
