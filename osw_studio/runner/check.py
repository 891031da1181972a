"""Check a task: its reference solution must score 1.0 and doing nothing must score 0.0.

For each task, :func:`check_task` runs two episodes on fresh sandboxes:

1. *solution*: an :class:`~osw_studio.runner.episode.Episode` with the replay agent, which plays the
   task's ``solution`` after the task's setup, then evaluates; the score must be 1.0;
2. *empty*: the task's setup on a fresh guest, then the evaluation with no actions; the score must be
   0.0 (an infeasible task is not answered with FAIL, so it scores 0 too).

A fresh guest per run keeps runs independent (no file, window or process is left over from the one
before). Starting a local sandbox takes about a second, so an :class:`EnvSource` starts the next guest
while the current one is in use. :func:`check_tasks` runs N workers side by side, each with its own
source, and reports each result as it comes.

Examples:
    >>> r = CheckResult("t1", solution_score=1.0, empty_score=0.0, seconds=12.34)
    >>> r.passed, r.line()
    (True, 'PASS t1 solution=1.0 empty=0.0 (12.3s)')
    >>> CheckResult("t2", solution_score=0.5, empty_score=0.0, seconds=3).line()
    'FAIL t2: the solution scored 0.5, not 1.0 (3.0s)'
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from osw_studio.core.errors import OswError
from osw_studio.core.task import Task
from osw_studio.runner.episode import EpisodeConfig

if TYPE_CHECKING:
    from osw_studio.agent.base import Agent
    from osw_studio.envs.base import Env
    from osw_studio.envs.desktops import DesktopProfile
    from osw_studio.tasks.assets import AssetStore
    from osw_studio.tasks.load import TaskEntry

log = logging.getLogger(__name__)

CHECK_TIMEOUTS: dict[str, float] = {
    "reset": 120.0,
    "observe": 30.0,
    "predict": 30.0,
    "execute": 60.0,
    "evaluate": 120.0,
}
"""Phase limits for a check: tighter than a model run's, since nothing waits on a model."""

AgentFactory = Callable[[Task], "Agent"]
"""Makes the agent that plays a task's reference solution."""


@dataclass
class CheckResult:
    """The outcome of checking one task.

    Attributes:
        task_id: The task's id.
        path: The task file, when known.
        solution_score: What the reference solution scored (``None`` if it could not be scored).
        empty_score: What doing nothing scored (``None`` if it could not be scored).
        errors: What went wrong, one sentence each.
        seconds: Wall time of the whole check.
    """

    task_id: str
    path: Path | None = None
    solution_score: float | None = None
    empty_score: float | None = None
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    has_solution: bool = True
    skipped: str | None = None

    @property
    def passed(self) -> bool:
        """Whether doing nothing scored 0.0, the solution (if the task has one) 1.0, and nothing failed."""
        if self.skipped is not None or self.errors or self.empty_score != 0.0:
            return False
        return self.solution_score == 1.0 or not self.has_solution

    @property
    def status(self) -> str:
        """``PASS``, ``FAIL`` or ``SKIP`` (a missing asset or application: nothing was run)."""
        return "SKIP" if self.skipped is not None else "PASS" if self.passed else "FAIL"

    @property
    def reasons(self) -> list[str]:
        """Why the check failed (empty when it passed).

        >>> CheckResult("t", solution_score=1.0, empty_score=1.0).reasons
        ['doing nothing scored 1.0, not 0.0']
        """
        found = list(self.errors)
        if self.solution_score is not None and self.solution_score != 1.0:
            found.append(f"the solution scored {self.solution_score:g}, not 1.0")
        if self.empty_score is not None and self.empty_score != 0.0:
            found.append(f"doing nothing scored {self.empty_score:.1f}, not 0.0")
        unscored = self.empty_score is None or (self.has_solution and self.solution_score is None)
        if not found and unscored:
            found.append("not scored")
        return found

    def line(self) -> str:
        """One line for the terminal: ``PASS <id> ...``, ``FAIL <id>: why`` or ``SKIP <id>: why``.

        A passing line is ``PASS <id> solution=1.0 empty=0.0 (12.3s)``.
        """
        if self.skipped is not None:
            return f"SKIP {self.task_id}: {self.skipped}"
        if self.passed:
            solution = f"solution={self.solution_score:.1f}" if self.has_solution else "(no solution)"
            return f"PASS {self.task_id} {solution} empty={self.empty_score:.1f} ({self.seconds:.1f}s)"
        return f"FAIL {self.task_id}: {'; '.join(self.reasons)} ({self.seconds:.1f}s)"


