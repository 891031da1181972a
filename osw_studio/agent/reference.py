r"""OSWorld's own prompt text, read at run time from its installed ``desktop-env`` package.

Profiles with ``prompts: reference`` send the very prompts OSWorld's agents send, so that a score can
stand beside the leaderboard's. The text is never copied into OSW Studio: it is read from the package the
user installed (``pip install --no-deps desktop-env``), by parsing the module's source for a top-level
string constant. Nothing of the package is imported or executed. Each prompt comes with where it was read
from and a SHA-256 of its text, which the run records.

The package is looked for in ``$OSW_REFERENCE_SITE`` (a ``site-packages`` folder, e.g. of a side
environment, or an OSWorld checkout) when it is set; else in the OSWorld checkout the settings name
(``evaluation.reference_osworld``), among the current interpreter's installed distributions, and in the
side environment ``.venv-ref`` that ``make setup`` installs beside the checkout. Agents newer than
desktop-env 1.0.2 (DART-GUI's) are read from the first of these that has their module.

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


CHECKOUT = Path(__file__).resolve().parents[2]
"""The folder OSW Studio runs from; in a checkout, ``make setup`` installs the reference beside it."""

_settings_checkout: list[Path | None] = [None]


def use_checkout(path: str | os.PathLike[str] | None) -> None:
    """Read prompts from the OSWorld checkout ``path`` first (setting ``evaluation.reference_osworld``)."""
    _settings_checkout[0] = None if path is None else Path(path).expanduser()


def _site_version(site: Path) -> str:
    versions = sorted(site.glob("desktop_env-*.dist-info"))
    if versions:
        return versions[-1].name.removeprefix("desktop_env-").removesuffix(".dist-info")
    return "checkout" if (site / "desktop_env").is_dir() and (site / "mm_agents").is_dir() else "?"


def reference_sites() -> list[tuple[Path, str]]:
    """Every folder holding ``mm_agents`` that prompts may be read from, in the order they are tried.

    ``$OSW_REFERENCE_SITE`` when set (and then nothing else); else the OSWorld checkout the settings
    name (:func:`use_checkout`), the interpreter's own ``desktop-env``, and the side environment
    ``.venv-ref`` that ``make setup`` makes beside the checkout OSW Studio runs from.
    """
    configured = os.environ.get("OSW_REFERENCE_SITE")
    if configured:
        site = Path(configured)
        return [(site, _site_version(site))] if (site / "mm_agents").is_dir() else []
    found: list[tuple[Path, str]] = []
    checkout = _settings_checkout[0]
    if checkout is not None and (checkout / "mm_agents").is_dir():
        found.append((checkout, _site_version(checkout)))
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        pass
    else:
        site = Path(str(dist.locate_file("")))
        if (site / "mm_agents").is_dir():
            found.append((site, dist.version))
    for site in sorted((CHECKOUT / ".venv-ref" / "lib").glob("python3*/site-packages")):
        if (site / "mm_agents").is_dir():
            found.append((site, _site_version(site)))
    return found


def reference_site(module: str | None = None) -> tuple[Path, str] | None:
    """The first of :func:`reference_sites` (that has ``module``, a path such as ``mm_agents/x.py``)."""
    for site, version in reference_sites():
        if module is None or (site / module).exists():
            return site, version
    return None


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
    found = reference_site(module)
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


# --- prompts built by code: a small evaluator of literal expressions ---------------------------------


def _evaluate(node: ast.expr, env: dict[str, object]) -> object:
    """Value of a prompt-building expression, or ValueError for anything else.

    Read are literals, f-strings, ``+``, ``if``/``else`` on ``==``, ``"sep".join(x)``,
    ``"...".strip()``, ``"...".format(name=...)``, ``json.dumps(x)``, and names and ``self.x`` from
    ``env``: nothing of the package is ever executed.
    """
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif (
                isinstance(value, ast.FormattedValue) and value.conversion == -1 and value.format_spec is None
            ):
                parts.append(str(_evaluate(value.value, env)))
            else:
                raise ValueError("unsupported f-string part")
        return "".join(parts)
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise ValueError(f"unknown name {node.id}")
        return env[node.id]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        key = f"self.{node.attr}"
        if key not in env:
            raise ValueError(f"unknown attribute {key}")
        return env[key]
    if isinstance(node, ast.List | ast.Tuple):
        return [_evaluate(e, env) for e in node.elts]
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise ValueError("unsupported ** in a dict")
        return {_evaluate(k, env): _evaluate(v, env) for k, v in zip(node.keys, node.values, strict=True)}  # type: ignore[arg-type]
    if isinstance(node, ast.IfExp):
        return _evaluate(node.body if _evaluate(node.test, env) else node.orelse, env)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq | ast.NotEq):
        equal = _evaluate(node.left, env) == _evaluate(node.comparators[0], env)
        return equal if isinstance(node.ops[0], ast.Eq) else not equal
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _evaluate(node.left, env), _evaluate(node.right, env)
        if not (isinstance(left, str) and isinstance(right, str)):
            raise ValueError("+ on other than text")
        return left + right
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        func = node.func
        if isinstance(func.value, ast.Name) and func.value.id == "json" and func.attr == "dumps":
            if len(node.args) != 1 or node.keywords:
                raise ValueError("json.dumps with options")
            import json

            return json.dumps(_evaluate(node.args[0], env))
        target = _evaluate(func.value, env)
        if isinstance(target, str) and func.attr == "strip" and not node.args and not node.keywords:
            return target.strip()
        if isinstance(target, str) and func.attr == "join" and len(node.args) == 1 and not node.keywords:
            items = _evaluate(node.args[0], env)
            if not (isinstance(items, list) and all(isinstance(i, str) for i in items)):
                raise ValueError("join of other than text")
            return target.join(items)
        if isinstance(target, str) and func.attr == "format" and not node.args:
            values = {kw.arg: _evaluate(kw.value, env) for kw in node.keywords if kw.arg is not None}
            return target.format(**values)
    raise ValueError(f"unsupported expression {type(node).__name__}")


def _target(node: ast.AST) -> str | None:
    """The name a single-name assignment assigns to."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    return None


