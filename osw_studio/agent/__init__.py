"""Agents: the OpenAI-compatible model client, prompt agents (osworld, uitars), replay and human agents."""
