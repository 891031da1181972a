"""Training samples: what the model was sent at a step, plus the reply it should have given.

A sample's prompt is the step's recorded request (:mod:`osw_studio.trajectory.requests`), message for
message and image for image. Its target is the model's raw reply when the model decided the step (run
unchanged or approved), and, when a person edited the step or acted alone, the person's actions written
in the model's own output format (:mod:`osw_studio.trajectory.exporters.replies`) in the coordinate
space the model wrote in.

A step a person performed during a takeover sent no request. Its prompt is derived from the request
before it: that conversation, the reply it got (or its correction), and a user turn shaped like its
last one showing this step's screenshot, dropping the oldest history image when the agent's history
window was full. Runs without recorded requests (stores written before requests were recorded, replays
of reference solutions, the human agent) and every run under ``--reprompt PROFILE`` get prompts rebuilt
with a target-model profile (:mod:`osw_studio.trajectory.exporters.chat`); samples say which (``prompt``:
``recorded``, ``derived`` or ``reprompt``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, cast

from osw_studio.actions.coords import CoordinateSpace, Rounding
from osw_studio.core import agent_specs
from osw_studio.core.action_languages import language as language_spec
from osw_studio.core.action_languages import language_of_action_space
from osw_studio.core.step import StepRecord
from osw_studio.trajectory.exporters.base import ExportOptions, ExportRun
from osw_studio.trajectory.exporters.replies import Language, write_reply
from osw_studio.trajectory.exporters.tool_calls import (
    MESSAGES_AGENTS,
    RESPONSES_AGENTS,
    ToolCallConversation,
    messages_chat,
)
from osw_studio.trajectory.layout import image_size
from osw_studio.trajectory.requests import IMAGE_REF, RequestExpander, image_refs

PromptOrigin = Literal["recorded", "derived", "reprompt"]
SampleSource = Literal["agent", "approved", "edited", "human"]
SAMPLE_SOURCES: tuple[SampleSource, ...] = ("agent", "approved", "edited", "human")

MODEL_AGENTS = frozenset(agent_specs.MODEL_AGENTS)
"""Agents whose replies come from a model (the others replay a solution or relay a person)."""


def sample_source(step: StepRecord) -> SampleSource:
    """Who decided a step, as a dataset card counts it.

    >>> sample_source(StepRecord(index=1, verdict="approved")), sample_source(StepRecord(index=1))
    ('approved', 'agent')
    """
    if step.source == "human":
        return "human"
    if step.verdict in ("edited", "approved"):
        return step.verdict
    return "agent"


def person_note(step: StepRecord) -> str | None:
    """The thought a person gave with an edit or a takeover step, if any."""
    note = (step.model_extra or {}).get("note")
    if isinstance(note, str) and note.strip() and not note.startswith("dropped:"):
        return note.strip()
    return None


_OWN_LANGUAGES: dict[str, Language] = cast(dict[str, Language], agent_specs.OWN_LANGUAGES)
"""Agents whose models write a language of their own (the others: pyautogui or computer_13 code)."""


def run_language(run: ExportRun) -> Language:
    """The action language the run's model wrote."""
    own = _OWN_LANGUAGES.get(run.meta.agent or "")
    if own is not None:
        return own
    return language_of_action_space(run.meta.action_space)


@dataclass
class Sample:
    """One training sample.

    Attributes:
        step: The step.
        source: Who decided it (``agent``, ``approved``, ``edited``, ``human``).
        prompt: The messages before the target; images are ``image_ref`` parts naming files under the
            run's ``screens/``.
        target: The assistant reply to learn (None for a skipped proposal, which only preference pairs
            use).
        origin: Whether ``prompt`` is the recorded request, derived from the one before, or rebuilt.
        rejected: The model's own reply that a person overruled (edited or skipped steps).
        space: The coordinate space the target (and the rejected reply) are written in.
    """

    step: StepRecord
    source: SampleSource
    prompt: list[dict[str, Any]]
    target: str | None
    origin: PromptOrigin
    rejected: str | None = None
    space: CoordinateSpace | None = None


