"""Agents: the OpenAI-compatible model client, prompt agents (osworld, uitars), replay and human agents.

Agents are registered by id (:data:`~osw_studio.agent.registry.AGENTS`) and built from a settings
profile with :func:`make_agent`.
"""

from osw_studio.agent.base import Agent, Prediction
from osw_studio.agent.registry import AGENTS, agent_class, make_agent, register_agent

__all__ = ["AGENTS", "Agent", "Prediction", "agent_class", "make_agent", "register_agent"]