def skip_reason(task: Task, *, assets: AssetStore | None, desktop: DesktopProfile | None) -> str | None:
    """Why ``task`` cannot be checked here, or None.

    A task is skipped for a file missing from the asset cache, an application the desktop lacks, or a
    step that needs a Google account.
    """
    from osw_studio.tasks.assets import task_urls

    for step in [*task.config, *task.evaluator.postconfig]:
        if step.type in ("googledrive", "login"):
            return f"needs a Google account (a {step.type!r} step)"
    if desktop is not None:
        programs = [_program(step) for step in [*task.config, *task.evaluator.postconfig]]
        missing = desktop.unavailable([p for p in programs if p])
        if missing:
            return f"needs {missing[0]!r}, which is not installed here ({desktop.describe(missing[0])})"
    if assets is not None:
        for url, _name in task_urls(task):
            if assets.get(url) is None:
                return f"the asset {url} is not cached (osw-studio assets fetch SUITE)"
    return None


def _program(step: Any) -> str | None:
    """The program a ``launch``/``execute`` step starts (its first word)."""
    command = getattr(getattr(step, "parameters", None), "command", None)
    if isinstance(command, list) and command:
        return str(command[0]).rsplit("/", 1)[-1]
    if isinstance(command, str) and command.split():
        return command.split()[0].rsplit("/", 1)[-1]
    return None


class EnvSource:
    """Hands out fresh envs of one provider, starting the next while the current one is in use.

    Args:
        provider: The provider id (``local`` by default).
        options: Options for the provider's ``create`` (``screen``, ...).
        warm: Start envs ahead of time (``prestart``); ``warm`` may be turned off for the last take.
    """

    def __init__(self, provider: str = "local", *, warm: bool = True, **options: Any) -> None:
        self.provider = provider
        self.options = options
        self.prestart = warm
        self.warm = warm
        self._next: asyncio.Task[Env] | None = None

    def _start(self) -> asyncio.Task[Env]:
        from osw_studio.envs.registry import make_env

        return asyncio.ensure_future(make_env(self.provider, **self.options))

    async def take(self, *, warm_next: bool | None = None) -> Env:
        """A fresh env, now; the caller closes it.

        Args:
            warm_next: Start the next env now (default: the source's ``warm``).

        Raises:
            GuestError: If the env could not be started.
        """
        pending = self._next or self._start()
        self._next = None
        try:
            env = await pending
        finally:
            if self.warm if warm_next is None else warm_next:
                self._next = self._start()
        return env

    async def aclose(self) -> None:
        """Stop the env started ahead, if any."""
        pending, self._next = self._next, None
        if pending is None:
            return
        pending.cancel()
        with contextlib.suppress(asyncio.CancelledError, OswError):
            env = await pending
            await env.close()


def replay_agent(task: Task) -> Agent:
    """The agent that plays ``task``'s reference solution."""
    from osw_studio.agent.replay import ReplayAgent

    return ReplayAgent.from_task(task)


async def _solution_score(
    entry: TaskEntry, env: Env, make_agent: AgentFactory, config: EpisodeConfig
) -> tuple[float | None, str | None]:
    from osw_studio.runner.plan import RunRecipe, plan_episode

    agent = make_agent(entry.task)
    episode = plan_episode(entry, RunRecipe(config=config), env, runs_dir=None, agent=agent)
    try:
        result = await episode.run()
    finally:
        await agent.aclose()
    if result.status == "error":
        return None, f"the solution run failed: {result.error}"
    failed_steps = [s for s in episode.steps if s.error]
    if result.score != 1.0 and failed_steps:
        return result.score, f"step {failed_steps[0].index} of the solution failed: {failed_steps[0].error}"
    return result.score, None


async def _empty_score(entry: TaskEntry, env: Env) -> float:
    from osw_studio.evaluation.evaluate import evaluate

    await asyncio.wait_for(env.reset(entry.task, task_dir=entry.path.parent), CHECK_TIMEOUTS["reset"])
    outcome = await asyncio.wait_for(
        evaluate(env, entry.task, [], task_dir=entry.path.parent), CHECK_TIMEOUTS["evaluate"]
    )
    return outcome.score


async def _closed(env: Env) -> None:
    try:
        await env.close()
    except OswError as exc:
        log.warning("closing %s: %s", env.name, exc)


