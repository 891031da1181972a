"""Agents by id, with lazy entry points (``"osworld": "osw_studio.agent.osworld:OSWorldAgent"``).

The ids and entry points come from the spec table, :data:`osw_studio.core.agent_specs.SPECS`.

:func:`make_agent` builds the agent a settings profile names; the model agents get their key from the
keyring or the environment (:func:`osw_studio.settings.secrets.find_api_key`).

Examples:
    >>> {"osworld", "uitars", "dart", "claude", "replay"} <= set(AGENTS)
    True
    >>> agent_class("replay").__name__
    'ReplayAgent'
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from osw_studio.agent.base import Agent
from osw_studio.core.agent_specs import BY_ID, SPECS, AgentSpec
from osw_studio.core.errors import SettingsError
from osw_studio.core.task import Task
from osw_studio.settings.model import ResolvedProfile

AGENTS: dict[str, str] = {spec.id: spec.entry for spec in SPECS}
"""Agent ids and their ``module:Class`` entry points, from :data:`osw_studio.core.agent_specs.SPECS`."""


def register_agent(agent_id: str, entry_point: str) -> None:
    """Add (or replace) an agent kind at run time (a plugin); built-in agents are rows of ``SPECS``."""
    AGENTS[agent_id] = entry_point
    BY_ID.setdefault(agent_id, AgentSpec(id=agent_id, entry=entry_point, needs_model=True))


def agent_class(agent_id: str) -> type[Agent]:
    """The class registered under ``agent_id``, imported on first use.

    Raises:
        SettingsError: If no agent has that id.
    """
    try:
        entry = AGENTS[agent_id]
    except KeyError:
        raise SettingsError(
            f"unknown agent {agent_id!r}", hint=f"one of {', '.join(sorted(AGENTS))}"
        ) from None
    module, _, name = entry.partition(":")
    cls: type[Agent] = getattr(importlib.import_module(module), name)
    return cls


def make_agent(
    profile: ResolvedProfile,
    *,
    task: Task | None = None,
    run: str | os.PathLike[str] | None = None,
    api_key: str | None = None,
    **options: Any,
) -> Agent:
    """The agent ``profile.agent`` names, reset for ``task``.

    Args:
        profile: The resolved settings profile.
        task: The task it will act on (``replay`` plays its reference solution).
        run: For ``replay``: a recorded run to play instead of the task's solution.
        api_key: The model key (default: looked up for the profile).
        options: Passed to the agent class (``client=``: a ready
            :class:`~osw_studio.agent.model_client.ModelClient`).

    Raises:
        OswError: If the agent cannot be made (unknown kind, no solution to replay, unreadable run).
    """
    cls = agent_class(profile.agent)
    agent: Agent
    if profile.agent == "replay":
        from osw_studio.agent.replay import ReplayAgent

        if run is not None:
            agent = ReplayAgent.from_run(run)
        elif task is not None:
            agent = ReplayAgent.from_task(task)
        else:
            raise SettingsError("the replay agent needs a task with a solution or a recorded run")
    elif profile.agent == "human":
        agent = cls(**options)
    else:
        if api_key is None and "client" not in options:
            from osw_studio.settings.secrets import find_api_key

            api_key = find_api_key(profile).value
        agent = cls(profile, api_key=api_key, **options)  # type: ignore[call-arg]
    agent.reset(task)
    return agent
