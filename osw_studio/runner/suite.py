"""A suite evaluation set up from the settings: its tasks, envs, agents and output folder, as one plan.

``osw-studio eval run`` and the app's Run › Evaluate suite… both build their batch here, so a suite runs
the same way from either. :func:`plan_suite` does everything that can fail on a user's input (the
profile and its agent, the suite, the provider, the model key) before any env starts;
:meth:`SuitePlan.batch` then makes the pool of workers and the :class:`~osw_studio.runner.batch.Batch`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from osw_studio.core.errors import SettingsError, TaskError
from osw_studio.envs.choice import EnvChoice, parse_provider
from osw_studio.runner.batch import Batch, Worker
from osw_studio.runner.slot import AgentMaker, EnvMaker, EnvSlot, SlotConfig
from osw_studio.runner.summary import RUNS_DIR, BatchSummary
from osw_studio.settings.model import EvaluatorKind, ResolvedProfile, Settings
from osw_studio.tasks.load import TaskEntry

AGENTS = ("replay", "osworld", "uitars", "qwen3vl", "opencua", "gpt54", "openai_cua", "claude")
"""Agents that can run a suite unattended (``human`` cannot)."""

DEFAULT_OUT = "results"
"""The output folder when neither the request nor the settings name one (relative to the working dir)."""

Report = Callable[[str], None]
"""Where notes for the person go (tasks skipped because they do not load)."""


@dataclass
class SuiteRequest:
    """What a person asked to run; every field but ``suite`` has the CLI's default.

    Attributes:
        suite: An index JSON (e.g. ``tasks/test_small.json``) or a folder of task files.
        profile: The settings profile (None: the active one).
        agent: Overrides the profile's agent kind (``replay`` needs no model or key).
        provider: An :class:`EnvChoice`, or ``--provider`` words for :func:`parse_provider`.
        envs: Envs in the pool (None: one, or one per remote URL).
        out: The output folder (None: the settings' ``output_dir``, else ``./results``).
        max_steps: Most agent steps per task (None: the settings').
        domains: Only these domains (None or empty: all).
        resume: Skip tasks that already have a score in ``out``.
        task_timeout: Seconds per task.
        recycle: ``task`` or ``error`` (None: ``task`` for local envs, ``error`` otherwise).
        backend: ``local`` (envs in this process) or ``ray`` (each env a Ray actor).
        address: The Ray cluster address (None: start a local Ray instance).
        env_options: Extra options for every env's ``create`` (the app passes its own, e.g. for tests).
        evaluator: ``osw-studio`` or ``osworld`` (None: the settings' ``evaluation.evaluator``).
    """

    suite: str | Path
    profile: str | None = None
    agent: str | None = None
    provider: EnvChoice | Sequence[str] = ("local",)
    envs: int | None = None
    out: str | Path | None = None
    max_steps: int | None = None
    domains: Sequence[str] | None = None
    resume: bool = False
    task_timeout: float = 1800.0
    recycle: Literal["task", "error"] | None = None
    backend: Literal["local", "ray"] = "local"
    address: str | None = None
    env_options: dict[str, Any] = field(default_factory=dict)
    evaluator: EvaluatorKind | None = None


@dataclass
class SuitePlan:
    """A suite ready to run: see :func:`plan_suite`.

    Attributes:
        request: What was asked.
        profile: The profile in force (its ``agent`` overridden by the request's).
        entries: The tasks, in the order they are handed out.
        out: The output folder.
        info: The summary's header.
        makers: One env factory per env of the pool.
        agents: Makes each task's agent.
        config: Timeouts, recycling, run store fields and secrets.
    """

    request: SuiteRequest
    profile: ResolvedProfile
    entries: list[TaskEntry]
    out: Path
    info: BatchSummary
    makers: list[EnvMaker]
    agents: AgentMaker
    config: SlotConfig

    @property
    def provider(self) -> str:
        """The provider id of the envs."""
        return self.info.provider or "local"

    def workers(self) -> list[Worker]:
        """The pool: an :class:`EnvSlot` per env, or a Ray actor per env with the ``ray`` backend.

        Raises:
            OswError: If Ray is missing or its cluster cannot be reached.
        """
        if self.request.backend == "ray":
            from osw_studio.runner.ray_backend import connect, ray_workers

            connect(self.request.address)
            return list(ray_workers(self.makers, self.agents, self.config, self.out / RUNS_DIR))
        return [
            EnvSlot(f"env-{i}", maker, self.agents, self.out / RUNS_DIR, self.config)
            for i, maker in enumerate(self.makers, 1)
        ]

    def batch(self) -> Batch:
        """A batch over a fresh pool (see :meth:`workers`); nothing starts until ``Batch.run``."""
        return Batch(self.entries, self.out, self.workers(), info=self.info, resume=self.request.resume)


def load_suite(
    suite: str | Path, domains: Sequence[str] | None, report: Report | None = None
) -> list[TaskEntry]:
    """The suite's tasks (only ``domains`` when given); files that do not load are reported and skipped.

    Raises:
        TaskError: If the suite does not exist or has no task to run.
    """
    from osw_studio.tasks.load import load_tasks

    if not Path(suite).exists():
        raise TaskError(
            "no such suite", where=str(suite), hint="give an index JSON or a folder of task files"
        )
    loaded = load_tasks([suite])
    for error in loaded.errors:
        if report is not None:
            report(f"skipped: {error}")
    entries = [e for e in loaded.entries if not domains or e.domain in domains]
    if not entries:
        where = f"{suite} (domains {', '.join(domains)})" if domains else str(suite)
        raise TaskError("the suite has no tasks to run", where=where, hint="check the suite and --domain")
    return entries


def plan_suite(settings: Settings, request: SuiteRequest, *, report: Report | None = None) -> SuitePlan:
    """Check a request against the settings and plan its batch.

    Args:
        settings: The settings in force (profiles, screen size, max steps, output folder).
        request: What to run.
        report: Receives notes (tasks that do not load), or None to drop them.

    Raises:
        SettingsError: If the profile is unknown, its agent cannot run unattended, or its key is missing.
        TaskError: If the suite does not exist or has no task.
        GuestError: If the provider words or the env count are wrong, or the provider cannot load.
    """
    from osw_studio.agent.registry import agent_class
    from osw_studio.envs.registry import load_provider
    from osw_studio.runner.plan import plan_env_options, plan_recipe
    from osw_studio.settings.secrets import guest_token

    profile = settings.resolve_profile(request.profile)
    if request.agent:
        profile = profile.model_copy(update={"agent": request.agent})
    if profile.agent not in AGENTS:
        agent_class(profile.agent)  # an unknown kind says so; a known one (human) cannot run unattended
        raise SettingsError(
            f"the {profile.agent!r} agent cannot run a suite unattended",
            hint=f"use --agent {', '.join(AGENTS)} (or `osw-studio run` to act yourself)",
        )
    entries = load_suite(request.suite, request.domains, report)
    choice = request.provider if isinstance(request.provider, EnvChoice) else parse_provider(request.provider)
    provider = choice.provider
    load_provider(provider)  # a provider that cannot load says so now, not once per task
    per_env = plan_env_options(settings, choice, request.envs, token=guest_token)
    tokens = {options["token"] for options in per_env if options.get("token")}
    recipe = plan_recipe(
        settings,
        profile=request.profile,
        agent=request.agent,
        provider=provider,
        max_steps=request.max_steps,
        secrets=sorted(tokens),
        evaluator=request.evaluator,
    )
    api_key = recipe.api_key
    max_steps = recipe.config.max_steps
    for options in per_env:
        options.update(request.env_options)
    config = SlotConfig(
        episode=recipe.config,
        task_timeout=request.task_timeout,
        recycle=request.recycle or ("task" if provider == "local" else "error"),
        run_meta=recipe.run_meta,
        secrets=recipe.secrets,
    )
    info = BatchSummary(
        suite=str(request.suite),
        agent=profile.agent,
        model="replay" if profile.agent == "replay" else profile.model,
        provider=provider,
        backend=request.backend,
        max_steps=max_steps,
    )
    return SuitePlan(
        request=request,
        profile=profile,
        entries=entries,
        out=Path(request.out or settings.evaluation.output_dir or DEFAULT_OUT),
        info=info,
        makers=[EnvMaker(provider, options) for options in per_env],
        agents=AgentMaker(profile, api_key),
        config=config,
    )
