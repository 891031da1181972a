r"""OSWorld's own prompt text, read at run time from its installed ``desktop-env`` package.

Profiles with ``prompts: reference`` send the very prompts OSWorld's agents send, so that a score can
stand beside the leaderboard's. The text is never copied into OSW Studio: it is read from the package the
user installed (``pip install --no-deps desktop-env``), by parsing the module's source for a top-level
string constant. Nothing of the package is imported or executed. Each prompt comes with where it was read
from and a SHA-256 of its text, which the run records.

The package is looked for in ``$OSW_REFERENCE_SITE`` (a ``site-packages`` folder, e.g. of a side
environment), then among the current interpreter's installed distributions.

Examples:
    >>> import pathlib, tempfile
    >>> module = pathlib.Path(tempfile.mkdtemp(), "m.py")
    >>> _ = module.write_text('A = " text ".strip()\nB = f(1)\n')
    >>> _constants(module)
    {'A': 'text'}
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from osw_studio.core.errors import SettingsError

DISTRIBUTION = "desktop-env"
"""The PyPI name of OSWorld's package."""


@dataclass(frozen=True)
class ReferencePrompt:
    """One prompt constant of OSWorld's package.

    Attributes:
        text: The prompt, as the module defines it (after a ``.strip()`` the source applies).
        source: ``desktop-env VERSION mm_agents/prompts.py:NAME``.
        sha256: The SHA-256 of ``text`` (UTF-8), hex.
    """

    text: str
    source: str
    sha256: str


def reference_site() -> tuple[Path, str] | None:
    """The folder holding ``mm_agents`` and the package version, or None when it is not installed."""
    configured = os.environ.get("OSW_REFERENCE_SITE")
    if configured:
        site = Path(configured)
        if not (site / "mm_agents").is_dir():
            return None
        versions = sorted(site.glob("desktop_env-*.dist-info"))
        version = (
            versions[-1].name.removeprefix("desktop_env-").removesuffix(".dist-info") if versions else "?"
        )
        return site, version
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    site = Path(str(dist.locate_file("")))
    return (site, dist.version) if (site / "mm_agents").is_dir() else None


