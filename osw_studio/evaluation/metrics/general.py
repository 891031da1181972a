"""General metrics: strings, lists, JSON objects, text files, regex lists, accessibility trees, URLs."""

from __future__ import annotations

import difflib
import json
import re
import sqlite3
from typing import Any

from rapidfuzz import fuzz

from osw_studio.core import untrusted_regex
from osw_studio.evaluation.registry import Verdict, metric
from osw_studio.evaluation.rules import match_value_to_rule
from osw_studio.guest.atspi_dump import NAMESPACES


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


@metric("check_include_exclude")
def check_include_exclude(result: str | None, rules: dict[str, list[str]]) -> float:
    """1 when every ``include`` string is in ``result`` and no ``exclude`` string is.

    >>> check_include_exclude("hello world", {"include": ["hello"], "exclude": ["bye"]})
    1.0
    >>> check_include_exclude("hello bye", {"include": ["hello"], "exclude": ["bye"]})
    0.0
    """
    if result is None:
        return 0.0
    include, exclude = rules.get("include", []), rules.get("exclude", [])
    return float(all(r in result for r in include) and all(r not in result for r in exclude))


@metric("exact_match")
def exact_match(result: Any, rules: dict[str, Any]) -> float:
    r"""1 when ``result == rules["expected"]``.

    >>> exact_match("true", {"expected": "true"}), exact_match("true\\n", {"expected": "true"})
    (1.0, 0.0)
    """
    return float(result == rules["expected"])


@metric("match_in_list")
def match_in_list(result: Any, rules: dict[str, Any]) -> float:
    """1 when ``result`` is one of ``rules["expected"]``."""
    return float(result in rules["expected"])


@metric("is_in_list")
def is_in_list(result: Any, rules: dict[str, Any]) -> float:
    """1 when ``rules["expected"]`` is an element (or substring) of ``result``."""
    return float(rules["expected"] in result)


@metric("literal_match")
def literal_match(result: Any, expected: Any, **options: Any) -> float:
    """Compare as strings (``type: str``) or element-wise as strings (``type: list``).

    >>> literal_match(["A", 1], ["a", "1"], type="list", ignore_case=True)
    1.0
    """
    kind = options.get("type", "str")
    fold = (lambda s: str(s).lower()) if options.get("ignore_case", False) else str
    if kind == "str":
        return float(fold(result) == fold(expected))
    if kind == "list":
        if not isinstance(result, list | tuple) or not isinstance(expected, list | tuple):
            return 0.0
        return float([fold(s) for s in result] == [fold(s) for s in expected])
    raise ValueError(f"literal_match type {kind!r} is not defined")


EVALUATION_FAILED = "__EVALUATION_FAILED__"
"""An expected value a getter writes when it could not compute the truth: the metric scores 0."""


@metric("check_direct_json_object")
def check_direct_json_object(result: Any, rules: dict[str, Any]) -> Verdict:
    """Compare a JSON object with ``rules["expected"]`` key by key.

    With ``expect_in_result``, a list expectation passes when any of its values is in (or equals) the
    result's value, and a string expectation when it is a substring of it. An expected value equal to
    ``__EVALUATION_FAILED__`` scores 0, and so does anything that cannot be compared (a result that is
    not an object, a missing key where a list or string is needed).

    >>> check_direct_json_object("{'a': 1}", {"expected": {"a": 1}}).score
    1.0
    >>> check_direct_json_object({"t": "2024-05-01 x"}, {"expected": {"t": "2024-05-01"},
    ...                                                  "expect_in_result": True}).score
    1.0
    >>> check_direct_json_object({"a": 1}, {"expected": {"a": "__EVALUATION_FAILED__"}}).score
    0.0
    """
    if isinstance(result, str):
        try:
            result = json.loads(result.strip().replace("'", '"'))
        except ValueError as exc:  # OSWorld raises here; a garbled answer cannot match
            return Verdict(0.0, f"the result is not JSON: {exc}")
    if result is None:
        return Verdict(0.0, "no result")
    try:
        expected = rules.get("expected", {})
        if expected and any(v == EVALUATION_FAILED for v in expected.values()):
            return Verdict(0.0, "the expected value could not be computed")
        return _compare_json_object(result, rules)
    except Exception as exc:  # as OSWorld: whatever cannot be compared does not match
        return Verdict(0.0, f"cannot compare: {type(exc).__name__}: {exc}")


def _compare_json_object(result: Any, rules: dict[str, Any]) -> Verdict:
    expected = rules["expected"]
    if not rules.get("expect_in_result", False):
        for key, want in expected.items():
            got = result.get(key)
            if expected.get("ignore_list_order", False):
                if sorted(want) != sorted(got):
                    return Verdict(0.0, f"{key!r}: {got!r} is not {want!r} in any order")
            elif want != got:
                return Verdict(0.0, f"{key!r}: {got!r} is not {want!r}")
        return Verdict(1.0, "every key matches")
    for key, want in expected.items():
        got = result.get(key)
        if isinstance(want, list):
            if not any(
                (isinstance(got, list) and w in got) or (isinstance(got, str) and w == got) for w in want
            ):
                return Verdict(0.0, f"{key!r}: none of {want!r} is in {got!r}")
        elif isinstance(want, str):
            if want not in got:
                return Verdict(0.0, f"{key!r}: {want!r} is not in {got!r}")
        else:
            return Verdict(0.0, f"{key!r}: an expectation of type {type(want).__name__} is not defined")
    return Verdict(1.0, "every expectation is in the result")


