"""What the window needs besides views: the env, new episodes, the runs folder. No Qt here.

One env (the local sandbox by default) is started once and kept across runs, so the second run starts
at once; the settings choose the provider and screen size. Episodes are built from the active profile.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from osw_studio.agent.base import Agent
from osw_studio.core.errors import OswError
from osw_studio.envs.base import Env
from osw_studio.envs.vnc import VncTarget
from osw_studio.runner.episode import Episode, EpisodeConfig
from osw_studio.runner.store import RunStoreWriter
from osw_studio.settings import ResolvedProfile, Settings, dump_settings
from osw_studio.tasks import TaskEntry

log = logging.getLogger(__name__)

AgentFactory = Callable[[ResolvedProfile, TaskEntry], Agent]
"""Builds the agent that acts for a profile on a task."""


class Services:
    """The env and episode factory behind the main window.

    Args:
        settings: The settings in force (read at each run, so edits apply to the next run).
        runs_dir: Where run stores go.
        agent_factory: Builds agents (default: the agent package's factory for the profile's agent kind).
        env_options: Extra options for the provider (tests pass ``sandbox=False`` and the like).
    """

    def __init__(
        self,
        settings: Settings,
        runs_dir: Path,
        *,
        agent_factory: AgentFactory | None = None,
        env_options: dict[str, Any] | None = None,
    ) -> None:
        self.settings = settings
        self.runs_dir = runs_dir
        self.agent_factory = agent_factory or default_agent_factory
        self.env_options = dict(env_options or {})
        self.env: Env | None = None
        self._env_key: tuple[Any, ...] | None = None
        self.secrets: list[str] = []  # what run stores must never hold: the remote guest's token
        self._env_lock = asyncio.Lock()

    def env_description(self) -> str:
        """What the status bar says about the env."""
        if self.env is None:
            return f"{self.settings.environment.provider} (not started)"
        w, h = self.env.screen_size
        return f"{self.env.name} · {w}×{h}"

    async def ensure_env(self) -> Env:
        """The env, started (or restarted when the provider or screen size changed in the settings).

        Raises:
            GuestError: If the guest cannot be started or reached.
        """
        from osw_studio.envs.choice import choice_from_settings
        from osw_studio.envs.registry import make_env
        from osw_studio.settings.secrets import guest_token

        setting = self.settings.environment
        screen = self.settings.evaluation.screen_resolution
        choice = choice_from_settings(
            setting.provider, setting.url, setting.docker_options, setting.network, setting.desktop
        )
        # The token is looked up at each run, so one stored in Settings applies without a restart.
        (options,) = choice.env_options(1, screen=screen, token=guest_token)
        key = (str(choice), screen, options.get("token"))
        async with self._env_lock:
            if self.env is not None and self._env_key == key:
                return self.env
            await self._close_env()
            options.update(self.env_options)
            self.env = await make_env(choice.provider, **options)
            self._env_key = key
            self.secrets = [options["token"]] if options.get("token") else []
            return self.env

    def vnc_target(self, guest_url: str | None) -> VncTarget | None:
        """The VNC server the settings give for the guest at ``guest_url`` (with its password), or None.

        The viewer uses it for guests without a live stream. A port alone means the guest's host; the
        password is looked up at each call, so one stored in Settings applies to the next stream.
        """
        from osw_studio.settings.secrets import find_vnc_password
        from osw_studio.settings.vnc import format_vnc_address, vnc_address

        setting = self.settings.environment.vnc
        if not setting:
            return None
        host, port = vnc_address(setting, guest_url)
        return VncTarget(host, port, find_vnc_password(format_vnc_address(host, port)).value)

    async def create_episode(self, entry: TaskEntry, mode: Literal["auto", "approve"]) -> Episode:
        """A new episode of ``entry`` with the active profile's agent, recorded in the runs folder.

        Raises:
            OswError: If the env, the agent or the run store cannot be made (the message says why).
        """
        profile = self.settings.resolve_profile()
        agent = self.agent_factory(profile, entry)
        env = await self.ensure_env()
        store = RunStoreWriter.create(
            self.runs_dir,
            entry.task,
            domain=entry.domain,
            provider=self.settings.environment.provider,
            model=getattr(agent, "model_name", None) or profile.model,
            agent=profile.agent,
            action_space=profile.action_space,
            observation_type=profile.observation_type,
            screen_size=env.screen_size,
            settings=dump_settings(self.settings),
            secrets=self.secrets,
        )
        config = EpisodeConfig(max_steps=self.settings.evaluation.max_steps, mode=mode)
        return Episode(entry.task, agent, env, config=config, store=store, domain=entry.domain)

    async def _close_env(self) -> None:
        env, self.env = self.env, None
        if env is not None:
            try:
                await env.close()
            except OswError as exc:
                log.warning("closing the env: %s", exc)

    async def aclose(self) -> None:
        """Stop the env (and every process it started)."""
        async with self._env_lock:
            await self._close_env()


def default_agent_factory(profile: ResolvedProfile, entry: TaskEntry) -> Agent:
    """The agent the profile names, from the agent package.

    Raises:
        OswError: If the agent cannot be made (no key, unknown kind, no reference solution to replay).
    """
    from osw_studio.agent.registry import make_agent

    return make_agent(profile, task=entry.task)
