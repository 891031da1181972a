"""The one bridge from an :class:`~osw_studio.runner.episode.Episode` to Qt.

Each psygnal signal of the episode is re-emitted as a Qt signal of the same name. A listener that
raises is logged and the others still run: a broken view must never stop an episode (psygnal would
otherwise raise the listener's error into the runner). Controls are plain methods that call the
episode; a person's takeover input is queued here and sent through ``Episode.human_act`` in order,
batching whatever arrived while the previous batch ran.
"""

from __future__ import annotations

import asyncio
import logging

from PySide6.QtCore import QObject, Signal

from osw_studio.core.actions import Action
from osw_studio.core.errors import OswError
from osw_studio.core.step import EpisodeResult
from osw_studio.runner.episode import EPISODE_SIGNALS, Episode
from osw_studio.ui.bridge import SignalRelay

log = logging.getLogger(__name__)

RELAYED = EPISODE_SIGNALS
"""The episode signals the controller re-emits on the Qt side: all of them (the episode's one list)."""


class RunController(SignalRelay):
    """Drives one episode from the UI and relays its signals to Qt.

    Args:
        episode: The episode to show and steer.

    Signals mirror the episode's (same names and arguments): ``runner.episode.EPISODE_SIGNALS``.
    """

    state_changed = Signal(str, str)
    paused_changed = Signal(bool)
    mode_changed = Signal(str)
    model_token = Signal(str)
    step_proposed = Signal(object)
    step_finished = Signal(object)
    observation_taken = Signal(object)
    takeover_changed = Signal(bool)
    episode_finished = Signal(object)
    error_raised = Signal(object)
    help_requested = Signal(str)

    def __init__(self, episode: Episode, parent: QObject | None = None) -> None:
        super().__init__(parent)
        missing = [name for name in RELAYED if not isinstance(getattr(type(self), name, None), Signal)]
        if missing:  # the episode grew a signal this bridge does not declare yet
            raise TypeError(f"RunController lacks the Qt signals {missing}")
        self.episode = episode
        self._task: asyncio.Task[EpisodeResult] | None = None
        self._human: asyncio.Queue[list[Action]] = asyncio.Queue()
        self._human_task: asyncio.Task[None] | None = None
        self._human_idle = asyncio.Event()
        self._human_idle.set()
        self.relay(episode, RELAYED, what="the run")

    def disconnect_episode(self) -> None:
        """Stop relaying (the controller is done with its episode)."""
        self.unrelay()

    # --- running ------------------------------------------------------------------------------------

    def start(self) -> asyncio.Task[EpisodeResult]:
        """Run the episode on the event loop (once)."""
        if self._task is None:
            self._task = asyncio.ensure_future(self.episode.run())
            self._human_task = asyncio.ensure_future(self._send_human_input())
            self._task.add_done_callback(lambda _: self._human_task and self._human_task.cancel())
        return self._task

    @property
    def running(self) -> bool:
        """Whether the episode's run is in progress."""
        return self._task is not None and not self._task.done()

    async def wait(self) -> EpisodeResult | None:
        """Wait until the run ends; its result (None if it never started)."""
        if self._task is None:
            return None
        return await self._task

    # --- controls -----------------------------------------------------------------------------------

    def toggle_pause(self) -> None:
        """Pause a running episode, or resume a paused one."""
        if self.episode.paused:
            self.episode.resume()
        else:
            self.episode.pause()

    def step_once(self) -> None:
        """Run one step (pausing first if the episode runs freely)."""
        if not self.episode.paused:
            self.episode.pause()
        self.episode.step_once()

    def stop(self) -> None:
        """Stop the episode (the model call in flight is cancelled)."""
        self.episode.stop()

    def set_mode(self, mode: str) -> None:
        """``auto`` or ``approve``."""
        self.episode.set_mode(mode)

    def approve(self, actions: list[Action] | None = None) -> None:
        """Let the held proposal run (``actions`` replace it: an edit)."""
        self.episode.approve(actions)

    def skip(self) -> None:
        """Drop the held proposal."""
        self.episode.skip()

    def toggle_takeover(self) -> None:
        """Begin a takeover, or end the current one."""
        if self.episode.in_takeover:
            self.episode.end_takeover()
        else:
            self.episode.begin_takeover()

    def human_input(self, actions: list[Action]) -> None:
        """Queue a person's actions from the viewer (sent in order through ``human_act``)."""
        if actions and self.episode.in_takeover:
            self._human_idle.clear()
            self._human.put_nowait(list(actions))

    async def _send_human_input(self) -> None:
        while True:
            batch = await self._human.get()
            while not self._human.empty():
                batch.extend(self._human.get_nowait())
            try:
                if self.episode.in_takeover:
                    await self.episode.human_act(batch)
            except OswError as exc:
                self.error_raised.emit(exc)
            except Exception:
                log.exception("sending a person's actions to the guest failed")
            finally:
                if self._human.empty():
                    self._human_idle.set()

    async def drain_human_input(self) -> None:
        """Wait until every queued human action was sent (tests and shutdown)."""
        await self._human_idle.wait()
