"""Focus on one task of a running suite: its episode in the main viewer and inspector, steered alone.

A suite's episodes are run by its env slots, not by the window. :class:`FocusController` is a
:class:`~osw_studio.ui.run_controller.RunController` for such an episode: it never starts it, and it
counts as running until the episode ends, so the run view's pause, step, approve/edit/skip, takeover and
stop act on that task alone while the suite's other tasks go on. Dropping the focus leaves the episode
running in its slot.
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import QObject

from osw_studio.core.step import EpisodeResult
from osw_studio.runner.episode import Episode
from osw_studio.ui.run_controller import RunController


class FocusController(RunController):
    """Steers an episode a suite's slot runs (see the module): it is running until the episode ends."""

    def __init__(self, episode: Episode, parent: QObject | None = None) -> None:
        super().__init__(episode, parent)
        self._ended: asyncio.Future[EpisodeResult] = asyncio.get_event_loop().create_future()
        self.episode_finished.connect(self._on_finished)
        if episode.state.is_final and episode.result is not None:
            self._ended.set_result(episode.result)

    def _on_finished(self, result: object) -> None:
        if not self._ended.done() and isinstance(result, EpisodeResult):
            self._ended.set_result(result)

    def start(self) -> asyncio.Future[EpisodeResult]:  # type: ignore[override]
        """The slot runs the episode: this only relays a takeover's input and waits for the end."""
        if self._human_task is None:
            self._human_task = asyncio.ensure_future(self._send_human_input())
            self._ended.add_done_callback(lambda _: self._human_task and self._human_task.cancel())
        return self._ended

    @property
    def running(self) -> bool:
        """Whether the focused episode has not ended yet."""
        return not self._ended.done() and not self.episode.state.is_final

    async def wait(self) -> EpisodeResult | None:
        """Wait until the episode ends; its result."""
        return await self._ended

    def release(self) -> None:
        """Drop the focus: the episode goes on in its slot, no longer shown."""
        self.disconnect_episode()
        if self._human_task is not None:
            self._human_task.cancel()
