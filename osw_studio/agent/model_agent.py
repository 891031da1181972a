"""What the prompt agents share: a model client, screenshot preparation, one timed model call."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from osw_studio import __version__
from osw_studio.actions import CoordinateSpace
from osw_studio.agent.base import Agent, Prediction, TokenCallback
from osw_studio.agent.images import PreparedImage, prepare_image
from osw_studio.agent.model_client import ModelClient, ModelReply
from osw_studio.agent.reference import use_checkout
from osw_studio.core.actions import Action, Done, Fail
from osw_studio.core.errors import ActionParseError
from osw_studio.core.observation import Observation
from osw_studio.core.step import ReplyAttempt
from osw_studio.settings.model import ResolvedProfile

Message = dict[str, Any]
ReplyParser = Callable[[str], tuple[str | None, list[Action]]]
"""Reads a reply's text into its thought and actions (raises ActionParseError when it cannot)."""


def image_part(image: PreparedImage) -> dict[str, Any]:
    """An ``image_url`` content part holding ``image``."""
    return {"type": "image_url", "image_url": {"url": image.data_url()}}


def text_part(text: str) -> dict[str, Any]:
    """A ``text`` content part."""
    return {"type": "text", "text": text}


class ModelAgent(Agent):
    """An agent that asks a model through a :class:`ModelClient`.

    :meth:`predict` is the same step for every such agent: prepare the screenshot, build the request,
    ask and parse. What differs is in the hooks :meth:`prepare_step`, :meth:`build_messages`,
    :meth:`reply_parser` and :meth:`sampling` (what each call sends besides the messages).

    Args:
        profile: The resolved settings profile (model, sampling, coordinate mode, image options).
        client: The model client (default: one made from the profile and ``api_key``).
        api_key: The key for the default client.
    """

    def __init__(
        self, profile: ResolvedProfile, *, client: ModelClient | None = None, api_key: str | None = None
    ) -> None:
        super().__init__()
        self.profile = profile
        use_checkout(profile.reference_osworld)  # where presets read OSWorld's prompts from
        self.client = client or ModelClient.from_profile(profile, api_key=api_key)
        self.model_name = profile.model
        self.call_user_tries = profile.call_user_tries
        # Which prompts the requests use; agents that can send OSWorld's own say so here.
        self.prompt_info: dict[str, Any] = {"source": "own", "faithful": False}
        self.secrets = (api_key,) if api_key else ()
        # Screenshots already encoded for earlier steps, by step index, so history costs no re-encoding.
        self._images: dict[int, PreparedImage] = {}

    def own_prompts_instead(self) -> None:
        """Log and record in ``prompt_info`` that OSWorld's prompt was asked for but is not installed."""
        logging.getLogger(type(self).__module__).warning(
            "profile %s asks for OSWorld's prompt but desktop-env is not installed; "
            "using OSW Studio's own (not leaderboard-faithful)",
            self.profile.name,
        )
        self.prompt_info["reason"] = "desktop-env is not installed (pip install --no-deps desktop-env)"

    def run_info(self) -> dict[str, Any]:
        """The prompts sent (``prompt``: source, hashes, whether OSWorld's own) and the profile's setup."""
        return {
            "prompt": dict(self.prompt_info),
            "agent_setup": {
                "preset": self.profile.preset,
                "coordinate_mode": self.profile.coordinate_mode,
                "screenshot_size": self.profile.screenshot_size,
                "history_window": self.profile.history_window,
                "call_user_tries": self.profile.call_user_tries,
                "parse_tries": self.profile.parse_tries,
                "reask_temperature": self.profile.reask_temperature,
                "reask_min_temperature": self.profile.reask_min_temperature,
                "parse_exhausted": self.profile.parse_exhausted,
            },
        }

    def reset(self, task: Any = None) -> None:
        """Start a new episode: forget the history and its images."""
        super().reset(task)
        self._images = {}

    async def aclose(self) -> None:
        """Close the model client."""
        await self.client.aclose()

    @property
    def prompt_source(self) -> str:
        """Where this agent's prompt comes from, recorded with each request."""
        return f"osw-studio {__version__} {self.name} agent prompt"

    def image_size(self, screen: tuple[int, int]) -> tuple[int, int] | None:
        """The size screenshots are sent at (None: as grabbed)."""
        return self.profile.screenshot_size

    def coordinate_space(self, screen: tuple[int, int], image: tuple[int, int]) -> CoordinateSpace:
        """The frame the model's numbers are in, for a screenshot of ``image`` size of a ``screen``."""
        mode = self.profile.coordinate_mode
        if mode == "abs" and image != screen:
            mode = "resized"  # the model can only point in the image it was shown
        return CoordinateSpace(screen=screen, mode=mode, image=image)

    async def prepare(self, observation: Observation) -> PreparedImage:
        """The observation's screenshot as it will be sent (in a worker thread: encoding is CPU work)."""
        return await asyncio.to_thread(
            prepare_image,
            observation.screenshot,
            size=self.image_size(observation.size),
            fmt=self.profile.image_format,
        )

    def remember_image(self, image: PreparedImage) -> None:
        """Keep the image of the step about to be recorded, for the history."""
        self._images[len(self.history) + 1] = image

    def history_image(self, index: int) -> PreparedImage | None:
        """The image sent at history position ``index`` (0-based), if it was kept."""
        return self._images.get(index + 1)

    async def predict(
        self, instruction: str, observation: Observation, *, on_token: TokenCallback | None = None
    ) -> Prediction:
        """Ask the model for the next step, reading its reply with :meth:`reply_parser`."""
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        image = await self.prepare_step(observation)
        prepared = time.perf_counter()
        messages, space = self.build_messages(instruction, observation, image)
        timings["prepare"] = time.perf_counter() - t0
        timings["build"] = time.perf_counter() - prepared
        return await self.ask_parsed(messages, space, self.reply_parser(space), on_token, timings)

    async def prepare_step(self, observation: Observation) -> PreparedImage | None:
        """The image this step sends (None: none), before the request is built: :meth:`prepare`'s."""
        return await self.prepare(observation)

    def build_messages(
        self, instruction: str, observation: Observation, image: Any
    ) -> tuple[list[Message], CoordinateSpace]:
        """The request's messages for this step and the frame of the reply, remembering what is sent.

        ``image`` is what :meth:`prepare_step` returned.
        """
        raise NotImplementedError

    def reply_parser(self, space: CoordinateSpace) -> ReplyParser:
        """How this step's replies are read, in the frame ``space``."""
        raise NotImplementedError

    async def ask(
        self,
        messages: list[Message],
        on_token: TokenCallback | None,
        timings: dict[str, float],
        *,
        temperature: float | None = None,
    ) -> ModelReply:
        """One model call with the profile's sampling settings (``temperature`` overrides the profile's)."""
        t0 = time.perf_counter()
        reply = await self.client.complete(
            messages,
            **self.sampling(self.profile.temperature if temperature is None else temperature),
            logprobs=self.profile.logprobs,
            on_token=on_token,
        )
        timings["model"] = timings.get("model", 0.0) + time.perf_counter() - t0
        return reply

    def sampling(self, temperature: float | None) -> dict[str, Any]:
        """The sampling settings a model call sends (``temperature``: this call's; None is not sent)."""
        return {
            "temperature": temperature,
            "top_p": self.profile.top_p,
            "max_tokens": self.profile.max_tokens,
            "frequency_penalty": self.profile.frequency_penalty,
        }

    async def ask_parsed(
        self,
        messages: list[Message],
        space: CoordinateSpace,
        parse: ReplyParser,
        on_token: TokenCallback | None,
        timings: dict[str, float],
    ) -> Prediction:
        """Ask the model and parse its reply; while it cannot be parsed, ask again with the same messages.

        The profile says how often (``parse_tries``), at which temperature (:meth:`reask_temperature`)
        and what a step with no parsable reply does (``parse_exhausted``), as OSWorld's UI-TARS and
        OpenCUA agents do. Every unparsable reply is kept in :attr:`Prediction.attempts`, in order.
        """
        tries = max(1, self.profile.parse_tries)
        temperature: float | None = self.profile.temperature
        attempts: list[ReplyAttempt] = []
        for _ in range(tries):
            reply = await self.ask(messages, on_token, timings, temperature=temperature)
            prediction = self.prediction(reply, space, parse, timings)
            if prediction.error is None:
                break
            attempts.append(
                ReplyAttempt(response=reply.text, error=prediction.error, temperature=temperature)
            )
            if on_token is not None and len(attempts) < tries:  # the live view shows why a new reply starts
                on_token(f"\n\n[this reply cannot be used ({prediction.error}); asking again]\n\n")
            temperature = self.reask_temperature()
        prediction.attempts = attempts[:-1] if prediction.error is not None else attempts
        if prediction.error is not None and self.profile.parse_exhausted != "error":
            message = f"no reply could be parsed in {tries} tries: {prediction.error}"
            prediction.attempts = attempts
            prediction.actions = [
                Done(message=message) if self.profile.parse_exhausted == "done" else Fail(message=message)
            ]
            prediction.error = None
        return prediction

    def reask_temperature(self) -> float | None:
        """The temperature of the calls after an unparsable reply.

        ``reask_temperature`` when set, else the profile's temperature; raised to ``reask_min_temperature``
        when that is set (OSWorld's OpenCUA agent: ``max(0.2, temperature)``). None: not sent.
        """
        profile = self.profile
        temperature = profile.temperature if profile.reask_temperature is None else profile.reask_temperature
        if profile.reask_min_temperature is None:
            return temperature
        if temperature is None:
            return profile.reask_min_temperature
        return max(profile.reask_min_temperature, temperature)

    def prediction(
        self,
        reply: ModelReply,
        space: CoordinateSpace,
        parse: ReplyParser,
        timings: dict[str, float],
    ) -> Prediction:
        """Parse ``reply`` with ``parse(text) -> (thought, actions)``; a parse error becomes ``error``."""
        t0 = time.perf_counter()
        base = Prediction(
            response=reply.text,
            coordinate_mode=space.mode,
            usage=reply.usage,
            logprobs=reply.logprobs,
            entropy=reply.entropy,
            latency=reply.latency,
            timings=timings,
            request=None
            if reply.request is None
            else reply.request.model_copy(update={"prompt_source": self.prompt_source}),
        )
        try:
            base.thought, base.actions = parse(reply.text)
        except ActionParseError as exc:
            base.error = str(exc)
        timings["parse"] = time.perf_counter() - t0
        return base