def _method(path: Path, class_name: str, method: str) -> ast.FunctionDef:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == method:
                    return item
    raise ValueError(f"no {class_name}.{method}")


def _assignments(body: ast.AST, names: set[str]) -> dict[str, ast.expr]:
    """The expression last assigned to each of ``names`` anywhere in ``body``."""
    found: dict[str, ast.expr] = {}
    for node in ast.walk(body):
        name = _target(node)
        if name in names:
            found[name] = node.value  # type: ignore[attr-defined]
    return found


@dataclass(frozen=True)
class CodePrompt:
    """A prompt OSWorld builds in code: the expressions, evaluated per step from given values.

    Attributes:
        expressions: Name to expression, in the order they are evaluated (later ones see earlier ones).
        source: Where they were read from.
        sha256: A SHA-256 over the expressions' source text.
    """

    expressions: tuple[tuple[str, ast.expr], ...]
    source: str
    sha256: str

    def evaluate(self, **values: object) -> dict[str, object]:
        """Every expression's value, given the names they read (``self_x`` stands for ``self.x``)."""
        env: dict[str, object] = {k.replace("self_", "self.", 1): v for k, v in values.items()}
        for name, expr in self.expressions:
            env[name] = _evaluate(expr, env)
        return env


def _code_prompt(module: str, where: str, expressions: dict[str, ast.expr], order: list[str]) -> CodePrompt:
    missing = [n for n in order if n not in expressions]
    if missing:
        raise ValueError(f"{', '.join(missing)} not found")
    ordered = tuple((n, expressions[n]) for n in order)
    digest = hashlib.sha256("\0".join(ast.unparse(e) for _, e in ordered).encode("utf-8")).hexdigest()
    return CodePrompt(expressions=ordered, source=where, sha256=digest)


_QWEN3VL_NAMES = [
    "description_prompt_lines",
    "description_prompt",
    "action_description_prompt",
    "tools_def",
    "system_prompt",
    "instruction_prompt",
]


