"""Conversations rebuilt with a target-model profile, for runs without recorded requests and ``--reprompt``.

Samples normally start from the request the agent recorded (:mod:`.samples`). This module rebuilds a
conversation instead, for run stores that hold no requests (written before requests were recorded,
replays, the human agent) and when data is deliberately re-targeted to another model. A conversation is
a list of :class:`Turn`. The assistant turn of a step is rendered from the actions that actually ran (a
person's correction included), in the profile's language and coordinate convention. A model's thought is
kept only on steps a model decided; other steps get the person's note or a neutral sentence about the
actions (a replay's bookkeeping text is never a thought).

Per step, a sample holds the last ``history`` screenshots (the current one included); steps before them
are summed up as text in the first user turn.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from osw_studio.actions.coords import CoordinateSpace
from osw_studio.core.agent_specs import MODEL_AGENTS
from osw_studio.core.step import StepRecord
from osw_studio.trajectory.exporters.base import ExportOptions, ExportRun, step_kind
from osw_studio.trajectory.exporters.profiles import get_profile
from osw_studio.trajectory.requests import IMAGE_REF


class ImageRefs(Protocol):
    """Where a conversation's screenshots are referenced from (an :class:`~.base.ImageSink`)."""

    def ref(self, run: ExportRun, path: Path) -> str:
        """A reference to the image at ``path``."""
        ...


DEFAULT_SCREEN = (1920, 1080)


@dataclass
class Turn:
    """One message: a role, its text and the images shown with it (before the text)."""

    role: Literal["system", "user", "assistant"]
    text: str = ""
    images: list[str] = field(default_factory=list)


MAX_PREVIOUS_ACTIONS = 100
"""How many earlier steps a rebuilt prompt lists under "Previous actions" (older ones are counted)."""


@dataclass
class _Past:
    index: int
    text: str
    screen: Path | None


