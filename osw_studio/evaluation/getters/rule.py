"""Getters whose value is written in the task itself: ``rule`` and ``rule_relativeTime``."""

from __future__ import annotations

from typing import Any

from osw_studio.evaluation.registry import GetterContext, getter


@getter("rule")
async def get_rule(ctx: GetterContext, spec: dict[str, Any]) -> Any:
    """The task's ``rules`` object, as written."""
    return spec["rules"]