def _predict_prompt(
    module: str, class_name: str, names: list[str], label: str, probe: dict[str, object], hint: str
) -> CodePrompt | None:
    """The prompt code ``names`` of ``class_name.predict`` in ``module``, tried on ``probe`` now."""
    found = reference_site(module)
    if found is None:
        return None
    site, version = found
    path = site / module
    try:
        predict = _method(path, class_name, "predict")
        prompt = _code_prompt(
            module,
            f"{DISTRIBUTION} {version} {module}:{class_name}.predict",
            _assignments(predict, set(names)),
            names,
        )
        prompt.evaluate(**probe)  # refuse a shape the evaluator cannot read now, not at the first step
    except (OSError, SyntaxError, ValueError, KeyError, IndexError) as exc:
        raise SettingsError(
            f"OSWorld's {label} prompt cannot be read: {exc}", where=str(path), hint=hint
        ) from None
    return prompt


def qwen3vl_prompt() -> CodePrompt | None:
    """The system and instruction prompts of OSWorld's ``Qwen3VLAgent.predict``; None when not installed.

    Evaluate with ``self_coordinate_type``, ``processed_width``, ``processed_height``, ``instruction`` and
    ``previous_actions_str``; ``system_prompt`` and ``instruction_prompt`` are the texts sent.

    Raises:
        SettingsError: If the installed version's code has another shape.
    """
    probe: dict[str, object] = {
        "self_coordinate_type": "relative", "processed_width": 1, "processed_height": 1, "instruction": "",
        "previous_actions_str": "",
    }  # fmt: skip
    return _predict_prompt(
        "mm_agents/qwen3vl_agent.py", "Qwen3VLAgent", _QWEN3VL_NAMES, "Qwen3-VL", probe,
        "install desktop-env 1.0.2, or set the profile's prompts to own",
    )  # fmt: skip


_OPENCUA_LEVELS = {
    "l1": ("SYSTEM_PROMPT_V2_L1", "l1_format_instruction"),
    "l2": ("SYSTEM_PROMPT_V2_L2", "l2_format_instruction"),
    "l3": ("SYSTEM_PROMPT_V2_L3", "l3_format_instruction"),
}
_OPENCUA_TEMPLATES = [
    "STEP_TEMPLATE",
    "INSTRUTION_TEMPLATE",
    "ACTION_HISTORY_TEMPLATE",
    "THOUGHT_HISTORY_TEMPLATE",
    "OBSERVATION_HISTORY_TEMPLATE",
]


@dataclass(frozen=True)
class OpenCUAPrompts:
    """OpenCUA's system prompt (as ``build_sys_prompt(level, password)`` makes it) and its templates.

    Attributes:
        system: The system prompt.
        templates: ``STEP_TEMPLATE``, ``INSTRUTION_TEMPLATE`` and the three history templates, by name.
        source: Where they were read from.
        sha256: A SHA-256 over all of them.
    """

    system: str
    templates: dict[str, str]
    source: str
    sha256: str


def opencua_prompts(level: str = "l2", password: str = "osworld-public-evaluation") -> OpenCUAPrompts | None:
    """OpenCUA's prompts from ``mm_agents/opencua/prompts.py``; None when not installed.

    The system prompt is composed as ``build_sys_prompt(level, password, use_random=False)`` does, from
    the first of each list of variants.

    Raises:
        SettingsError: If the installed version has other names or shapes.
    """
    found = reference_site()
    if found is None:
        return None
    site, version = found
    module = "mm_agents/opencua/prompts.py"
    path = site / module
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        values: dict[str, object] = {}
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                try:
                    values[node.targets[0].id] = _evaluate(node.value, {})
                except ValueError:
                    continue
        template, fmt = _OPENCUA_LEVELS[level]
        first = {
            name: values[f"{name}s"][0]  # type: ignore[index]
            for name in ("general_computer_instruction", "observation_instruction", "thought_instruction",
                         "action_instruction")
        }  # fmt: skip
        system = str(values[template]).format(
            general_computer_instruction=str(first["general_computer_instruction"]).format(password=password),
            format_instruction=values[fmt],
            observation_instruction=first["observation_instruction"],
            thought_instruction=first["thought_instruction"],
            action_instruction=first["action_instruction"],
            code_instruction=values["code_instrucion"],
        )
        templates = {name: str(values[name]) for name in _OPENCUA_TEMPLATES}
    except (OSError, SyntaxError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise SettingsError(
            f"OpenCUA's prompts cannot be read: {exc}",
            where=str(path),
            hint="install desktop-env 1.0.2, or set the profile's prompts to own",
        ) from None
    digest = hashlib.sha256("\0".join([system, *templates.values()]).encode("utf-8")).hexdigest()
    return OpenCUAPrompts(
        system=system,
        templates=templates,
        source=f"{DISTRIBUTION} {version} {module}:build_sys_prompt({level})",
        sha256=digest,
    )


def reference_words(module: str, name: str) -> tuple[str, ...] | None:
    """The top-level list of strings ``name`` of ``module`` (e.g. DART-GUI's failure words); None if absent.

    Read from the syntax tree as :func:`reference_prompt` reads prompts: nothing is imported.

    Raises:
        SettingsError: If the module is there but cannot be read.
    """
    found = reference_site(module)
    if found is None:
        return None
    path = found[0] / module
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError, ValueError) as exc:
        raise SettingsError(f"OSWorld's module cannot be read: {exc}", where=str(path)) from None
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
            and isinstance(node.value, ast.List | ast.Tuple)
        ):
            return tuple(
                e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
            )
    return None


