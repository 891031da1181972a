"""One env of a batch's pool and what it takes to run one task on it.

An :class:`EnvSlot` owns at most one env at a time. :meth:`EnvSlot.run` makes the task's agent, starts
an env when the slot has none, runs the episode within the task's timeout and writes its run store. It
never raises for a task's trouble: a crash, a timeout or an env that would not start becomes a
:class:`~osw_studio.runner.summary.TaskOutcome` with status ``error``, and the env is then recycled
(closed, and a fresh one started for the next task), so one bad task cannot poison the rest.

With ``recycle="task"`` every task gets a fresh env. That is the local provider's default: a local
desktop starts in about half a second, and a fresh one is the only way to undo what the last task left
behind (OSWorld reverts its VMs to a snapshot for the same reason).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from osw_studio.agent.base import Agent
from osw_studio.core.errors import OswError
from osw_studio.core.outcome import OutcomeKind, error_kind
from osw_studio.envs.base import Env
from osw_studio.runner.episode import Episode, EpisodeConfig
from osw_studio.runner.plan import RunRecipe, plan_episode
from osw_studio.runner.store import write_atomic
from osw_studio.runner.summary import TaskOutcome
from osw_studio.settings.model import ResolvedProfile
from osw_studio.tasks.load import TaskEntry

log = logging.getLogger(__name__)

EnvFactory = Callable[[], Awaitable[Env]]
"""Starts (or connects to) one env."""
AgentFactory = Callable[[TaskEntry], Agent]
"""Makes the agent for one task."""

STOP_GRACE = 10.0
"""Seconds a timed-out episode gets to stop by itself (its result written) before it is cancelled."""


@dataclass
class EnvMaker:
    """An :data:`EnvFactory` that calls :func:`osw_studio.envs.registry.make_env` (picklable, for Ray).

    Attributes:
        provider: The provider id (``local``, ``remote``).
        options: Passed to the provider's ``create``.
    """

    provider: str = "local"
    options: dict[str, Any] = field(default_factory=dict)

    async def __call__(self) -> Env:
        """Start one env."""
        from osw_studio.envs.registry import make_env

        return await make_env(self.provider, **self.options)


@dataclass
class AgentMaker:
    """An :data:`AgentFactory` that builds the agent a profile names (picklable, for Ray).

    Attributes:
        profile: The resolved profile (its ``agent`` says which agent).
        api_key: The model key, looked up once by the caller (None for replay).
    """

    profile: ResolvedProfile
    api_key: str | None = field(default=None, repr=False)

    def __call__(self, entry: TaskEntry) -> Agent:
        """The agent for ``entry``'s task."""
        from osw_studio.agent.registry import make_agent

        return make_agent(self.profile, task=entry.task, api_key=self.api_key)


@dataclass
class SlotConfig:
    """How a slot runs its tasks.

    Attributes:
        episode: Limits and modes of each episode.
        task_timeout: Seconds one task may hold its env, env start and evaluation included.
        env_start_timeout: Seconds to wait for an env to start.
        recycle: ``task`` (a fresh env for every task) or ``error`` (only after a task ended in error).
        run_meta: Extra ``run.json`` fields (provider, agent, action_space, observation_type, settings).
        secrets: Values never written to a run store (API keys).
    """

    episode: EpisodeConfig = field(default_factory=EpisodeConfig)
    task_timeout: float = 1800.0
    env_start_timeout: float = 120.0
    recycle: Literal["task", "error"] = "task"
    run_meta: dict[str, Any] = field(default_factory=dict)
    secrets: tuple[str, ...] = field(default=(), repr=False)

    def recipe(self) -> RunRecipe:
        """The run planner's recipe for each task of the slot (its agents come from the slot)."""
        return RunRecipe(config=self.episode, run_meta=self.run_meta, secrets=self.secrets)