@functools.cache
def _constants(path: Path) -> dict[str, str]:
    """Top-level string constants of a module, read from its syntax tree (``"..."`` or ``"...".strip()``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: dict[str, str] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if not isinstance(target, ast.Name):
            continue
        value = node.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            found[target.id] = value.value
        elif (
            isinstance(value, ast.Call)
            and not value.args
            and not value.keywords
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "strip"
            and isinstance(value.func.value, ast.Constant)
            and isinstance(value.func.value.value, str)
        ):
            found[target.id] = value.func.value.value.strip()
    return found


def reference_prompt(module: str, name: str) -> ReferencePrompt | None:
    """The constant ``name`` of ``module`` (a path such as ``mm_agents/prompts.py``); None if not installed.

    Raises:
        SettingsError: If the package is installed but has no such constant (another version).
    """
    found = reference_site()
    if found is None:
        return None
    site, version = found
    path = site / module
    try:
        constants = _constants(path)
    except (OSError, SyntaxError, ValueError) as exc:
        raise SettingsError(
            f"OSWorld's prompts cannot be read: {exc}", where=str(path), hint="reinstall desktop-env"
        ) from None
    if name not in constants:
        raise SettingsError(
            f"desktop-env {version} has no prompt {name}",
            where=str(path),
            hint="install desktop-env 1.0.2, or set the profile's prompts to own",
        )
    text = constants[name]
    return ReferencePrompt(
        text=text,
        source=f"{DISTRIBUTION} {version} {module}:{name}",
        sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
    )


@dataclass(frozen=True)
class PromptAgentTexts:
    """The texts OSWorld's ``PromptAgent.predict`` writes inline, found by the shape of its code.

    Attributes:
        task: The sentence appended to the system prompt, with ``{}`` for the instruction.
        steps: Per observation type, the user turn's text (``{}`` for the accessibility table).
        current: Per observation type, the current step's text where it differs from ``steps`` (``som``:
            the tagged screenshot's turn with its table, where past turns have no table).
        no_action: The assistant turn written for a step whose reply gave no actions.
        source: Where they were read from.
        sha256: A SHA-256 over all of them.
    """

    task: str
    steps: dict[str, str]
    no_action: str
    source: str
    current: dict[str, str]
    sha256: str


def _predict_function(path: Path) -> ast.FunctionDef:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "PromptAgent":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "predict":
                    return item
    raise ValueError("no PromptAgent.predict")


def _first_text(nodes: list[ast.stmt]) -> str | None:
    """The first ``"text": <string>`` (or ``"text": "<string>".format(...)``) in ``nodes``."""
    for stmt in nodes:
        for node in ast.walk(stmt):
            if not isinstance(node, ast.Dict):
                continue
            for key, value in zip(node.keys, node.values, strict=True):
                if not (isinstance(key, ast.Constant) and key.value == "text"):
                    continue
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    return value.value
                if (
                    isinstance(value, ast.Call)
                    and isinstance(value.func, ast.Attribute)
                    and value.func.attr == "format"
                    and isinstance(value.func.value, ast.Constant)
                    and isinstance(value.func.value.value, str)
                ):
                    return value.func.value.value
    return None


def _branch_types(test: ast.expr) -> list[str]:
    """``self.observation_type == "x"`` or ``... in ["x", ...]`` → the names it tests for."""
    if isinstance(test, ast.Compare) and len(test.comparators) == 1:
        right = test.comparators[0]
        if isinstance(right, ast.Constant) and isinstance(right.value, str):
            return [right.value]
        if isinstance(right, ast.List | ast.Tuple):
            return [e.value for e in right.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def _parse_prompt_agent(path: Path) -> tuple[str, dict[str, str], str]:
    predict = _predict_function(path)
    task = no_action = None
    steps: dict[str, str] = {}
    for node in ast.walk(predict):
        # system_message = self.system_message + "...{}".format(instruction)
        if (
            task is None
            and isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Add)
            and isinstance(node.right, ast.Call)
            and isinstance(node.right.func, ast.Attribute)
            and node.right.func.attr == "format"
            and isinstance(node.right.func.value, ast.Constant)
            and isinstance(node.right.func.value.value, str)
        ):
            task = node.right.func.value.value
        # previous_thought.strip() if len(previous_thought) > 0 else "..."
        if (
            no_action is None
            and isinstance(node, ast.IfExp)
            and isinstance(node.orelse, ast.Constant)
            and isinstance(node.orelse.value, str)
        ):
            no_action = node.orelse.value
        # the history loop: one branch per observation type, each building that type's user turn
        if isinstance(node, ast.For):
            for inner in node.body:
                branch: ast.stmt | None = inner
                while isinstance(branch, ast.If):
                    text = _first_text(branch.body)
                    for kind in _branch_types(branch.test):
                        if text is not None:
                            steps.setdefault(kind, text)
                    branch = branch.orelse[0] if len(branch.orelse) == 1 else None
    if (
        task is None
        or no_action is None
        or not {"screenshot", "a11y_tree", "screenshot_a11y_tree"} <= set(steps)
    ):
        raise ValueError("PromptAgent.predict does not have the expected shape")
    return task, steps, no_action


def _current_texts(path: Path) -> dict[str, str]:
    """The current step's user text per observation type, from the if-chain after the history loop."""
    found: dict[str, str] = {}
    for stmt in _predict_function(path).body:
        branch: ast.stmt | None = stmt
        while isinstance(branch, ast.If):
            text = _first_text(branch.body)
            for kind in _branch_types(branch.test):
                if text is not None:
                    found.setdefault(kind, text)
            branch = branch.orelse[0] if len(branch.orelse) == 1 else None
    return found


def prompt_agent_texts() -> PromptAgentTexts | None:
    """The inline texts of OSWorld's ``mm_agents/agent.py`` PromptAgent; None when not installed.

    Raises:
        SettingsError: If the installed version's code has another shape.
    """
    found = reference_site()
    if found is None:
        return None
    site, version = found
    path = site / "mm_agents" / "agent.py"
    try:
        task, steps, no_action = _parse_prompt_agent(path)
        current = _current_texts(path)
    except (OSError, SyntaxError, ValueError) as exc:
        raise SettingsError(
            f"OSWorld's PromptAgent cannot be read: {exc}",
            where=str(path),
            hint="install desktop-env 1.0.2, or set the profile's prompts to own",
        ) from None
    digest = hashlib.sha256("\0".join([task, no_action, *sorted(steps.values())]).encode("utf-8"))
    return PromptAgentTexts(
        task=task,
        steps=steps,
        no_action=no_action,
        source=f"{DISTRIBUTION} {version} mm_agents/agent.py:PromptAgent.predict",
        sha256=digest.hexdigest(),
        current=current,
    )
