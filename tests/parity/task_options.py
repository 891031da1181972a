"""The metric options and rules OSWorld's 369 tasks pass, read from their task files."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from tests.conftest import OSWORLD


@cache
def metric_uses() -> tuple[tuple[str, str, Any, Any, dict[str, Any]], ...]:
    """``(task id, func, result spec, expected spec, options)`` for every metric of every task."""
    out = []
    for path in sorted((OSWORLD / "examples").glob("*/*.json")):
        task = json.loads(Path(path).read_text(encoding="utf-8"))
        ev = task.get("evaluator", {})
        funcs = ev.get("func")
        if not funcs:
            continue
        many = isinstance(funcs, list)
        funcs = funcs if many else [funcs]

        def pick(key: str, i: int, ev: dict[str, Any] = ev, many: bool = many) -> Any:
            value = ev.get(key)
            return value[i] if many and isinstance(value, list) else value

        for i, func in enumerate(funcs):
            out.append((task["id"], func, pick("result", i), pick("expected", i), pick("options", i) or {}))
    return tuple(out)


def uses_of(func: str) -> Iterator[tuple[str, Any, Any, dict[str, Any]]]:
    """``(task id, result spec, expected spec, options)`` of every use of ``func``."""
    for task_id, name, result, expected, options in metric_uses():
        if name == func:
            yield task_id, result, expected, options


def rules_of(func: str) -> list[tuple[str, Any, dict[str, Any]]]:
    """``(short task id, expected rules, options)`` of every use of ``func`` with a ``rule`` getter."""
    out = []
    seen: set[str] = set()
    for task_id, _result, expected, options in uses_of(func):
        if isinstance(expected, dict) and expected.get("type") == "rule":
            key = json.dumps([expected.get("rules"), options], sort_keys=True)
            if key in seen:
                continue
            seen.add(key)
            short = task_id[:8]
            taken = {t for t, _, _ in out}
            n = 2
            while short in taken:
                short, n = f"{task_id[:8]}.{n}", n + 1
            out.append((short, expected.get("rules"), options))
    return out


def options_of(func: str) -> list[tuple[str, dict[str, Any]]]:
    """``(short task id, options)`` of every use of ``func``, without duplicate option sets."""
    seen: set[str] = set()
    out = []
    for task_id, _result, _expected, options in uses_of(func):
        key = json.dumps(options, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append((task_id[:8], options))
    return out