def _walk(data: Any, keys: list[Any]) -> tuple[bool, Any]:
    for key in keys:
        try:
            data = data[key]
        except (KeyError, TypeError):
            return False, None
    return True, data


@metric("check_json")
def check_json(result: str | None, rules: dict[str, Any], is_yaml: bool = False) -> Verdict:
    """Check values at key paths of a JSON (or YAML) file against ``expect``/``unexpect`` rules.

    A missing file, invalid JSON or YAML, an empty YAML document, a missing ``expect`` key or a rule
    that cannot be applied score 0; a missing ``unexpect`` key is matched as ``None``.
    """
    if result is None:
        return Verdict(0.0, "no result file")
    try:
        text = _read(result)
        if is_yaml:
            import yaml

            data = yaml.safe_load(text)
            if data is None:
                return Verdict(0.0, "the YAML file is empty")
        else:
            data = json.loads(text)
    except Exception as exc:  # an unreadable file scores 0, as in OSWorld
        return Verdict(0.0, f"cannot read {'YAML' if is_yaml else 'JSON'}: {type(exc).__name__}: {exc}")
    ok = True
    try:
        for rule in rules.get("expect", []):
            found, value = _walk(data, rule["key"])
            if not found:
                return Verdict(0.0, f"no key {rule['key']!r}")
            ok = ok and match_value_to_rule(value, rule)
        for rule in rules.get("unexpect", []):
            _, value = _walk(data, rule["key"])
            ok = ok and not match_value_to_rule(value, rule)
    except Exception as exc:  # as OSWorld: a rule that cannot be applied scores 0
        return Verdict(0.0, f"cannot apply a rule: {type(exc).__name__}: {exc}")
    return Verdict(float(ok), "every rule holds" if ok else "a rule does not hold")


@metric("check_list")
def check_list(result: str | None, rules: dict[str, list[str]]) -> float:
    """Every ``expect`` regex matches some line of the file; no ``unexpect`` regex matches any line."""
    if result is None:
        return 0.0
    expect = [str(p) for p in rules.get("expect", [])]
    unexpect = [str(p) for p in rules.get("unexpect", [])]
    for p in [*expect, *unexpect]:
        re.compile(p)  # a bad pattern is an error even when the file is empty (compiling cannot hang)
    with open(result, encoding="utf-8", errors="replace") as f:
        lines = list(f)
    where = "check_list"
    if any(any(untrusted_regex.search_each(p, lines, where=where)) for p in unexpect):
        return 0.0
    return float(all(any(untrusted_regex.search_each(p, lines, where=where)) for p in expect))


@metric("file_contains")
def file_contains(result: str | None, config: dict[str, Any]) -> float:
    """Every string of ``config["expected"]`` occurs in the file."""
    if not result:
        return 0.0
    try:
        text = _read(result)
    except OSError:
        return 0.0
    return float(all(s in text for s in config["expected"]))


@metric("diff_text_file")
def diff_text_file(result: str | None, expected: str) -> float:
    """The line-wise similarity ratio of two text files (difflib's ``SequenceMatcher``)."""
    if result is None:
        return 0.0
    a, b = _read(result).splitlines(), _read(expected).splitlines()
    return difflib.SequenceMatcher(a=a, b=b).ratio()


@metric("compare_text_file")
def compare_text_file(result: str | None, expected: str, **options: Any) -> float:
    """Two text files are equal (``ignore_blanks``: whitespace runs as one space; ``ignore_case``)."""
    if not result:
        return 0.0
    a, b = _read(result), _read(expected)
    if options.get("ignore_blanks", False):
        a = re.sub(r"\s+", " ", re.sub(r"[\t\n]", " ", a).strip())
        b = re.sub(r"\s+", " ", re.sub(r"[\t\n]", " ", b).strip())
    if options.get("ignore_case", False):
        a, b = a.lower(), b.lower()
    return float(a == b)


