"""What the window needs besides views: the env, new episodes, the runs folder. No Qt here.

Each run gets a fresh desktop by default (a new local sandbox, a recreated container), or keeps the last
one when the settings say ``environment.keep_desktop`` (chained manual work); the settings choose the
provider and screen size. A local sandbox for the next run is started while the current one runs
(:meth:`Services.prepare_spare`), so F5 does not wait for a desktop to start. Episodes are planned by
:mod:`osw_studio.runner.plan` from the active profile, exactly as ``osw-studio run`` plans them.
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
from osw_studio.runner.episode import Episode
from osw_studio.settings import ResolvedProfile, Settings
from osw_studio.tasks import TaskEntry

log = logging.getLogger(__name__)

AgentFactory = Callable[[ResolvedProfile, TaskEntry], Agent]
"""Builds the agent that acts for a profile on a task (the run planner's ``agent_factory``)."""


class Services:
    """The env and episode factory behind the main window.

    Args:
        settings: The settings in force (read at each run, so edits apply to the next run).
        runs_dir: Where run stores go.
        agent_factory: Builds agents (default: the agent registry, with the profile's key).
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
        self.agent_factory = agent_factory
        self.env_options = dict(env_options or {})
        self.env: Env | None = None
        self._env_key: tuple[Any, ...] | None = None
        self.secrets: list[str] = []  # what run stores must never hold: the remote guest's token
        self.session_key: str | None = None
        """A model key given for this session only (no keyring to keep it in)."""
        self.note: str | None = None
        """What the person should know about the last env handed out (a desktop that is not fresh)."""
        self._used = False
        self._env_lock = asyncio.Lock()
        self._spare: asyncio.Future[Env] | None = None
        self._spare_key: tuple[Any, ...] | None = None

    def env_description(self) -> str:
        """What the status bar says about the env."""
        if self.env is None:
            return f"{self.settings.environment.provider} (not started)"
        w, h = self.env.screen_size
        return f"{self.env.name} · {w}×{h}"

    def _env_plan(self, desktop: str | None = None) -> tuple[tuple[Any, ...], str, dict[str, Any]]:
        """The env the settings ask for: a key that tells envs apart, the provider and its options.

        ``desktop`` is a task's own desktop (``"desktop": "osworld"``), which wins over the settings' for
        the local sandbox and Docker guests, as in ``osw-studio run`` and ``tasks check``.
        """
        from osw_studio.envs.choice import choice_from_settings
        from osw_studio.runner.plan import plan_env_options
        from osw_studio.settings.secrets import guest_token

        setting = self.settings.environment
        screen = self.settings.evaluation.screen_resolution
        chosen = desktop if desktop and setting.provider in ("local", "docker") else setting.desktop
        choice = choice_from_settings(
            setting.provider, setting.url, setting.docker_options, setting.network, chosen
        )
        # The token is looked up at each run, so one stored in Settings applies without a restart.
        (options,) = plan_env_options(self.settings, choice, 1, token=guest_token)
        key = (str(choice), screen, options.get("token"))
        options.update(self.env_options)
        return key, choice.provider, options

    async def ensure_env(self, desktop: str | None = None) -> Env:
        """The env, started (or restarted when the provider, screen size or desktop changed).

        Raises:
            GuestError: If the guest cannot be started or reached.
        """
        from osw_studio.envs.registry import make_env

        key, provider, options = self._env_plan(desktop)
        async with self._env_lock:
            if self.env is not None and self._env_key == key:
                return self.env
            await self._close_env()
            self.env = await self._take_spare(key) or await make_env(provider, **options)
            self._env_key = key
            self._used = False
            self.secrets = [options["token"]] if options.get("token") else []
            return self.env

    def prepare_spare(self) -> None:
        """Start the next run's fresh local sandbox now, in the background.

        The run view calls this once the current run's task is set up. Nothing happens when the desktop
        is kept between runs, for other providers (a container or a remote guest is reset, not
        replaced), or when a spare is already there. A spare that fails to start is logged and the next
        run starts its own.
        """
        from osw_studio.envs.registry import make_env

        environment = self.settings.environment
        if environment.provider != "local" or environment.keep_desktop or self._spare is not None:
            return
        try:
            key, provider, options = self._env_plan()
        except OswError as exc:  # settings the next run will report
            log.info("no spare desktop: %s", exc)
            return
        self._spare_key = key
        self._spare = asyncio.ensure_future(make_env(provider, **options))

    @property
    def spare(self) -> Env | None:
        """The next run's desktop, once it has started (see :meth:`prepare_spare`)."""
        spare = self._spare
        if spare is None or not spare.done() or spare.cancelled() or spare.exception() is not None:
            return None
        return spare.result()

    async def _take_spare(self, key: tuple[Any, ...]) -> Env | None:
        """The spare desktop if it was started for ``key`` and started well; else None (it is discarded)."""
        spare, self._spare = self._spare, None
        if spare is None:
            return None
        if self._spare_key != key:  # the settings changed since it started
            await _discard(spare)
            return None
        try:
            return await spare
        except Exception as exc:  # a spare that failed must not fail the run: it starts its own
            log.warning("the spare desktop did not start (the run starts its own): %s", exc)
            return None

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

    async def create_episode(
        self, entry: TaskEntry, mode: Literal["auto", "approve"], *, instruction: bool = False
    ) -> Episode:
        """A new episode of ``entry`` with the active profile's agent, recorded in the runs folder.

        It is planned as ``osw-studio run`` plans it (:mod:`osw_studio.runner.plan`): the same agent, the
        observations the agent asks for, the task's folder carried into ``env.reset``. Unless the settings
        keep the desktop, each run starts on a fresh one (see :meth:`fresh_env`). An ``instruction``
        (:mod:`osw_studio.runner.instruction`) runs on the current desktop and is scored by whether the
        agent said it is done.

        Raises:
            OswError: If the env, the agent or the run store cannot be made (the message says why).
        """
        from osw_studio.runner.instruction import score_instruction
        from osw_studio.runner.plan import plan_episode, plan_recipe

        recipe = plan_recipe(
            self.settings,
            provider=self.settings.environment.provider,
            mode=mode,
            api_key=self.session_key,
            agent_factory=self.agent_factory,
            hold_on_model_error=True,  # a person is there to retry (Run › Retry model call)
            attended=True,  # and to answer a call_user, even in auto mode
        )
        agent = recipe.make_agent(entry)
        try:
            if instruction:
                env = await self.ensure_env()
                self._used = True
            else:
                env = await self.fresh_env(entry.task.desktop)
            recipe = recipe.with_secrets(self.secrets)
            evaluate = score_instruction if instruction else None
            return plan_episode(entry, recipe, env, runs_dir=self.runs_dir, agent=agent, evaluate=evaluate)
        except BaseException:
            await agent.aclose()
            raise

    def replaces_env(self) -> bool:
        """Whether the next run closes the current env and starts another (a fresh local sandbox)."""
        environment = self.settings.environment
        return (
            self.env is not None
            and self._used
            and not environment.keep_desktop
            and environment.provider == "local"
        )

    async def fresh_env(self, desktop: str | None = None) -> Env:
        """The env for the next run: a fresh desktop unless ``environment.keep_desktop`` is set.

        ``desktop`` is the task's own desktop, if it names one (a kept desktop of another kind is
        replaced all the same).

        A local sandbox is replaced by a new one (it starts in about half a second); a Docker guest
        recreates its container when the task is reset; a remote guest cannot be reverted from here, so
        :attr:`note` says that the run starts on the desktop as the last run left it.

        Raises:
            GuestError: If the guest cannot be started or reached.
        """
        self.note = None
        environment = self.settings.environment
        used = self.env is not None and self._used
        if self.replaces_env():
            async with self._env_lock:
                await self._close_env()
        elif used and not environment.keep_desktop and environment.provider == "remote":
            self.note = (
                "The remote guest cannot be reset to a fresh desktop from here: this run starts "
                "where the last one ended (the task's setup steps still run)."
            )
        env = await self.ensure_env(desktop)
        self._used = True
        return env

    async def _close_env(self) -> None:
        env, self.env = self.env, None
        if env is not None:
            try:
                await env.close()
            except OswError as exc:
                log.warning("closing the env: %s", exc)

    async def aclose(self) -> None:
        """Stop the env and the spare desktop (and every process they started)."""
        async with self._env_lock:
            await self._close_env()
            spare, self._spare = self._spare, None
            if spare is not None:
                await _discard(spare)


async def _discard(spare: asyncio.Future[Env]) -> None:
    """Stop a spare env, started or still starting (a provider stops what it started when cancelled)."""
    if not spare.done():
        spare.cancel()
    try:
        env = await spare
    except asyncio.CancelledError:
        return
    except Exception as exc:  # it never started: nothing to stop
        log.info("the spare desktop did not start: %s", exc)
        return
    try:
        await env.close()
    except OswError as exc:
        log.warning("closing the spare desktop: %s", exc)