class EnvSlot:
    """One env of the pool; runs one task at a time on it.

    Args:
        name: The slot's label in results (``env-1`` ...).
        envs: Starts an env.
        agents: Makes each task's agent.
        runs_dir: Where run stores go.
        config: Timeouts and the recycle policy.
    """

    def __init__(
        self, name: str, envs: EnvFactory, agents: AgentFactory, runs_dir: Path, config: SlotConfig
    ) -> None:
        self.name = name
        self.envs = envs
        self.agents = agents
        self.runs_dir = runs_dir
        self.config = config
        self.env: Env | None = None
        self.episode: Episode | None = None
        self.recycled: Counter[str] = Counter()
        """Envs closed by reason: ``error`` (after a failed task), ``task`` (one per task), ``close``."""
        self._stopping = False
        self._budget: str | None = None

    def end_for_budget(self, reason: str) -> None:
        """The suite's budget ran out: the run in flight ends ``budget`` at its next step (and is scored)."""
        self._budget = reason
        if self.episode is not None:
            self.episode.end_for_budget(reason)

    async def run(self, entry: TaskEntry) -> TaskOutcome:
        """Run one task; never raises for the task's own trouble (see the module docstring)."""
        started = time.time()
        outcome = TaskOutcome(task_id=entry.task.id, domain=entry.domain, status="error", env=self.name)
        try:
            agent = self.agents(entry)
        except OswError as exc:
            outcome.error = f"the agent could not be made: {exc}"
            outcome.kind = OutcomeKind.MODEL_ERROR
            outcome.finished_at = time.time()
            return outcome
        broken = True
        try:
            broken = await self._run_within_timeout(entry, agent, outcome)
        finally:
            self.episode = None
            with contextlib.suppress(Exception):
                await agent.aclose()
            if broken or self.config.recycle == "task":
                await self.recycle("error" if broken else "task")
            outcome.time = time.time() - started
            outcome.finished_at = time.time()
        return outcome

    async def _run_within_timeout(self, entry: TaskEntry, agent: Agent, outcome: TaskOutcome) -> bool:
        """Run the attempt; fill ``outcome``; return whether the env must be recycled."""
        work = asyncio.ensure_future(self._attempt(entry, agent, outcome))
        try:
            done, _ = await asyncio.wait({work}, timeout=self.config.task_timeout)
        except asyncio.CancelledError:
            work.cancel()
            with contextlib.suppress(BaseException):
                await work
            raise
        if not done:
            await self._end_timed_out(work)
            outcome.status = "error"
            outcome.score = None
            outcome.success = False
            outcome.error = f"timed out after {self.config.task_timeout:g} s (the task timeout)"
            outcome.kind = OutcomeKind.TIMEOUT
            self._mark_result_timed_out(outcome)
            return True
        exc = work.exception()
        if exc is None:
            return outcome.status == "error"
        outcome.status = "error"
        outcome.kind = error_kind(exc)
        if isinstance(exc, OswError):
            outcome.error = str(exc)
        else:
            log.error("task %s crashed on %s", entry.task.id, self.name, exc_info=exc)
            outcome.error = f"crashed: {exc!r}"
        return True

    async def _attempt(self, entry: TaskEntry, agent: Agent, outcome: TaskOutcome) -> None:
        if self.env is None:
            try:
                self.env = await asyncio.wait_for(self.envs(), self.config.env_start_timeout)
            except TimeoutError:
                raise OswError(
                    f"the env did not start within {self.config.env_start_timeout:g} s",
                    where=self.name,
                    hint="check the provider (`osw-studio sandbox check` for local desktops)",
                ) from None
        self.episode = plan_episode(
            entry,
            self.config.recipe(),
            self.env,
            runs_dir=self.runs_dir,
            agent=agent,
            run_meta={"env": self.name},
        )
        store = self.episode.store
        outcome.run_id = store.run_id if store is not None else None
        if self._stopping:
            self.episode.stop()
        if self._budget is not None:
            self.episode.end_for_budget(self._budget)
        result = await self.episode.run()
        outcome.score = result.score
        outcome.success = result.success
        outcome.steps = result.steps
        outcome.status = result.status
        outcome.error = result.error
        outcome.kind = result.kind
        outcome.usage = result.usage
        outcome.cost = result.cost

    async def _end_timed_out(self, work: asyncio.Future[None]) -> None:
        """Stop the episode (its result is then written), or cancel it when it does not stop in time."""
        if self.episode is not None:
            self.episode.stop()
            done, _ = await asyncio.wait({work}, timeout=STOP_GRACE)
            if done:
                return
        work.cancel()
        with contextlib.suppress(BaseException):
            await work

    def _mark_result_timed_out(self, outcome: TaskOutcome) -> None:
        """Say in the run's ``result.json`` that the task timed out (the episode wrote stopped)."""
        episode = self.episode
        if episode is None or episode.result is None or episode.run_dir is None:
            return
        outcome.steps = episode.result.steps
        result = episode.result.model_copy(
            update={
                "status": "error",
                "error": outcome.error,
                "score": None,
                "success": False,
                "kind": OutcomeKind.TIMEOUT,
            }
        )
        with contextlib.suppress(OswError):
            write_atomic(episode.run_dir / "result.json", result.model_dump_json(indent=2).encode())

    def stop(self) -> None:
        """Stop the episode in flight (its result says ``stopped``) and take no more tasks."""
        self._stopping = True
        if self.episode is not None:
            self.episode.stop()

    async def recycle(self, reason: str = "error") -> None:
        """Close the env; the next task starts a fresh one."""
        env, self.env = self.env, None
        if env is None:
            return
        self.recycled[reason] += 1
        try:
            await asyncio.wait_for(env.close(), 30.0)
        except (OswError, TimeoutError) as exc:
            log.warning("closing %s (%s): %s", self.name, reason, exc)

    async def close(self) -> None:
        """Close the env for good."""
        await self.recycle("close")
