"""The env protocol: the host-side handle on one guest.

Envs keep Gymnasium's verbs and shapes where they fit (``reset``, ``close``, a context manager); limits
and preprocessing belong in wrappers, not in provider flags. Every env is async: the app's event loop is
the Qt main thread (qasync), and the batch runner drives many envs on one loop.

``check_env`` (in :mod:`osw_studio.envs.check`) is the conformance check every provider passes.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self

from osw_studio.core.actions import Action
from osw_studio.core.observation import Observation
from osw_studio.core.task import Task

if TYPE_CHECKING:
    from osw_studio.envs.guest_client import GuestClient
    from osw_studio.tasks.assets import AssetStore


class Env(abc.ABC):
    """One guest desktop, seen from the host.

    Attributes:
        name: A short label for logs and the UI (``local:99``, ``remote:http://127.0.0.1:5000``).
    """

    name: str = "env"

    @property
    def task_dir(self) -> Path | None:
        """The folder of the task last reset: relative paths in its steps and evaluator resolve there."""
        return None

    @property
    def asset_cache(self) -> Path | None:
        """The asset cache folder setup steps used (OSWorld's ``cache/``), if any."""
        return None

    @property
    def asset_store(self) -> AssetStore | None:
        """The asset cache network URLs of setup steps and ``cloud_file`` getters are read from, if any."""
        return None

    @property
    @abc.abstractmethod
    def guest(self) -> GuestClient:
        """The client of this env's guest server (setup steps and evaluator getters use it)."""

    @property
    @abc.abstractmethod
    def screen_size(self) -> tuple[int, int]:
        """``(width, height)`` of the guest screen in pixels: the coordinate space of actions."""

    async def guest_port_url(self, port: int) -> str:
        """A URL on which the host reaches TCP ``port`` of the guest (a browser's DevTools, VLC's HTTP).

        By default the guest server's host with that port, as OSWorld's host code reaches its VMs;
        a guest in a network of its own forwards the port (:class:`~osw_studio.envs.local.LocalEnv`).
        """
        from urllib.parse import urlsplit

        return f"http://{urlsplit(self.guest.base_url).hostname or '127.0.0.1'}:{port}"

    @abc.abstractmethod
    async def reset(self, task: Task | None = None, *, task_dir: Path | None = None) -> Observation:
        """Bring the guest to the task's start state (run its ``config`` steps) and observe it.

        The task travels with its folder: plain paths in its ``download`` and ``upload_file`` steps and
        in its evaluator are relative to ``task_dir`` (the task file's folder), which :attr:`task_dir`
        then reports. Per-call context goes through this call, never by setting options on the env.

        Args:
            task: The task, or None to just observe.
            task_dir: The folder of the task's file (None: the task names no relative files).

        Raises:
            GuestError: If the guest cannot be reached or a setup step fails (naming the step).
        """

    @abc.abstractmethod
    async def observe(self, *, accessibility_tree: bool = False) -> Observation:
        """Grab the screen (and the accessibility tree when asked)."""

    @abc.abstractmethod
    async def execute(self, actions: Sequence[Action]) -> None:
        """Perform actions on the guest, in order. ``done``/``fail``/``wait``/``call_user`` are no-ops here.

        Raises:
            GuestError: If the guest refuses or fails an action.
        """

    @abc.abstractmethod
    async def close(self) -> None:
        """Release the guest (stop the processes a provider started). Safe to call twice."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