async def check_task(
    entry: TaskEntry,
    *,
    provider: str = "local",
    source: EnvSource | None = None,
    make_agent: AgentFactory = replay_agent,
    config: EpisodeConfig | None = None,
    require_solution: bool = True,
    assets: AssetStore | None = None,
    apps: DesktopProfile | None = None,
) -> CheckResult:
    """Check one task: its solution must score 1.0 and doing nothing 0.0, each on a fresh guest.

    Args:
        entry: The task and its file.
        provider: The provider of fresh guests, when no ``source`` is given.
        source: Where fresh guests come from (shared across tasks so the next one starts early).
        make_agent: Makes the agent that plays the solution (the replay agent by default).
        config: Episode limits (default: the solution's length plus one step, :data:`CHECK_TIMEOUTS`).
        require_solution: A task without a reference solution fails; otherwise only its untouched end
            state is scored (it must score 0.0: a feasible task is not done by itself, an infeasible
            one is not answered with FAIL).
        assets: The asset cache; a task whose files are not in it is skipped (``SKIP``), not failed.
        apps: The guests' desktop profile; a task that starts a program it lacks is skipped.

    Returns:
        The scores and what went wrong; errors a user can cause are reported, never raised.
    """
    started = time.perf_counter()
    task = entry.task
    result = CheckResult(task.id, path=entry.path, has_solution=bool(task.solution))
    if not task.solution and require_solution:
        result.errors.append("the task has no reference solution (the `solution` key)")
        return result
    result.skipped = skip_reason(task, assets=assets, desktop=apps)
    if result.skipped is not None:
        return result
    own = source is None
    envs = source or EnvSource(provider, warm=False)
    config = config or EpisodeConfig(
        max_steps=len(task.solution or ()) + 1, phase_timeouts=dict(CHECK_TIMEOUTS)
    )
    runs = ("solution", "empty") if task.solution else ("empty",)
    try:
        for run in runs:
            try:
                # While the solution plays, the guest for the empty run starts.
                env = await envs.take(warm_next=(envs.prestart or own) if run != runs[-1] else None)
            except OswError as exc:
                result.errors.append(f"no guest for the {run} run: {exc}")
                break
            try:
                if run == "solution":
                    result.solution_score, error = await _solution_score(entry, env, make_agent, config)
                    if error:
                        result.errors.append(error)
                else:
                    result.empty_score = await _empty_score(entry, env)
            except OswError as exc:
                result.errors.append(f"the {run} run failed: {exc}")
            except TimeoutError:
                result.errors.append(f"the {run} run took too long")
            except Exception as exc:  # a broken task must not stop the check of the others
                log.exception("checking %s", task.id)
                result.errors.append(f"the {run} run crashed: {exc!r}")
            finally:
                await _closed(env)
    finally:
        if own:
            await envs.aclose()
    result.seconds = time.perf_counter() - started
    return result


async def check_tasks(
    entries: Sequence[TaskEntry],
    *,
    envs: int = 1,
    provider: str = "local",
    make_agent: AgentFactory = replay_agent,
    on_result: Callable[[CheckResult], None] | None = None,
    warm: bool = True,
    require_solution: bool = True,
    assets: AssetStore | None = None,
    apps: DesktopProfile | None = None,
    task_timeout: float | None = None,
    **provider_options: Any,
) -> list[CheckResult]:
    """Check tasks on ``envs`` guests side by side; results come back in the order of ``entries``.

    Args:
        entries: The tasks.
        envs: How many guests run at once.
        provider: Where guests come from.
        make_agent: Makes the agent that plays each solution.
        on_result: Called with each result as soon as its task is checked.
        warm: Start each worker's next guest while the current one is in use.
        require_solution: See :func:`check_task`.
        assets: See :func:`check_task`.
        apps: See :func:`check_task`.
        task_timeout: Seconds one task's check may take (None: only each phase's own limit); a task
            over it fails saying so, its guests closed, and the next one starts on a fresh guest.
        provider_options: Options for the provider's ``create``.
    """
    queue: asyncio.Queue[int] = asyncio.Queue()
    for index in range(len(entries)):
        queue.put_nowait(index)
    results: list[CheckResult | None] = [None] * len(entries)

    async def worker() -> None:
        source = EnvSource(provider, warm=warm, **provider_options)
        try:
            while not queue.empty():
                index = queue.get_nowait()
                # The last task of a worker need not warm a guest nobody will use.
                source.warm = warm and not queue.empty()
                check = check_task(
                    entries[index],
                    source=source,
                    make_agent=make_agent,
                    require_solution=require_solution,
                    assets=assets,
                    apps=apps,
                )
                started = time.perf_counter()
                try:
                    result = await asyncio.wait_for(check, task_timeout)
                except TimeoutError:
                    entry = entries[index]
                    result = CheckResult(
                        entry.task.id, path=entry.path, has_solution=bool(entry.task.solution)
                    )
                    result.errors.append(f"timed out after {task_timeout:g} s (the task timeout)")
                    result.seconds = time.perf_counter() - started
                results[index] = result
                if on_result is not None:
                    on_result(result)
        finally:
            await source.aclose()

    await asyncio.gather(*(worker() for _ in range(max(1, min(envs, len(entries))))))
    return [r for r in results if r is not None]
