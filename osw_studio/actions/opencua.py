r"""OpenCUA's replies: ``## Thought`` / ``## Action`` sections and a code block (pyautogui, ``computer.*``).

The format OSWorld's OpenCUA agent (``mm_agents/opencua``) reads: optional ``## Observation:`` and
``## Thought:`` sections, an ``## Action:`` section (the step's low-level instruction, which the next
steps' history repeats) and the *last* fenced code block. As OSWorld reads it, a block that mentions
``computer.wait`` is a wait; one that mentions ``computer.terminate`` fails the task when it says
``fail`` anywhere (``failure``) and is done when it says ``success``; any other block is pyautogui code
with keyword or positional coordinates in the :class:`~osw_studio.actions.coords.CoordinateSpace` given
(OpenCUA-7B/32B: ``smart``, truncated as OSWorld does; ``norm`` for its ``relative`` type).

Where OSWorld's code does not do what the reply means, this parser reads the meaning: coordinates of
``scroll``/``mouseDown``/``mouseUp`` are projected too (OSWorld projects only click, move and drag calls,
so ``scroll(-5, x=0.5, y=0.5)`` scrolls at pixel (0, 0) there), ``computer.triple_click(x=, y=)``
triple-clicks (there it is a NameError). A reply without an ``## Action:`` section or a code block is an
error, as there (where the agent asks again, as the ``opencua-7b`` preset does).

Examples:
    >>> space = CoordinateSpace(screen=(1920, 1080), mode="norm")
    >>> reply = "## Thought:\nOpen it.\n\n## Action:\nClick OK.\n\n## Code:\n```python\n"
    >>> reply += "pyautogui.click(x=0.5, y=0.25)\n```"
    >>> parsed = parse_opencua(reply, space)
    >>> parsed.action, parsed.actions
    ('Click OK.', [Click(kind='click', x=960, y=270, button='left', clicks=1)])
    >>> parse_opencua("## Action:\nDone.\n```code\ncomputer.terminate(status='success')\n```").actions
    [Done(kind='done', message=None)]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from osw_studio.actions.coords import CoordinateSpace
from osw_studio.actions.fences import check_length
from osw_studio.actions.pyautogui import parse_pyautogui
from osw_studio.core.actions import Action, Done, Fail, Wait
from osw_studio.core.errors import ActionParseError

WAIT_SECONDS = 20.0
"""How long ``computer.wait()`` waits: what OpenCUA's prompt tells the model."""

_SECTION = r"^##\s*{name}\s*:?[\n\r]+(.*?)(?={stop}\Z)"
_OBSERVATION = re.compile(
    _SECTION.format(name="Observation", stop=r"^##\s*Thought:|^##\s*Action:|^##|"), re.DOTALL | re.MULTILINE
)
_THOUGHT = re.compile(_SECTION.format(name="Thought", stop=r"^##\s*Action:|^##|"), re.DOTALL | re.MULTILINE)
_ACTION = re.compile(_SECTION.format(name="Action", stop=r"^##|"), re.DOTALL | re.MULTILINE)
_BLOCK = re.compile(r"```(?:code|python)?\s*(.*?)\s*```", re.DOTALL | re.IGNORECASE)
_TRIPLE = re.compile(r"\bcomputer\.triple_click\(")


@dataclass
class OpenCUAReply:
    """A parsed OpenCUA reply.

    Attributes:
        observation: The ``## Observation`` section, if any.
        thought: The ``## Thought`` section, if any.
        action: The ``## Action`` section: the step's low-level instruction.
        code: The last code block.
        actions: What it does, in screen pixels.
    """

    observation: str | None = None
    thought: str | None = None
    action: str | None = None
    code: str = ""
    actions: list[Action] = field(default_factory=list)


def sections(text: str) -> dict[str, str]:
    """The reply's ``observation``, ``thought`` and ``action`` sections (those present)."""
    found = {}
    for name, pattern in (("observation", _OBSERVATION), ("thought", _THOUGHT), ("action", _ACTION)):
        match = pattern.search(text)
        if match:
            found[name] = match.group(1).strip()
    return found


def parse_opencua(text: str, space: CoordinateSpace | None = None) -> OpenCUAReply:
    """Parse an OpenCUA reply (see the module docs).

    Raises:
        ActionParseError: If it has no code block, no ``## Action`` section, a ``computer.terminate``
            without a status, or code the pyautogui parser refuses.
    """
    check_length(text)
    found = sections(text)
    reply = OpenCUAReply(
        observation=found.get("observation"), thought=found.get("thought"), action=found.get("action")
    )
    blocks = _BLOCK.findall(text)
    if not blocks:
        raise ActionParseError("the reply has no code block", hint="end the reply with ```python ... ```")
    reply.code = code = blocks[-1].strip()
    lower = code.lower()
    if ("computer.terminate" not in lower or "computer.wait" in lower) and not reply.action:
        raise ActionParseError("the reply has no ## Action: section", hint="OpenCUA writes one each step")
    if "computer.wait" in lower:
        reply.actions = [Wait(seconds=WAIT_SECONDS)]
    elif "computer.terminate" in lower:
        if "fail" in lower:
            reply.actions = [Fail()]
        elif "success" in lower:
            reply.actions = [Done()]
        else:
            raise ActionParseError(
                "computer.terminate needs status='success' or status='failure'", where=code
            )
    else:
        source = _TRIPLE.sub("pyautogui.tripleClick(", code)
        reply.actions = parse_pyautogui(f"```python\n{source}\n```", space)
    return reply
