"""Differential tests: ``rule_relativeTime`` against OSWorld's getter, with both clocks stopped at the same
instant, over every relative date it knows, each weekday and the turns of the month and the year."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from osw_studio.evaluation.getters.relative_time import RELATIVE_NAMES, resolve
from tests.parity.guest_env import stub_missing
from tests.parity.reference import Reference, ReferenceError

FROZEN = """
import datetime as _dt
class _Frozen(_dt.datetime):
    @classmethod
    def now(cls, tz=None):
        return _dt.datetime.fromisoformat(NOW).astimezone(tz)
m0.datetime = _Frozen
m0.get_timezone_from_ip = lambda: "UTC"
try:
    result = m0.get_rule_relativeTime(None, {"rules": RULES})
finally:
    m0.datetime = _dt.datetime
"""

TEMPLATE = "{DoW}|{Month}|{DayD}|{Year}|{Month0D}|{month}|{MonthFull}|{Day0D}|{MonthD}"
SINGLE = [
    "tomorrow",
    "5th next month",
    "10th next month",
    "this month",
    "next Monday",
    "first monday four months later",
    "first monday eight months later",
]
RANGES = [
    ("next week Saturday", "next week Sunday"),
    ("next week Friday", "next week Sunday"),
    ("next Monday split", "next Friday split"),
    ("10th next month", "11th next month"),
    ("this Saturday", "this Sunday"),
    ("next Friday", "next Sunday"),
    ("next Saturday", "next Sunday"),
    ("next Monday", "next Friday"),
    ("tomorrow", "next Friday"),
    ("tomorrow", "tomorrow"),
    ("next Sunday", "next Sunday"),
    ("this Sunday", "this Saturday"),
]
# A week of days, the last days of a month and of the year, and a turn of the day in New York.
INSTANTS = [datetime(2024, 3, 4, 12, tzinfo=UTC) + timedelta(days=i) for i in range(7)] + [
    datetime(2024, 1, 31, 12, tzinfo=UTC),
    datetime(2024, 4, 30, 12, tzinfo=UTC),
    datetime(2024, 8, 15, 12, tzinfo=UTC),
    datetime(2024, 9, 30, 12, tzinfo=UTC),
    datetime(2024, 12, 31, 12, tzinfo=UTC),
    datetime(2025, 3, 1, 2, tzinfo=UTC),
]


@pytest.fixture(scope="module")
def ref(reference: Reference) -> Reference:
    stub_missing(reference)
    return reference


def rules_for(start: str, end: str | None, zone: str) -> dict[str, Any]:
    relative = {"from": start} if end is None else {"from": start, "to": end}
    expected: dict[str, Any] = {"city": "x"}
    if end is None:
        expected["time"] = TEMPLATE
    else:
        keys = ["puDay", "puMonth", "puYear"] if start == "next Monday split" else ["from"]
        keys += ["doDay", "doMonth", "doYear"] if end == "next Friday split" else ["to"]
        expected.update(dict.fromkeys(keys, TEMPLATE))
    return {"relativeTime": relative, "expected": expected, "timezone": zone}


def compare(ref: Reference, rules: dict[str, Any], now: datetime) -> None:
    try:
        ours: Any = resolve(rules, now.astimezone(ZoneInfo(rules["timezone"])))
    except Exception:
        ours = "raises"
    code = FROZEN.replace("NOW", repr(now.isoformat())).replace("RULES", repr(json.loads(json.dumps(rules))))
    try:
        theirs: Any = ref.exec(code, modules=("desktop_env.evaluators.getters.misc",))
    except ReferenceError:
        theirs = "raises"
    assert ours == theirs


@pytest.mark.parametrize("now", INSTANTS, ids=lambda d: d.strftime("%a-%Y-%m-%d"))
@pytest.mark.parametrize("zone", ["Europe/Zurich", "America/New_York"])
def test_single_dates(ref: Reference, now: datetime, zone: str) -> None:
    for name in SINGLE:
        compare(ref, rules_for(name, None, zone), now)


@pytest.mark.parametrize("now", INSTANTS, ids=lambda d: d.strftime("%a-%Y-%m-%d"))
@pytest.mark.parametrize(("start", "end"), RANGES)
def test_date_ranges(ref: Reference, now: datetime, start: str, end: str) -> None:
    compare(ref, rules_for(start, end, "America/New_York"), now)


def test_every_name_is_exercised() -> None:
    named = set(SINGLE) | {n for pair in RANGES for n in pair}
    assert named == set(RELATIVE_NAMES)


async def test_malformed_rules_are_a_clear_error(tmp_path: Path) -> None:
    from osw_studio.core.errors import EvaluationError
    from osw_studio.evaluation.registry import GETTERS, GetterContext

    ctx = GetterContext(guest=None, cache_dir=tmp_path)  # type: ignore[arg-type]  # the getter never asks the guest
    for rules in ({"relativeTime": {"from": "tomorrow"}, "expected": {}}, {"expected": {"time": "{Year}"}}):
        with pytest.raises(EvaluationError, match="rule_relativeTime"):
            await GETTERS.get("rule_relativeTime")(ctx, {"rules": rules})
    rules = {"relativeTime": {"from": "tomorrow"}, "expected": {"time": "{Year}"}, "timezone": "Nowhere/City"}
    assert (await GETTERS.get("rule_relativeTime")(ctx, {"rules": rules}))["expected"]["time"].isdigit()