class SampleBuilder:
    """Builds the samples of runs for one export.

    Args:
        options: The export options (``reprompt``, and the profile options used when rebuilding).
    """

    def __init__(self, options: ExportOptions) -> None:
        self.options = options
        self._spaces: dict[tuple[Any, ...], CoordinateSpace | None] = {}

    def profile_name(self) -> str:
        """The profile rebuilt prompts use."""
        return self.options.reprompt or self.options.profile

    def profile_coords(self) -> str:
        """The coordinate convention of rebuilt prompts' profile."""
        from osw_studio.trajectory.exporters.profiles import get_profile

        return get_profile(self.profile_name()).coords

    def samples(self, run: ExportRun) -> Iterator[Sample]:
        """Every step's sample, in order; steps that neither ran anything nor were skipped give none."""
        if self.options.reprompt is not None:
            yield from self._rebuilt(run)
            return
        steps = run.steps()
        expander = RequestExpander()
        language = run_language(run)
        screen = run.screen_size()
        space: CoordinateSpace | None = None
        last: tuple[list[dict[str, Any]], str] | None = None
        images: list[int] = []  # images per recorded request: a steady count means a full history window
        chained = RESPONSES_AGENTS.get(run.meta.agent or "")
        conversation = None if chained is None else ToolCallConversation(chained=chained)
        for step in steps:
            prompt = expander.messages(step)
            if conversation is not None and prompt is not None:  # Responses API input: a tool-call chat
                prompt = conversation.prompt(step, prompt)
            elif prompt is not None and run.meta.agent in MESSAGES_AGENTS:  # Messages API: a tool-call chat
                prompt = messages_chat(prompt)
            origin: PromptOrigin = "recorded"
            if prompt is None and step.source == "agent" and last is None:
                # The first model step has no request: the run predates request recording, or no
                # model decided it (a replay). Its prompts are rebuilt, from the start.
                yield from self._rebuilt(run)
                return
            if prompt is not None:
                refs = image_refs(prompt)
                space = self._space(run, step, refs, language, screen) or space
                images.append(len(refs))
            elif last is not None and step.source == "human":
                full = len(images) >= 2 and images[-1] == images[-2]
                prompt, origin = self._derive(run, step, *last, full_window=full), "derived"
            if prompt is None or space is None:
                continue
            target, rejected = self._target(step, language, space)
            if target is None and rejected is None:
                continue
            yield Sample(step, sample_source(step), prompt, target, origin, rejected, space)
            if target is not None:
                last = (prompt, target)

    def _space(
        self,
        run: ExportRun,
        step: StepRecord,
        refs: list[Mapping[str, Any]],
        language: Language,
        screen: tuple[int, int] | None,
    ) -> CoordinateSpace | None:
        """The frame the model wrote coordinates in at this step (as the agent set it up).

        ``refs`` are the images of the step's prompt, the screenshot sent last.
        """
        screen = screen or run.screen_size(step)
        if screen is None or step.coordinate_mode is None:
            return None
        sent = (refs[-1].get("width"), refs[-1].get("height")) if refs else (None, None)
        image = (sent[0], sent[1]) if isinstance(sent[0], int) and isinstance(sent[1], int) else None
        if language == "uitars" and step.coordinate_mode == "smart":
            image = None  # UI-TARS' smart frame is the smart-resized screen
        # OSWorld's Qwen3-VL and OpenCUA agents truncate the model's numbers to pixels, as ours do.
        rounding: Rounding = "trunc" if language_spec(language).truncates else "round"
        key = (screen, step.coordinate_mode, image, rounding)
        if key not in self._spaces:  # the same few frames, step after step (a space is immutable)
            try:
                space = CoordinateSpace(
                    screen=screen, mode=step.coordinate_mode, image=image, rounding=rounding
                )
            except ValueError:
                space = None
            self._spaces[key] = space
        return self._spaces[key]

    def _target(
        self, step: StepRecord, language: Language, space: CoordinateSpace
    ) -> tuple[str | None, str | None]:
        """``(target, rejected)`` of a step."""
        if step.verdict == "skipped":
            return None, step.response or None
        if step.verdict == "error" or not step.executed:
            return None, None
        if step.source == "agent" and step.verdict in ("auto", "approved") and step.response:
            return step.response, None
        correction = write_reply(language, step.executed, space, person_note(step))
        rejected = step.response if step.source == "agent" and step.verdict == "edited" else None
        return correction, rejected or None

    def _derive(
        self,
        run: ExportRun,
        step: StepRecord,
        prompt: list[dict[str, Any]],
        reply: str,
        *,
        full_window: bool,
    ) -> list[dict[str, Any]] | None:
        """The request the agent would have sent at a person's step: the last one, one round on.

        When the agent's history window was full (its requests held a steady number of images), the
        oldest image goes, as the agent would drop it.
        """
        if "a11y" in (run.meta.observation_type or ""):
            return None  # its user turns carry that step's own tree, which was never captured
        users = [m for m in prompt if m.get("role") == "user"]
        path = run.screenshot_path(step)
        if not users or path is None:
            return None
        with open(path, "rb") as f:
            size = image_size(f.read(65536)) or (None, None)
        screen_ref = {
            "type": IMAGE_REF,
            "file": path.name,
            "step": step.index,
            "width": size[0],
            "height": size[1],
            "mime": "image/jpeg" if path.suffix == ".jpg" else "image/png",
        }
        last_user = users[-1]
        content = last_user.get("content")
        if not isinstance(content, list) or not any(
            (type(p) is dict or isinstance(p, Mapping)) and p.get("type") == IMAGE_REF for p in content
        ):
            return None
        turn = {
            **last_user,
            "content": [screen_ref if p.get("type") == IMAGE_REF else p for p in content],
        }
        out = [*prompt, {"role": "assistant", "content": reply}, turn]
        # A full window keeps its number of screenshots: the oldest goes, and its turn if it held no more.
        extra = len(image_refs(out)) - len(image_refs(prompt)) if full_window else 0
        for m, message in enumerate(out):
            if extra <= 0:
                break
            parts = message.get("content")
            if not isinstance(parts, list):
                continue
            kept = []
            for part in parts:
                if (
                    extra > 0
                    and (type(part) is dict or isinstance(part, Mapping))
                    and part.get("type") == IMAGE_REF
                ):
                    extra -= 1
                    continue
                kept.append(part)
            out[m] = {**message, "content": kept}
        return [m for m in out if not (isinstance(m.get("content"), list) and not m["content"])]

    def _rebuilt(self, run: ExportRun) -> Iterator[Sample]:
        from osw_studio.trajectory.exporters.chat import ChatBuilder, to_compact

        profile = self.options.reprompt or self.options.profile
        chat = ChatBuilder(replace(self.options, profile=profile), _NameSink())
        for step, turns, target in chat.step_samples(run, select=lambda s: True):
            space = chat.space(run, step)
            rejected = None
            if step.verdict == "edited" and step.proposed:
                # Both sides of a pair in the profile's format: the proposal is rebuilt too.
                thought = "" if self.options.target == "action" else step.thought
                rejected = chat.profile.render(step.proposed, space, thought=thought)
            yield Sample(step, sample_source(step), to_compact(turns), target, "reprompt", rejected, space)


class _NameSink:
    """An image sink that leaves screenshots where they are: a reference is the file's name."""

    def ref(self, run: ExportRun, path: Path) -> str:
        return path.name