_QWEN25VL_NAMES = ["tools_def", "system_prompt", "instruction_prompt"]


def qwen25vl_prompt() -> CodePrompt | None:
    """The system and instruction prompts of OSWorld's ``Qwen25VLAgent.predict``; None when not found.

    Evaluate with ``instruction`` and ``previous_actions_str``; ``system_prompt`` and
    ``instruction_prompt`` are the texts sent.

    Raises:
        SettingsError: If the code found has another shape.
    """
    return _predict_prompt(
        "mm_agents/qwen25vl_agent.py", "Qwen25VLAgent", _QWEN25VL_NAMES, "Qwen2.5-VL",
        {"instruction": "", "previous_actions_str": ""},
        "name another OSWorld checkout, or set the profile's prompts to own",
    )  # fmt: skip


EVOCUA_AGENT = "mm_agents/evocua/evocua_agent.py"
EVOCUA_PROMPTS = "mm_agents/evocua/prompts.py"


def _if_assignment(body: ast.AST, name: str) -> ast.expr | None:
    """``if test: name = a`` / ``else: name = b`` in ``body``, as the expression ``a if test else b``."""
    for node in ast.walk(body):
        if (
            isinstance(node, ast.If)
            and len(node.body) == 1
            and len(node.orelse) == 1
            and _target(node.body[0]) == name
            and _target(node.orelse[0]) == name
        ):
            return ast.IfExp(test=node.test, body=node.body[0].value, orelse=node.orelse[0].value)  # type: ignore[attr-defined]
    return None


