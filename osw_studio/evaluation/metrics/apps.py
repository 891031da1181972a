"""Metrics over applications' own settings files: GIMP, Thunderbird."""

from __future__ import annotations

import json
import re
from typing import Any

from osw_studio.evaluation.registry import metric
from osw_studio.evaluation.rules import match_value_to_rule


@metric("check_config_status")
def check_config_status(result: str | None, rule: dict[str, Any]) -> float:
    """A GIMP config line ``(key ... value)`` has ``rule["key"]`` (one or two words) and ``rule["value"]``."""
    if not result:
        return 0.0
    key = rule["key"]
    with open(result, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or line == "\n":
                continue
            items = line.strip().lstrip("(").rstrip(")\n").split()
            if not items:
                continue
            if isinstance(key, str):
                if items[0] == key and items[-1] == rule["value"]:
                    return 1.0
            elif isinstance(key, list) and len(key) == 2:
                if (
                    len(items) > 1
                    and items[0] == key[0]
                    and items[1] == key[1]
                    and items[-1] == rule["value"]
                ):
                    return 1.0
            else:
                raise ValueError(f"check_config_status key {key!r} must be a string or two strings")
    return 0.0


_PREF = re.compile(r'^user_pref\("(?P<key>(?:[^"]|\\")+)\", (?P<val>.+)\);$')


@metric("check_thunderbird_prefs")
def check_thunderbird_prefs(result: str | None, rule: dict[str, Any]) -> float:
    r"""Thunderbird's ``prefs.js``: every ``expect`` key has a matching value; no ``unexpect`` key does.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".js", delete=False) as f:
    ...     _ = f.write('user_pref("mail.spam.manualMark", true);\n')
    >>> check_thunderbird_prefs(f.name, {"expect": {"mail.spam.manualMark": {"method": "eq", "ref": True}}})
    1.0
    >>> os.unlink(f.name)
    """
    if result is None:
        return 0.0
    expect: dict[str, Any] = rule.get("expect", {})
    unexpect: dict[str, Any] = rule.get("unexpect", {})
    found = dict.fromkeys(expect, False)
    clean = True
    with open(result, encoding="utf-8") as f:
        for line in f:
            m = _PREF.match(line.strip())
            if m is None:
                continue
            key, value = m.group("key"), json.loads(m.group("val"))
            if key in expect:
                # The last line that sets a key is the value Thunderbird uses.
                found[key] = match_value_to_rule(value, expect[key])
            elif key in unexpect:
                clean = clean and not match_value_to_rule(value, unexpect[key])
    return float(all(found.values()) and clean)