class ChatBuilder:
    """Builds conversations from runs for one export.

    Args:
        options: The export options (profile, coordinates, history, target, images).
        images: Where screenshots go.
    """

    def __init__(self, options: ExportOptions, images: ImageRefs) -> None:
        self.options = options
        self.profile = get_profile(options.profile)
        self.images = images

    def space(self, run: ExportRun, step: StepRecord | None = None) -> CoordinateSpace:
        """The coordinate space of ``run`` in the export's convention."""
        return self.profile.space(run.screen_size(step) or DEFAULT_SCREEN, self.options.coords)

    def target(self, step: StepRecord, space: CoordinateSpace, run: ExportRun | None = None) -> str | None:
        """The assistant text for a step, or None when nothing ran (or the language cannot say it)."""
        if not step.executed:
            return None
        if self.options.target == "action":
            thought: str | None = ""
        elif step_kind(step) == "agent" and _model_decided(step, run):
            thought = step.thought
        else:
            note = (step.model_extra or {}).get("note")
            thought = note if isinstance(note, str) and not note.startswith("dropped:") else None
        return self.profile.render(step.executed, space, thought=thought)

    def _opening(
        self, run: ExportRun, space: CoordinateSpace, older: list[_Past], omitted: int = 0
    ) -> list[Turn]:
        text = self.profile.user_prompt(run.meta.instruction)
        if older:
            text += "\n\nPrevious actions:\n"
            if omitted:
                text += f"({omitted} earlier steps left out)\n"
            text += "\n".join(f"Step {p.index}: {p.text}" for p in older)
        return [Turn("system", self.profile.system_prompt(space)), Turn("user", text)]

    def _image(self, run: ExportRun, screen: Path | None) -> list[str]:
        return [self.images.ref(run, screen)] if screen is not None else []

    def step_samples(
        self, run: ExportRun, select: Callable[[StepRecord], bool] | None = None
    ) -> Iterator[tuple[StepRecord, list[Turn], str]]:
        """For each selected step: the step, the prompt turns, and the target text.

        Args:
            run: The run.
            select: Which steps get a sample (default: those passing the export's step filter); every
                step that ran something is history for the later ones.
        """
        select = select or self.options.filter.accepts_step
        window = max(1, self.options.history)
        # The last MAX_PREVIOUS_ACTIONS steps are listed as text (and the history window's as rounds):
        # a sample's size, and the export's memory, stay bounded however long the run is.
        past: deque[_Past] = deque(maxlen=MAX_PREVIOUS_ACTIONS + window - 1)
        seen = 0
        space: CoordinateSpace | None = None
        for step in run.steps():
            space = space or self.space(run, step)
            text = self.target(step, space, run)
            if text is None:
                continue
            screen = run.screenshot_path(step)
            if select(step):
                held = list(past)
                recent = held[len(held) - (window - 1) :] if window > 1 else []
                turns = self._opening(run, space, held[: len(held) - len(recent)], seen - len(held))
                if self.profile.image_turns:  # UI-TARS: each screenshot a user turn of its own
                    for p in recent:
                        turns += [Turn("user", "", self._image(run, p.screen)), Turn("assistant", p.text)]
                    turns.append(Turn("user", "", self._image(run, screen)))
                else:
                    for p in recent:  # the opening ends with a user turn, and so does each round
                        turns[-1].images += self._image(run, p.screen)
                        turns += [Turn("assistant", p.text), Turn("user")]
                    turns[-1].images += self._image(run, screen)
                yield step, turns, text
            past.append(_Past(step.index, text, screen))
            seen += 1

    def episode(self, run: ExportRun, *, raw: bool = False) -> list[Turn]:
        """The whole run as one conversation.

        Args:
            run: The run.
            raw: Use the model's own reply for the steps it chose (what the policy said, for RL);
                otherwise every assistant turn is rendered from the executed actions.
        """
        space: CoordinateSpace | None = None
        steps: list[tuple[str, Path | None]] = []
        for step in run.steps():
            space = space or self.space(run, step)
            text = step.response if raw and step.source == "agent" and step.response else None
            text = text or self.target(step, space, run)
            if text is not None:
                steps.append((text, run.screenshot_path(step)))
        turns = self._opening(run, space or self.space(run), [])
        keep_from = len(steps) - self.options.history if self.options.history > 0 else 0
        for i, (text, screen) in enumerate(steps):
            if i > 0:
                turns.append(Turn("user", "" if i >= keep_from else "(screenshot omitted)"))
            if i >= keep_from:
                turns[-1].images += self._image(run, screen)
            turns.append(Turn("assistant", text))
        return turns


def _model_decided(step: StepRecord, run: ExportRun | None) -> bool:
    """Whether a model wrote the step's reply (so its thought is a model's thought)."""
    if step.request is not None:
        return True
    return run is not None and run.meta.agent in MODEL_AGENTS


def to_compact(turns: list[Turn]) -> list[dict[str, Any]]:
    """Messages whose images are ``image_ref`` parts naming each screenshot file (as samples hold them).

    >>> to_compact([Turn("user", "hi", ["step_0001.png"])])
    [{'role': 'user', 'content': [{'type': 'image_ref', 'file': 'step_0001.png'}, {'type': 'text', 'text': 'hi'}]}]
    """  # noqa: E501
    out = []
    for turn in turns:
        parts: list[dict[str, Any]] = [{"type": IMAGE_REF, "file": name} for name in turn.images]
        if turn.text or not parts:
            parts.append({"type": "text", "text": turn.text})
        out.append({"role": turn.role, "content": parts})
    return out


def to_messages(turns: list[Turn]) -> list[dict[str, Any]]:
    """OpenAI chat messages: ``content`` is always a list of ``text`` and ``image_url`` parts.

    >>> to_messages([Turn("user", "hi", ["a.png"])])
    [{'role': 'user', 'content': [{'type': 'image_url', 'image_url': {'url': 'a.png'}}, {'type': 'text', 'text': 'hi'}]}]
    """  # noqa: E501
    out = []
    for turn in turns:
        parts: list[dict[str, Any]] = [
            {"type": "image_url", "image_url": {"url": ref}} for ref in turn.images
        ]
        if turn.text or not parts:
            parts.append({"type": "text", "text": turn.text})
        out.append({"role": turn.role, "content": parts})
    return out