def _returned(tree: ast.Module, function: str) -> tuple[str, ast.expr]:
    """The one parameter and the returned expression of a module's one-line function ``function``."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == function:
            if len(node.args.args) != 1 or len(node.body) != 1 or not isinstance(node.body[0], ast.Return):
                raise ValueError(f"{function} has another shape")
            value = node.body[0].value
            if value is None:
                raise ValueError(f"{function} returns nothing")
            return node.args.args[0].arg, value
    raise ValueError(f"no {function}")


def evocua_prompt() -> CodePrompt | None:
    """The system and instruction prompts of OSWorld's EvoCUA agent in its S2 style; None when not found.

    The expressions are those of ``EvoCUAAgent._predict_s2`` (the resolution line, the tool's description,
    the system prompt) and ``_build_s2_messages`` (the instruction text), with the string constants of
    ``mm_agents/evocua/prompts.py`` and the dictionary its ``build_s2_tools_def`` returns. Evaluate with
    the names :func:`qwen3vl_prompt` takes (``self_coordinate_type``, ``processed_width``,
    ``processed_height``, ``instruction``, ``previous_actions_str``); ``system_prompt`` and
    ``instruction_prompt`` are the texts sent.

    Raises:
        SettingsError: If the code found has another shape.
    """
    found = reference_site(EVOCUA_AGENT)
    if found is None:
        return None
    site, version = found
    path = site / EVOCUA_AGENT
    try:
        prompts = ast.parse((site / EVOCUA_PROMPTS).read_text(encoding="utf-8"))
        expressions: dict[str, ast.expr] = {}
        for node in prompts.body:
            name = _target(node)
            if name is not None and isinstance(node.value, ast.Constant):  # type: ignore[attr-defined]
                expressions[name] = node.value  # type: ignore[attr-defined]
        constants = list(expressions)
        predict = _method(path, "EvoCUAAgent", "_predict_s2")
        resolution = _if_assignment(predict, "resolution_info")
        if resolution is None:
            raise ValueError("no resolution_info")
        expressions["resolution_info"] = resolution
        expressions.update(_assignments(predict, {"description_prompt", "tools_def", "system_prompt"}))
        tools = expressions.get("tools_def")
        if not (isinstance(tools, ast.Call) and isinstance(tools.func, ast.Name) and len(tools.args) == 1):
            raise ValueError("tools_def is not built by one call")
        parameter, returned = _returned(prompts, tools.func.id)
        expressions["tools_def"] = returned
        messages = _method(path, "EvoCUAAgent", "_build_s2_messages")
        expressions.update(_assignments(messages, {"instruction_prompt"}))
        order = [*constants, "resolution_info", "description_prompt", "tools_def", "system_prompt",
                 "instruction_prompt"]  # fmt: skip
        prompt = _code_prompt(
            EVOCUA_AGENT, f"{DISTRIBUTION} {version} {EVOCUA_AGENT}:EvoCUAAgent (S2)", expressions, order
        )
        # build_s2_tools_def's parameter is bound to its argument just before its body is evaluated
        at = order.index("tools_def")
        bound = (*prompt.expressions[:at], (parameter, tools.args[0]), *prompt.expressions[at:])
        # its image size is named as in the Qwen3-VL agent's prompt code, which this one grew from
        names = (("p_width", ast.Name(id="processed_width")), ("p_height", ast.Name(id="processed_height")))
        bound = (*names, *bound)
        prompt = CodePrompt(expressions=bound, source=prompt.source, sha256=prompt.sha256)
        prompt.evaluate(
            self_coordinate_type="relative",
            processed_width=1,
            processed_height=1,
            instruction="",
            previous_actions_str="",
        )
    except (OSError, SyntaxError, ValueError, KeyError, IndexError) as exc:
        raise SettingsError(
            f"OSWorld's EvoCUA prompt cannot be read: {exc}",
            where=str(path),
            hint="name another OSWorld checkout, or set the profile's prompts to own",
        ) from None
    return prompt


OWL15_AGENT = "mm_agents/owl15_agent.py"


def _added_texts(body: ast.AST) -> list[str]:
    """The leading string of each ``x += "..." + ...`` or ``x += "..." % ... + ...`` in ``body``, in order."""
    found: list[str] = []
    for node in ast.walk(body):
        if not (isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add)):
            continue
        value = node.value
        while isinstance(value, ast.BinOp):
            value = value.left
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            found.append(value.value)
    return found


def owl15_prompt() -> CodePrompt | None:
    """The prompts of OSWorld's GUI-Owl-1.5 agent (``Owl15Agent``); None when not found.

    ``system_prompt`` is the module's ``OWL15_PROMPT``; ``instruction_prompt`` the first user turn's text
    as ``get_qwen3vlprompt`` writes it (with its history on, ``use_history`` 1); ``history_head`` and
    ``history_step`` the texts ``predict`` adds to it for the first and each later old step (``%d``: the
    step's number). Evaluate with ``instruction``.

    Raises:
        SettingsError: If the code found has another shape.
    """
    found = reference_site(OWL15_AGENT)
    if found is None:
        return None
    site, version = found
    path = site / OWL15_AGENT
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        expressions: dict[str, ast.expr] = {}
        for node in tree.body:
            if _target(node) == "OWL15_PROMPT":
                expressions["system_prompt"] = node.value  # type: ignore[attr-defined]
        opening = _if_assignment(_method(path, "Owl15Agent", "get_qwen3vlprompt"), "user_prompt")
        if opening is None:
            raise ValueError("no user_prompt")
        expressions["user_prompt"] = opening
        keyword = ast.keyword(arg="instruction", value=ast.Name(id="instruction"))
        fmt = ast.Attribute(value=ast.Name(id="user_prompt"), attr="format")
        expressions["instruction_prompt"] = ast.Call(func=fmt, args=[], keywords=[keyword])
        added = [t for t in _added_texts(_method(path, "Owl15Agent", "predict")) if "Step" in t]
        if len(added) != 2:
            raise ValueError(f"{len(added)} history texts, not 2")
        expressions["history_head"], expressions["history_step"] = (ast.Constant(t) for t in added)
        order = ["system_prompt", "user_prompt", "instruction_prompt", "history_head", "history_step"]
        prompt = _code_prompt(
            OWL15_AGENT, f"{DISTRIBUTION} {version} {OWL15_AGENT}:Owl15Agent", expressions, order
        )
        prompt.evaluate(instruction="", self_use_history=1)
    except (OSError, SyntaxError, ValueError, KeyError, IndexError) as exc:
        raise SettingsError(
            f"OSWorld's GUI-Owl-1.5 prompt cannot be read: {exc}",
            where=str(path),
            hint="name another OSWorld checkout, or set the profile's prompts to own",
        ) from None
    return prompt


JEDI_AGENT = "mm_agents/jedi_7b_agent.py"
JEDI_PROMPTS = "mm_agents/prompts.py"


@dataclass(frozen=True)
class JediPrompts:
    """The texts of OSWorld's Jedi-7B agent (``JediAgent7B``).

    Attributes:
        planner: The planner's system prompt, with ``{current_step}`` and ``{max_steps}`` to replace.
        grounder: The grounder's system prompt, with ``{height}`` and ``{width}`` to replace.
        user: The planner's user text, built in ``predict``: evaluate with ``instruction``; ``user_prompt``.
        reminder: The text added as a user turn when a planner reply holds no code.
        source: Where they were read from.
        sha256: A SHA-256 over the four.
    """

    planner: str
    grounder: str
    user: CodePrompt
    reminder: str
    source: str
    sha256: str


def _loop_texts(body: ast.AST) -> list[str]:
    """The ``"text"`` values written as plain strings in the ``while`` loops of ``body``, in order."""
    found: list[str] = []
    for loop in ast.walk(body):
        if not isinstance(loop, ast.While):
            continue
        for node in ast.walk(loop):
            if isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if (
                        isinstance(key, ast.Constant)
                        and key.value == "text"
                        and isinstance(value, ast.Constant)
                        and isinstance(value.value, str)
                    ):
                        found.append(value.value)
    return found


def jedi_prompts() -> JediPrompts | None:
    """OSWorld's Jedi-7B planner and grounder prompts; None when its agent is not found.

    Raises:
        SettingsError: If the code found has another shape.
    """
    found = reference_site(JEDI_AGENT)
    if found is None:
        return None
    site, version = found
    hint = "name another OSWorld checkout, or set the profile's prompts to own"
    planner = reference_prompt(JEDI_PROMPTS, "JEDI_PLANNER_SYS_PROMPT")
    grounder = reference_prompt(JEDI_PROMPTS, "JEDI_GROUNDER_SYS_PROMPT")
    user = _predict_prompt(JEDI_AGENT, "JediAgent7B", ["user_prompt"], "Jedi-7B", {"instruction": ""}, hint)
    path = site / JEDI_AGENT
    try:
        reminders = _loop_texts(_method(path, "JediAgent7B", "predict"))
    except (OSError, SyntaxError, ValueError) as exc:
        raise SettingsError(
            f"OSWorld's Jedi-7B prompt cannot be read: {exc}", where=str(path), hint=hint
        ) from None
    if planner is None or grounder is None or user is None or len(set(reminders)) != 1:
        raise SettingsError(
            "OSWorld's Jedi-7B prompt cannot be read: its prompts or its reminder are not where expected",
            where=str(path),
            hint=hint,
        )
    digest = hashlib.sha256(
        "\0".join((planner.sha256, grounder.sha256, user.sha256, reminders[0])).encode("utf-8")
    ).hexdigest()
    return JediPrompts(
        planner=planner.text,
        grounder=grounder.text,
        user=user,
        reminder=reminders[0],
        source=f"{DISTRIBUTION} {version} {JEDI_AGENT}:JediAgent7B",
        sha256=digest,
    )
