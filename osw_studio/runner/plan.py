"""The one run planner: a runnable episode from a task entry, the settings and an env.

Every way of running a task goes through here: ``osw-studio run``, ``osw-studio eval run`` and the app's
Run › Evaluate suite… (through :mod:`osw_studio.runner.suite` and its slots), ``osw-studio tasks check``,
and the app's F5. The planner is in two halves:

- :func:`plan_recipe` reads the settings once (the profile and its agent kind, the model key, the step
  limit, what ``run.json`` records) and fails on a user's mistake before any guest starts;
- :func:`plan_episode` makes one task's :class:`~osw_studio.runner.episode.Episode` on an env: its agent,
  its observation needs (the agent says whether it wants the accessibility tree), its run store, and the
  task's folder, which travels with the task into ``env.reset`` (relative paths in ``download`` steps and
  in the evaluator resolve there). No caller mutates an env or hands it options out of band.

Examples:
    >>> from osw_studio.settings import Settings
    >>> recipe = plan_recipe(Settings(), agent="replay", max_steps=5)
    >>> recipe.profile.agent, recipe.config.max_steps, recipe.config.mode, recipe.api_key is None
    ('replay', 5, 'auto', True)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from osw_studio.runner.episode import Episode, EpisodeConfig, EvaluateFunc
from osw_studio.settings.model import EvaluatorKind, ResolvedProfile, Settings
from osw_studio.tasks.load import TaskEntry

if TYPE_CHECKING:
    from osw_studio.agent.base import Agent
    from osw_studio.envs.base import Env
    from osw_studio.envs.choice import EnvChoice, TokenLookup

MODEL_AGENTS = ("osworld", "uitars", "qwen3vl", "opencua", "gpt54", "openai_cua", "claude")
"""Agent kinds that call a model (and so need a key)."""

Mode = Literal["auto", "approve"]

AgentFactory = Callable[[ResolvedProfile, TaskEntry], "Agent"]
"""Builds the agent for a profile and a task (the default: the agent registry's ``make_agent``)."""


def plan_env_options(
    settings: Settings, choice: EnvChoice, envs: int | None = None, *, token: TokenLookup | None = None
) -> list[dict[str, Any]]:
    """One option set per env for the provider's ``create``.

    The choice's own options, the settings' screen size, and the setup options every run uses (the
    asset cache of the ``assets`` section).
    """
    from osw_studio.envs.setup import setup_options

    per_env = choice.env_options(envs, screen=settings.evaluation.screen_resolution, token=token)
    for options in per_env:
        options.setdefault("setup", setup_options(settings))
    return per_env


@dataclass
class RunRecipe:
    """What the settings say about every run of a session, whatever the task.

    Attributes:
        profile: The resolved profile (its ``agent`` overridden when asked); None when every agent is
            handed to :func:`plan_episode` (``tasks check`` plays reference solutions).
        config: Limits and mode of each episode (``observe_accessibility`` is the agent's call).
        run_meta: ``run.json`` fields besides the task's: provider, action space, observation type, and
            the settings in force.
        secrets: Values no run store may hold (the model key, guest tokens).
        api_key: The model key, looked up once (None for agents without a model).
        agent_factory: Builds each task's agent (None: the agent registry).
    """

    profile: ResolvedProfile | None = None
    config: EpisodeConfig = field(default_factory=EpisodeConfig)
    run_meta: dict[str, Any] = field(default_factory=dict)
    secrets: tuple[str, ...] = field(default=(), repr=False)
    api_key: str | None = field(default=None, repr=False)
    agent_factory: AgentFactory | None = field(default=None, repr=False)

    def make_agent(self, entry: TaskEntry) -> Agent:
        """The agent for ``entry``'s task.

        Raises:
            OswError: If it cannot be made (no key, no reference solution to replay).
        """
        from osw_studio.core.errors import SettingsError

        if self.profile is None:
            raise SettingsError("no profile to make an agent from", hint="pass the agent to plan_episode")
        if self.agent_factory is not None:
            return self.agent_factory(self.profile, entry)
        from osw_studio.agent.registry import make_agent

        return make_agent(self.profile, task=entry.task, api_key=self.api_key)

    def with_secrets(self, secrets: Sequence[str]) -> RunRecipe:
        """This recipe, with more values kept out of run stores (e.g. a guest token known later)."""
        merged = tuple(dict.fromkeys([*self.secrets, *(s for s in secrets if s)]))
        return dataclasses.replace(self, secrets=merged)


def plan_recipe(
    settings: Settings,
    *,
    profile: str | None = None,
    agent: str | None = None,
    provider: str = "local",
    mode: Mode = "auto",
    max_steps: int | None = None,
    api_key: str | None = None,
    secrets: Sequence[str] = (),
    agent_factory: AgentFactory | None = None,
    hold_on_model_error: bool = False,
    attended: bool | None = None,
    evaluator: EvaluatorKind | None = None,
) -> RunRecipe:
    """Read the settings for a session of runs.

    Args:
        settings: The settings in force.
        profile: The profile's name (None: the active one).
        agent: Overrides the profile's agent kind (``replay`` needs no model or key).
        provider: The provider id the envs come from (recorded in ``run.json``).
        mode: ``auto`` or ``approve``.
        max_steps: Most agent steps (None: the settings').
        api_key: The model key (None: looked up for the profile when its agent calls a model).
        secrets: More values no run store may hold (guest tokens).
        agent_factory: Builds agents instead of the agent registry (the app's tests script them).
        hold_on_model_error: A failed model call waits for a person's retry instead of ending the run.
        evaluator: Who scores runs (``osw-studio`` or ``osworld``; default: ``evaluation.evaluator``).
        attended: Whether a person answers the agent's ``call_user`` (the app: yes; ``--approve``: by
            default, as approve mode; a suite: never).

    Raises:
        SettingsError: If the profile or the agent kind is unknown.
    """
    from osw_studio.agent.registry import agent_class

    resolved = settings.resolve_profile(profile)
    if agent:
        resolved = resolved.model_copy(update={"agent": agent})
    agent_class(resolved.agent)  # an unknown kind says so now
    if api_key is None and agent_factory is None and resolved.agent in MODEL_AGENTS:
        from osw_studio.settings.secrets import find_api_key

        api_key = find_api_key(resolved).value
    config = EpisodeConfig(
        max_steps=max_steps or settings.evaluation.max_steps,
        mode=mode,
        hold_on_model_error=hold_on_model_error,
        attended=attended,
        evaluator=evaluator or settings.evaluation.evaluator,
        reference_python=settings.evaluation.reference_python,
    )
    run_meta = {
        "provider": provider,
        "action_space": resolved.action_space,
        "observation_type": resolved.observation_type,
        "settings": settings.model_dump(mode="json"),
    }
    return RunRecipe(
        profile=resolved,
        config=config,
        run_meta=run_meta,
        secrets=tuple(s for s in (api_key, *secrets) if s),
        api_key=api_key,
        agent_factory=agent_factory,
    )


def plan_episode(
    entry: TaskEntry,
    recipe: RunRecipe,
    env: Env,
    *,
    runs_dir: Path | None,
    agent: Agent | None = None,
    mode: Mode | None = None,
    evaluate: EvaluateFunc | None = None,
    run_meta: dict[str, Any] | None = None,
) -> Episode:
    """A runnable episode of ``entry`` on ``env``; nothing runs until ``Episode.run``.

    Args:
        entry: The task, its file (whose folder goes to ``env.reset`` with the task) and its domain.
        recipe: What the settings say (see :func:`plan_recipe`).
        env: The env to act on (started; the episode resets it, the caller closes it).
        runs_dir: Where the run store goes (None: the steps stay in memory, as ``tasks check`` does).
        agent: The task's agent when the caller made it already (default: ``recipe.make_agent``).
        mode: Overrides the recipe's mode.
        evaluate: Scores the end state (default: OSWorld's evaluator).
        run_meta: More ``run.json`` fields (the slot's ``env`` label).

    Raises:
        OswError: If the agent or the run store cannot be made.
    """
    agent = agent if agent is not None else recipe.make_agent(entry)
    config = dataclasses.replace(
        recipe.config,
        mode=mode or recipe.config.mode,
        observe_accessibility=agent.wants_accessibility_tree,
    )
    store = None
    if runs_dir is not None:
        from osw_studio.runner.store import RunStoreWriter

        meta = {**recipe.run_meta, **(run_meta or {})}
        store = RunStoreWriter.create(
            runs_dir,
            entry.task,
            domain=entry.domain,
            model=agent.model_name or (recipe.profile.model if recipe.profile else None),
            agent=agent.kind,
            screen_size=env.screen_size,
            secrets=(*recipe.secrets, *agent.secrets),
            **meta,
            **agent.run_info(),
        )
    return Episode(
        entry.task,
        agent,
        env,
        config=config,
        store=store,
        evaluate=evaluate,
        domain=entry.domain,
        task_dir=entry.path.parent,
    )
