"""Conversations built from runs, shared by the chat formats (SFT, preference pairs, rollouts).

A conversation is a list of :class:`Turn`; the formats only change how turns are spelled. The assistant
turn of a step is rendered from the actions that actually ran (a person's correction included), in the
target profile's language and coordinate convention, so the pixels a trainer sees are the pixels that
acted. A model's thought is kept only on steps whose actions it chose: an edited step's thought argued for
the rejected action.

Per step, a sample holds the last ``history`` screenshots (the current one included); steps before them
are summed up as text in the first user turn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from osw_studio.actions.coords import CoordinateSpace
from osw_studio.core.step import StepRecord
from osw_studio.trajectory.exporters.base import ExportOptions, ExportRun, ImageSink, step_kind
from osw_studio.trajectory.exporters.profiles import get_profile

DEFAULT_SCREEN = (1920, 1080)


@dataclass
class Turn:
    """One message: a role, its text and the images shown with it (before the text)."""

    role: Literal["system", "user", "assistant"]
    text: str = ""
    images: list[str] = field(default_factory=list)


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

    def __init__(self, options: ExportOptions, images: ImageSink) -> None:
        self.options = options
        self.profile = get_profile(options.profile)
        self.images = images

    def space(self, run: ExportRun, step: StepRecord | None = None) -> CoordinateSpace:
        """The coordinate space of ``run`` in the export's convention."""
        return self.profile.space(run.screen_size(step) or DEFAULT_SCREEN, self.options.coords)

    def target(self, step: StepRecord, space: CoordinateSpace) -> str | None:
        """The assistant text for a step, or None when nothing ran."""
        if not step.executed:
            return None
        keep_thought = self.options.target == "thought-action" and step_kind(step) == "agent"
        return self.profile.render(step.executed, space, thought=step.thought if keep_thought else None)

    def _opening(self, run: ExportRun, space: CoordinateSpace, older: list[_Past]) -> list[Turn]:
        text = self.profile.user_prompt(run.meta.instruction)
        if older:
            text += "\n\nPrevious actions:\n" + "\n".join(f"Step {p.index}: {p.text}" for p in older)
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
        past: list[_Past] = []
        space: CoordinateSpace | None = None
        for step in run.steps():
            space = space or self.space(run, step)
            text = self.target(step, space)
            if text is None:
                continue
            screen = run.store.screenshot_path(step)
            if select(step):
                recent = past[len(past) - (window - 1) :] if window > 1 else []
                turns = self._opening(run, space, past[: len(past) - len(recent)])
                for p in recent:  # the opening ends with a user turn, and so does each round
                    turns[-1].images += self._image(run, p.screen)
                    turns += [Turn("assistant", p.text), Turn("user")]
                turns[-1].images += self._image(run, screen)
                yield step, turns, text
            past.append(_Past(step.index, text, screen))

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
            text = text or self.target(step, space)
            if text is not None:
                steps.append((text, run.store.screenshot_path(step)))
        turns = self._opening(run, space or self.space(run), [])
        keep_from = len(steps) - self.options.history if self.options.history > 0 else 0
        for i, (text, screen) in enumerate(steps):
            if i > 0:
                turns.append(Turn("user", "" if i >= keep_from else "(screenshot omitted)"))
            if i >= keep_from:
                turns[-1].images += self._image(run, screen)
            turns.append(Turn("assistant", text))
        return turns


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


_SHAREGPT_ROLES = {"user": "human", "assistant": "gpt"}


def to_sharegpt(turns: list[Turn]) -> dict[str, Any]:
    """ShareGPT (LLaMA-Factory): ``system``, ``conversations`` with one ``<image>`` per image, ``images``.

    >>> to_sharegpt([Turn("system", "s"), Turn("user", "hi", ["a.png"]), Turn("assistant", "ok")])
    {'system': 's', 'conversations': [{'from': 'human', 'value': '<image>hi'}, {'from': 'gpt', 'value': 'ok'}], 'images': ['a.png']}
    """  # noqa: E501
    system = "\n".join(t.text for t in turns if t.role == "system")
    conversations = []
    images: list[str] = []
    for turn in turns:
        if turn.role == "system":
            continue
        images += turn.images
        conversations.append(
            {"from": _SHAREGPT_ROLES[turn.role], "value": "<image>" * len(turn.images) + turn.text}
        )
    return {"system": system, "conversations": conversations, "images": images}
