"""The ``rule_relativeTime`` getter: expected dates written relative to today ("tomorrow", "next Monday").

A task's ``rules`` hold ``relativeTime`` (``{"from": ...}`` or ``{"from": ..., "to": ...}``) and
``expected`` strings with placeholders (``{DoW}, {Month} {Day0D}, {Year}``); the getter answers the
rules with those placeholders filled in for the dates meant, as OSWorld's getter does. Today is taken
in the task's ``timezone`` (OSWorld's rule); without one, in the host's own time zone, where OSWorld
asks a web service for the host's location (we never do: nothing leaves the machine).
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from osw_studio.core.errors import EvaluationError
from osw_studio.evaluation.registry import GetterContext, getter

_DOW = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MONTHS_FULL = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip

RELATIVE_NAMES = frozenset(
    {
        "tomorrow", "5th next month", "10th next month", "11th next month", "this month", "this Saturday",
        "this Sunday", "next Monday", "next Friday", "next Saturday", "next Sunday", "next week Friday",
        "next week Saturday", "next week Sunday", "first monday four months later",
        "first monday eight months later", "next Monday split", "next Friday split",
    }
)  # fmt: skip
"""The relative dates tasks may name (OSWorld's list)."""


def format_date(template: str, day: datetime) -> str:
    """Fill the first of each placeholder in ``template`` with ``day``'s parts.

    ``{DoW}`` Mon, ``{Month}`` Jan, ``{MonthFull}`` January, ``{month}`` january, ``{DayD}`` 5,
    ``{Day0D}`` 05, ``{MonthD}`` 1, ``{Month0D}`` 01, ``{Year}`` 2024.

    >>> format_date("{DoW}, {Month} {Day0D}, {Year}", datetime(2024, 3, 5))
    'Tue, Mar 05, 2024'
    """
    for placeholder, value in (
        ("{DoW}", _DOW[day.weekday()]),
        ("{Month}", _MONTHS[day.month - 1]),
        ("{DayD}", str(day.day)),
        ("{Year}", str(day.year)),
        ("{Month0D}", f"{day.month:02d}"),
        ("{month}", _MONTHS_FULL[day.month - 1].lower()),
        ("{MonthFull}", _MONTHS_FULL[day.month - 1]),
        ("{Day0D}", f"{day.day:02d}"),
        ("{MonthD}", str(day.month)),
    ):
        template = template.replace(placeholder, value, 1)
    return template


def _day_of_next_month(now: datetime, day: int) -> datetime:
    year, month = (now.year + 1, 1) if now.month == 12 else (now.year, now.month + 1)
    return datetime(year, month, day, tzinfo=now.tzinfo)


def _first_monday(now: datetime, months_later: int, next_year_from: int) -> datetime:
    # OSWorld's arithmetic, kept as it is (a month that works out as 0 is an error there too).
    year = now.year + 1 if now.month >= next_year_from else now.year
    first = datetime(year, (now.month + months_later) % 12, 1, tzinfo=now.tzinfo)
    return first + timedelta(days=((6 - first.weekday()) + 1) % 7)


def _until(now: datetime, days: int) -> datetime:
    return now + timedelta(days=days)


def _single(name: str, now: datetime) -> datetime | None:
    wd = now.weekday()
    if name == "tomorrow":
        return _until(now, 1)
    if name in ("5th next month", "10th next month"):
        return _day_of_next_month(now, int(name.split("th")[0]))
    if name == "this month":
        return now
    if name == "next Monday":
        return _until(now, (6 - wd) + 1)
    if name == "first monday four months later":
        return _first_monday(now, 4, 9)
    if name == "first monday eight months later":
        return _first_monday(now, 8, 5)
    return None


def _start(name: str, now: datetime) -> datetime | None:
    wd = now.weekday()
    if name == "tomorrow":
        return _until(now, 1)
    if name == "this Saturday":
        return _until(now, 5 - wd)
    if name == "10th next month":
        return _day_of_next_month(now, 10)
    if name in ("next Monday", "next Monday split"):
        return _until(now, (6 - wd) + 1)
    if name == "next Friday":
        return _until(now, 4 - wd if wd < 4 else 7 if wd == 4 else (7 - wd) + 4)
    if name == "next Saturday":
        return _until(now, 5 - wd if wd < 5 else 7 if wd == 5 else 6)
    if name == "next week Friday":
        return _until(now, (7 - wd) + 4)
    if name == "next week Saturday":
        return _until(now, (7 - wd) + 5)
    if name == "next week Sunday":
        return _until(now, (7 - wd) + 6)
    return None


def _end(name: str, start_name: str, start: datetime | None, now: datetime) -> datetime | None:
    wd = now.weekday()
    if name == "tomorrow":
        return _until(now, 1)
    if name == "this Sunday":
        return _until(now, 6 - wd)
    if name == "11th next month":
        return _day_of_next_month(now, 11)
    if name in ("next Friday", "next Friday split"):
        if start_name in ("next Monday", "next Monday split") and start is not None:
            return start + timedelta(days=4)
        return _until(now, 4 - wd if wd < 4 else (6 - wd) + 5)
    if name == "next Sunday":
        if start_name in ("next Friday", "next Saturday") and start is not None:
            return start + timedelta(days=6 - start.weekday())
        return _until(now, 6 - wd if wd < 6 else 7)
    if name == "next week Sunday":
        if start_name in ("next week Friday", "next week Saturday") and start is not None:
            return start + timedelta(days=6 - start.weekday())
        return _until(now, (7 - wd) + 6)
    return None


def _fill(template: Any, day: datetime) -> Any:
    # A list of templates (one task gives one) is filled item by item; OSWorld's getter crashes on it.
    if isinstance(template, list):
        return [_fill(item, day) for item in template]
    return format_date(template, day)


def _require(day: datetime | None, name: str) -> datetime:
    if day is None:
        raise EvaluationError(
            f"rule_relativeTime cannot place {name!r} here",
            where="evaluator.expected.rules.relativeTime",
            hint=f"use one of: {', '.join(sorted(RELATIVE_NAMES))}",
        )
    return day


def resolve(rules: dict[str, Any], now: datetime) -> dict[str, Any]:
    """A copy of ``rules`` with the ``expected`` dates filled in for ``now`` (see the module docs).

    >>> rules = {"relativeTime": {"from": "tomorrow"}, "expected": {"time": "{Year}-{Month0D}-{DayD}"}}
    >>> resolve(rules, datetime(2024, 12, 31))["expected"]["time"]
    '2025-01-1'
    """
    rules = copy.deepcopy(rules)
    relative, expected = rules["relativeTime"], rules["expected"]
    for name in (relative.get("from"), relative.get("to")):
        if name is not None and name not in RELATIVE_NAMES:
            raise EvaluationError(
                f"unknown relative date {name!r}",
                where="evaluator.expected.rules.relativeTime",
                hint=f"use one of: {', '.join(sorted(RELATIVE_NAMES))}",
            )
    if "to" not in relative:
        day = _require(_single(relative["from"], now), relative["from"])
        expected["time"] = _fill(expected["time"], day)
        return rules
    start_name, end_name = relative["from"], relative["to"]
    start = _start(start_name, now)
    if start_name == "next Monday split":
        for key in ("puDay", "puMonth", "puYear"):
            expected[key] = _fill(expected[key], _require(start, start_name))
    else:
        expected["from"] = _fill(expected["from"], _require(start, start_name))
    end = _require(_end(end_name, start_name, start, now), end_name)
    if end_name == "next Friday split":
        for key in ("doDay", "doMonth", "doYear"):
            expected[key] = _fill(expected[key], end)
    else:
        expected["to"] = _fill(expected["to"], end)
    return rules


def task_timezone(rules: dict[str, Any]) -> tzinfo:
    """The task's ``timezone`` (UTC when it is unknown), else the host's own."""
    name = rules.get("timezone")
    if name is None:
        local = datetime.now().astimezone().tzinfo
        assert local is not None
        return local
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


@getter("rule_relativeTime")
async def get_rule_relative_time(ctx: GetterContext, spec: dict[str, Any]) -> dict[str, Any]:
    """The task's ``rules`` with the relative dates of ``expected`` filled in for today."""
    rules = spec["rules"]
    try:
        return resolve(rules, datetime.now(task_timezone(rules)))
    except (KeyError, TypeError, AttributeError, ValueError) as exc:  # OSWorld's getter crashes on these
        raise EvaluationError(
            f"rule_relativeTime cannot fill in the expected dates: {type(exc).__name__}: {exc}",
            where="evaluator.expected.rules",
            hint="the rules need relativeTime.from (and .to) and the expected strings they fill",
        ) from None