@metric("compare_config")
def compare_config(result: str | None, rules: dict[str, Any], **options: Any) -> float:
    """A config file holds ``rules["expected"]``.

    With ``containment_ok`` (the default) the expected JSON is contained in the file's JSON: each
    expected key present with a contained value (lists and scalars equal); text that is not JSON on
    either side is looked for as a substring instead. With ``containment_ok: false`` the file's text
    equals the expected text, or its JSON equals the expected JSON.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    ...     _ = f.write('{"a": {"b": 1, "c": 2}, "d": 3}')
    >>> compare_config(f.name, {"expected": '{"a": {"b": 1}}'})
    1.0
    >>> compare_config(f.name, {"expected": '{"a": {"b": 1}}'}, containment_ok=False)
    0.0
    """
    if not result:
        return 0.0
    expected = rules.get("expected")
    if not expected:
        return 0.0
    text = _read(result)
    if options.get("containment_ok", True):
        try:
            return float(_contains(json.loads(expected), json.loads(text)))
        except (TypeError, ValueError):
            return float(expected.strip() in text)
    if text == expected:
        return 1.0
    try:
        return float(json.loads(text) == json.loads(expected))
    except (TypeError, ValueError):
        return 0.0


def _contains(expected: Any, actual: Any) -> bool:
    """``actual`` holds ``expected``: dicts key by key (recursively), anything else equal."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and _contains(v, actual[k]) for k, v in expected.items()
        )
    return bool(expected == actual)


@metric("check_json_settings")
def check_json_settings(result: str | None, expected: dict[str, Any]) -> float:
    """A JSON settings file holds every key/value of ``expected["expected"]``."""
    if not result:
        return 0.0
    try:
        data = json.loads(_read(result))
    except (OSError, ValueError):
        return 0.0
    want = expected["expected"]
    return float(all(k in data and data[k] == v for k, v in want.items()))


@metric("fuzzy_match")
def fuzzy_match(result: str, rules: dict[str, Any]) -> float:
    """Rapidfuzz's ratio of ``result`` and ``rules["expected"]``, in [0, 1]."""
    return float(fuzz.ratio(result, rules["expected"])) / 100.0


@metric("run_sqlite3")
def run_sqlite3(result: str, rules: dict[str, Any]) -> float:
    """The first column of the first row of ``rules["sql"]`` run on the database file (0 if empty)."""
    connection = sqlite3.connect(result)
    try:
        row = connection.execute(rules["sql"]).fetchone()
    finally:
        connection.close()
    return float((row[0] if row else 0) or 0)


@metric("check_accessibility_tree")
def check_accessibility_tree(result: str, rules: list[dict[str, Any]]) -> Verdict:
    """Each rule selects elements (``xpath`` or CSS ``selectors``) and optionally checks their ``text``.

    A rule with no element scores 0; with ``exact: false`` the best fuzzy ratio counts; the scores of the
    rules are multiplied.
    """
    import lxml.etree
    from lxml.cssselect import CSSSelector

    tree = lxml.etree.fromstring(result.encode("utf-8"))
    total = 1.0
    for rule in rules:
        if "xpath" in rule:
            elements = tree.xpath(rule["xpath"], namespaces=NAMESPACES)
        elif "selectors" in rule:
            elements = CSSSelector(", ".join(rule["selectors"]), namespaces=NAMESPACES)(tree)
        else:
            raise ValueError("an accessibility rule needs xpath or selectors")
        if not elements:
            return Verdict(0.0, f"no element for {rule.get('xpath') or rule.get('selectors')}")
        if "text" in rule:
            # An element without text has None (an empty expected text does not match it).
            want = rule["text"]
            if rule.get("exact", True):
                best = max(float((e.text or None) == want) for e in elements)
            else:
                best = max(fuzz.ratio(want, e.text) / 100.0 if e.text else 0.0 for e in elements)
            total *= best
    return Verdict(total, "all rules matched" if total == 1.0 else f"match score {total:g}")


@metric("is_expected_url_pattern_match")
def is_expected_url_pattern_match(result: Any, rules: dict[str, Any]) -> float:
    r"""Every regex of ``rules["expected"]`` is found in the URL (``result`` or ``result["url"]``).

    >>> is_expected_url_pattern_match({"url": "https://x.org/a?q=1"}, {"expected": [r"x\.org", "q=1"]})
    1.0
    """
    if not result:
        return 0.0
    if isinstance(result, str):
        url = result
    elif isinstance(result, dict) and isinstance(result.get("url"), str):
        url = result["url"]
    else:  # a tab without a URL (or anything else) matches nothing
        return 0.0
    return float(
        all(untrusted_regex.search(p, url, where="the expected URL pattern") for p in rules["expected"])
    )


@metric("check_line_number")
def check_line_number(result: str | None, rules: dict[str, Any]) -> float:
    """The number of lines holding a ``HH:MM:SS`` time equals ``rules["expected"]``."""
    if not result:
        return 0.0
    pattern = re.compile(r"([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)")
    count = sum(1 for line in _read(result).splitlines() if pattern.search(line))
    return float(count == int(rules["expected"]))


@metric("is_extension_installed")
def is_extension_installed(result: str, rules: dict[str, Any]) -> float:
    """``contain``: ``rules["expected"]`` is in the listing; ``not_contain``: it is not."""
    if rules["type"] == "contain":
        return float(rules["expected"] in result)
    if rules["type"] == "not_contain":
        return float(rules["expected"] not in result)
    raise ValueError(f"is_extension_installed type {rules['type']!r} is not defined")
