"""Differential cases for the metrics over strings, JSON, text files, sqlite and accessibility trees.

The rules are those the OSWorld tasks pass (read from their files) plus edge cases; each is scored on
a result that should pass and on near misses.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.parity.metric_check import Case, check, ids, made
from tests.parity.reference import Reference
from tests.parity.task_options import rules_of


def _text(name: str, text: str, encoding: str = "utf-8") -> Any:
    return made(f"general/{name}", lambda p: p.write_bytes(text.encode(encoding)))


def _string_cases() -> list[Case]:
    out: list[Case] = []
    for tid, rules, _ in rules_of("check_include_exclude"):
        include, exclude = rules.get("include", []), rules.get("exclude", [])
        passing = " ".join(include)
        out.append(Case(f"include_exclude-{tid}-pass", "check_include_exclude", (passing, rules)))
        if exclude:
            out.append(
                Case(f"include_exclude-{tid}-exclude", "check_include_exclude", (passing + exclude[0], rules))
            )
        out.append(Case(f"include_exclude-{tid}-empty", "check_include_exclude", ("", rules)))
    out.append(Case("include_exclude-none", "check_include_exclude", (None, {"include": ["a"]})))
    seen: set[str] = set()
    for tid, rules, _ in rules_of("exact_match"):
        key = json.dumps(rules, sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        want = rules["expected"]
        out.append(Case(f"exact_match-{tid}-pass", "exact_match", (want, rules)))
        out.append(Case(f"exact_match-{tid}-newline", "exact_match", (f"{want}\n", rules)))
        out.append(Case(f"exact_match-{tid}-none", "exact_match", (None, rules)))
    for tid, rules, _ in rules_of("match_in_list"):
        out.append(Case(f"match_in_list-{tid}-pass", "match_in_list", (rules["expected"][0], rules)))
        out.append(Case(f"match_in_list-{tid}-miss", "match_in_list", ("nothing like it", rules)))
    for tid, rules, _ in rules_of("is_in_list"):
        out.append(Case(f"is_in_list-{tid}-pass", "is_in_list", ([rules["expected"], "x"], rules)))
        out.append(Case(f"is_in_list-{tid}-text", "is_in_list", (f"a {rules['expected']} b", rules)))
        out.append(Case(f"is_in_list-{tid}-miss", "is_in_list", (["x"], rules)))
    for tid, rules, _ in rules_of("fuzzy_match"):
        want = rules["expected"]
        for i, got in enumerate([want, want.upper(), want[: len(want) // 2], "", want + " extra"]):
            out.append(Case(f"fuzzy_match-{tid}-{i}", "fuzzy_match", (got, rules)))
    for i, (got, want) in enumerate(
        [
            ("Los Angeles", "Los Angeles"),
            ("los angeles", "Los Angeles"),
            ("LA", "Los Angeles"),
            ("", "x"),
            ("", ""),
        ]
    ):
        out.append(Case(f"fuzzy_match-own-{i}", "fuzzy_match", (got, {"expected": want})))
    for tid, rules, _ in rules_of("is_extension_installed"):
        listing = f"ms-toolsai.jupyter\n{rules['expected']}\nredhat.java\n"
        out.append(Case(f"extension-{tid}-pass", "is_extension_installed", (listing, rules)))
        out.append(Case(f"extension-{tid}-miss", "is_extension_installed", ("redhat.java\n", rules)))
        negated = {**rules, "type": "not_contain"}
        out.append(Case(f"extension-{tid}-not", "is_extension_installed", (listing, negated)))
    lit = [
        ("str", "abc", "abc", {}),
        ("str-case", "ABC", "abc", {"ignore_case": True}),
        ("str-case-off", "ABC", "abc", {}),
        ("str-number", 12, "12", {}),
        ("list", ["a", "B"], ["a", "b"], {"type": "list", "ignore_case": True}),
        ("list-strict", ["a", "B"], ["a", "b"], {"type": "list"}),
        ("list-length", ["a"], ["a", "b"], {"type": "list", "ignore_case": True}),
        ("list-not-list", "a", ["a"], {"type": "list", "ignore_case": True}),
        ("list-numbers", [1, 2.5], ["1", "2.5"], {"type": "list", "ignore_case": True}),
    ]
    for name, got, want, options in lit:
        out.append(Case(f"literal_match-{name}", "literal_match", (got, want), options))
    return out


def _json_object_cases() -> list[Case]:
    out: list[Case] = []
    for tid, rules, _ in rules_of("check_direct_json_object"):
        want = rules["expected"]
        flat = {
            k: (v[0] if isinstance(v, list) and rules.get("expect_in_result") else v) for k, v in want.items()
        }
        out.append(Case(f"json_object-{tid}-pass", "check_direct_json_object", (flat, rules)))
        changed = dict(flat)
        first = next(iter(changed))
        changed[first] = "something else"
        out.append(Case(f"json_object-{tid}-changed", "check_direct_json_object", (changed, rules)))
        missing = {k: v for k, v in flat.items() if k != first}
        out.append(Case(f"json_object-{tid}-missing", "check_direct_json_object", (missing, rules)))
        out.append(Case(f"json_object-{tid}-string", "check_direct_json_object", (json.dumps(flat), rules)))
        out.append(Case(f"json_object-{tid}-none", "check_direct_json_object", (None, rules)))
    extra = [
        ("quotes", "{'a': 'b'}", {"expected": {"a": "b"}}),
        ("failed", {"a": 1}, {"expected": {"a": "__EVALUATION_FAILED__"}}),
        ("failed-other-key", {"a": 1, "b": 2}, {"expected": {"a": 1, "b": "__EVALUATION_FAILED__"}}),
        ("list-order", {"a": [2, 1]}, {"expected": {"a": [1, 2], "ignore_list_order": True}}),
        ("list-order-rules-level", {"a": [2, 1]}, {"expected": {"a": [1, 2]}, "ignore_list_order": True}),
        ("in-result-list", {"a": ["x", "y"]}, {"expected": {"a": ["y", "z"]}, "expect_in_result": True}),
        ("in-result-str", {"a": "hello world"}, {"expected": {"a": "world"}, "expect_in_result": True}),
        ("in-result-str-missing", {"b": "hello"}, {"expected": {"a": "world"}, "expect_in_result": True}),
        ("in-result-number", {"a": 1}, {"expected": {"a": 1}, "expect_in_result": True}),
        ("not-an-object", [1, 2], {"expected": {"a": 1}}),
        ("no-expected", {"a": 1}, {"expect_in_result": False}),
        ("empty-expected", {"a": 1}, {"expected": {}}),
        ("garbage", "not json {", {"expected": {"a": 1}}),
        ("empty-string", "", {"expected": {"a": 1}}),
    ]
    for name, got, rules in extra:
        out.append(Case(f"json_object-{name}", "check_direct_json_object", (got, rules)))
    urls = [
        ("plain", "https://www.example.org/a?q=1", [r"example\.org", "q=1"]),
        ("dict", {"url": "https://www.example.org/a?q=1", "title": "x"}, [r"example\.org"]),
        ("dict-miss", {"url": "https://www.example.org/"}, [r"q=\d"]),
        ("dict-no-url", {"title": "x"}, [r"example"]),
        ("list", ["https://www.example.org/"], [r"example"]),
        ("empty", "", [r"x"]),
        ("none", None, [r"x"]),
    ]
    for name, got, patterns in urls:
        out.append(
            Case(f"url_pattern-{name}", "is_expected_url_pattern_match", (got, {"expected": patterns}))
        )
    for tid, rules, _ in rules_of("is_expected_url_pattern_match"):
        out.append(
            Case(f"url_pattern-{tid}-miss", "is_expected_url_pattern_match", ("https://x.org/", rules))
        )
    return out


def _settings_json(name: str, data: Any) -> Any:
    return _text(f"{name}.json", json.dumps(data, indent=2))


def _file_cases() -> list[Case]:
    out: list[Case] = []
    for tid, rules, _ in rules_of("check_json_settings"):
        want = rules["expected"]
        out.append(
            Case(
                f"json_settings-{tid}-pass", "check_json_settings", (_settings_json(f"s-{tid}", want), rules)
            )
        )
        extra = {"editor.fontSize": 14, **want}
        out.append(
            Case(
                f"json_settings-{tid}-extra",
                "check_json_settings",
                (_settings_json(f"e-{tid}", extra), rules),
            )
        )
        changed = {k: "changed" for k in want}
        out.append(
            Case(
                f"json_settings-{tid}-changed",
                "check_json_settings",
                (_settings_json(f"c-{tid}", changed), rules),
            )
        )
    out.append(
        Case(
            "json_settings-invalid",
            "check_json_settings",
            (_text("bad.json", "{oops"), {"expected": {"a": 1}}),
        )
    )
    out.append(Case("json_settings-none", "check_json_settings", (None, {"expected": {"a": 1}})))

    for tid, rules, options in rules_of("check_json"):
        data: dict[str, Any] = {}
        for rule in rules.get("expect", []):
            node = data
            for key in rule["key"][:-1]:
                node = node.setdefault(key, {})
            node[rule["key"][-1]] = rule["ref"] if rule["method"] == "eq" else "smart"
        is_yaml = options.get("is_yaml", False)
        if is_yaml:
            import yaml

            good = _text(f"cj-{tid}.yaml", yaml.safe_dump(data))
        else:
            good = _text(f"cj-{tid}.json", json.dumps(data))
        out.append(Case(f"check_json-{tid}-pass", "check_json", (good, rules), options))
        out.append(
            Case(
                f"check_json-{tid}-empty", "check_json", (_text(f"cj-{tid}-empty.json", "{}"), rules), options
            )
        )
        out.append(
            Case(
                f"check_json-{tid}-invalid",
                "check_json",
                (_text(f"cj-{tid}-bad.txt", "{: ["), rules),
                options,
            )
        )
    doc = _settings_json("cj-doc", {"a": {"b": [1, 2]}, "c": "x", "n": None})
    json_rules = [
        ("unexpect-missing", {"unexpect": [{"key": ["zz"], "method": "eq", "ref": None}]}),
        ("unexpect-missing-ne", {"unexpect": [{"key": ["zz"], "method": "ne", "ref": 1}]}),
        ("unexpect-present", {"unexpect": [{"key": ["c"], "method": "eq", "ref": "x"}]}),
        ("unexpect-absent-value", {"unexpect": [{"key": ["c"], "method": "eq", "ref": "y"}]}),
        ("unexpect-re-missing", {"unexpect": [{"key": ["zz"], "method": "re", "ref": "x"}]}),
        ("expect-index", {"expect": [{"key": ["a", "b", 1], "method": "eq", "ref": 2}]}),
        ("expect-index-out", {"expect": [{"key": ["a", "b", 5], "method": "eq", "ref": 2}]}),
        ("expect-through-string", {"expect": [{"key": ["c", "d"], "method": "eq", "ref": 2}]}),
        ("expect-null", {"expect": [{"key": ["n"], "method": "eq", "ref": None}]}),
        ("expect-re-on-list", {"expect": [{"key": ["a", "b"], "method": "re", "ref": "1"}]}),
        (
            "expect-then-fail",
            {
                "expect": [
                    {"key": ["c"], "method": "eq", "ref": "no"},
                    {"key": ["zz"], "method": "eq", "ref": 1},
                ]
            },
        ),
    ]
    for name, rules in json_rules:
        out.append(Case(f"check_json-{name}", "check_json", (doc, rules)))
    out.append(
        Case(
            "check_json-yaml-empty",
            "check_json",
            (_text("empty.yaml", ""), {"expect": []}),
            {"is_yaml": True},
        )
    )
    out.append(
        Case(
            "check_json-yaml-bad",
            "check_json",
            (_text("bad.yaml", "a: [1,"), {"expect": []}),
            {"is_yaml": True},
        )
    )
    out.append(Case("check_json-none", "check_json", (None, {"expect": []})))

    text_a = "line one\nline two\n\tindented  words\n"
    text_b = "line one\nline  two\n indented words"
    text_c = "LINE ONE\nline two\n\tindented  words\n"
    files = {"a": _text("a.txt", text_a), "b": _text("b.txt", text_b), "c": _text("c.txt", text_c)}
    for x, y in [("a", "a"), ("a", "b"), ("a", "c"), ("b", "c")]:
        for opt_name, options in [
            ("plain", {}),
            ("blanks", {"ignore_blanks": True}),
            ("case", {"ignore_case": True}),
            ("both", {"ignore_blanks": True, "ignore_case": True}),
        ]:
            out.append(
                Case(f"compare_text-{x}{y}-{opt_name}", "compare_text_file", (files[x], files[y]), options)
            )
        out.append(Case(f"diff_text-{x}{y}", "diff_text_file", (files[x], files[y])))
    out.append(Case("compare_text-none", "compare_text_file", (None, files["a"])))
    out.append(Case("diff_text-none", "diff_text_file", (None, files["a"])))

    for tid, rules, options in rules_of("compare_config"):
        want = rules["expected"]
        out.append(Case(f"config-{tid}-pass", "compare_config", (_text(f"cfg-{tid}", want), rules), options))
        out.append(
            Case(
                f"config-{tid}-newline",
                "compare_config",
                (_text(f"cfg-{tid}-nl", want + "\n"), rules),
                options,
            )
        )
        wider = '{"editor.fontSize": 14, "workbench.colorTheme": "Visual Studio Dark"}\n'
        out.append(
            Case(f"config-{tid}-wider", "compare_config", (_text(f"cfg-{tid}-w", wider), rules), options)
        )
    out.append(Case("config-none", "compare_config", (None, {"expected": "x"})))
    nested = _text("cfg-nested", '{"a": {"b": [1, 2], "c": "x"}, "d": 3}')
    plain = _text("cfg-plain", "[section]\nkey = value\nother = 1\n")
    for name, path, expected in [
        ("nested-in", nested, '{"a": {"b": [1, 2]}}'),
        ("nested-list-differs", nested, '{"a": {"b": [1]}}'),
        ("nested-not-dict", nested, '{"d": {"e": 1}}'),
        ("equal-json", nested, '{"d": 3, "a": {"c": "x", "b": [1, 2]}}'),
        ("text-in", plain, "  key = value\n"),
        ("text-out", plain, "key = other"),
        ("empty-expected", plain, ""),
    ]:
        for opt_name, options in [("loose", {}), ("strict", {"containment_ok": False})]:
            out.append(
                Case(f"config-{name}-{opt_name}", "compare_config", (path, {"expected": expected}), options)
            )

    for tid, rules, _ in rules_of("file_contains"):
        full = _text(f"fc-{tid}", " ".join(rules["expected"]) + "\n")
        part = _text(f"fc-{tid}-part", rules["expected"][0])
        out.append(Case(f"file_contains-{tid}-pass", "file_contains", (full, rules)))
        out.append(Case(f"file_contains-{tid}-part", "file_contains", (part, rules)))
    out.append(Case("file_contains-none", "file_contains", (None, {"expected": ["a"]})))

    times = "\n".join(f"{h:02d}:{m:02d}:{s:02d} CPU all" for h, m, s in [(1, 2, 3)] * 31) + "\nAverage: all\n"
    for tid, rules, _ in rules_of("check_line_number"):
        out.append(Case(f"line_number-{tid}-pass", "check_line_number", (_text("sar31.txt", times), rules)))
        out.append(
            Case(
                f"line_number-{tid}-short", "check_line_number", (_text("sar3.txt", "00:00:01\n" * 3), rules)
            )
        )
    odd = _text("odd-times.txt", "24:00:00 x\n23:59:60 y\n9:00:00 z\nno time\n")
    for want in ("1", "2", "3"):
        out.append(Case(f"line_number-odd-{want}", "check_line_number", (odd, {"expected": want})))
    out.append(Case("line_number-none", "check_line_number", (None, {"expected": "1"})))

    listing = (
        "org.gnome.Nautilus.Org.gnome.Nautilus  OSWorld\nOrchis-theme\nopenjdk-17-jre\nAttachment added!\n"
    )
    for tid, rules, _ in rules_of("check_list"):
        out.append(Case(f"check_list-{tid}", "check_list", (_text("listing.txt", listing), rules)))
        out.append(Case(f"check_list-{tid}-empty", "check_list", (_text("empty.txt", ""), rules)))
    out.append(Case("check_list-none", "check_list", (None, {"expect": ["a"]})))
    return out


def _sqlite(path: Path, marked: int) -> None:
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, folderID INTEGER);"
        "CREATE TABLE messageAttributes (attributeID INTEGER, value INTEGER, messageID INTEGER);"
    )
    db.executemany("INSERT INTO messages VALUES (?, ?)", [(i, 13 if i < 4 else 2) for i in range(6)])
    db.executemany("INSERT INTO messageAttributes VALUES (58, 1, ?)", [(i,) for i in range(marked)])
    db.commit()
    db.close()


def _sqlite_cases() -> list[Case]:
    out = []
    for tid, rules, _ in rules_of("run_sqlite3"):
        for marked in (4, 2, 0):
            db = made(f"general/msgs-{marked}.sqlite", lambda p, m=marked: _sqlite(p, m))
            out.append(Case(f"sqlite-{tid}-{marked}", "run_sqlite3", (db, rules)))
    db = made("general/msgs-4.sqlite", lambda p: _sqlite(p, 4))
    for name, sql in [
        ("count", "SELECT COUNT(*) FROM messages"),
        ("null", "SELECT NULL"),
        ("ratio", "SELECT 0.5"),
        ("zero", "SELECT 0"),
    ]:
        out.append(Case(f"sqlite-{name}", "run_sqlite3", (db, {"sql": sql})))
    return out


TREE = """<desktop-frame xmlns:attr="https://accessibility.windows.example.org/ns/attributes"
 xmlns:st="https://accessibility.ubuntu.example.org/ns/state"
 xmlns:cp="https://accessibility.ubuntu.example.org/ns/component" name="main">
<application name="Thunderbird">
  <tool-bar attr:id="MsgHeadersToolbar">
    <label name="To">To</label>
    <section attr:class="address-pill">
      <label attr:class="pill-label" name="fox@someuniversity.edu">fox</label>
    </section>
  </tool-bar>
  <page-tab-list attr:id="tabmail-tabs">
    <page-tab name="About Profiles">About Profiles</page-tab>
  </page-tab-list>
  <entry name="anonym-x2024@outlook.com">anonym-x2024@outlook.com</entry>
  <label name="Password">Password</label>
  <push-button name="Done">Done</push-button>
</application>
</desktop-frame>"""


def _tree_cases() -> list[Case]:
    out = []
    empty_tree = TREE.replace("Thunderbird", "Firefox")
    for tid, rules, _ in rules_of("check_accessibility_tree"):
        out.append(Case(f"a11y-{tid}-tree", "check_accessibility_tree", (TREE, rules)))
        out.append(Case(f"a11y-{tid}-other-app", "check_accessibility_tree", (empty_tree, rules)))
    texts = [
        ("exact", [{"xpath": "//push-button", "text": "Done", "exact": True}]),
        ("exact-miss", [{"xpath": "//push-button", "text": "Don", "exact": True}]),
        ("exact-default", [{"xpath": "//push-button", "text": "Done"}]),
        ("fuzzy", [{"xpath": "//push-button", "text": "Don", "exact": False}]),
        ("fuzzy-no-text", [{"xpath": "//section", "text": "x", "exact": False}]),
        ("empty-text", [{"xpath": "//section", "text": "", "exact": True}]),
        ("selector-text", [{"selectors": ["label[name=Password]"], "text": "Password", "exact": True}]),
        (
            "two-rules",
            [
                {"xpath": "//push-button", "text": "Done", "exact": True},
                {"xpath": "//label", "text": "Passw", "exact": False},
            ],
        ),
        ("none", [{"xpath": "//no-such"}]),
    ]
    for name, rules in texts:
        out.append(Case(f"a11y-{name}", "check_accessibility_tree", (TREE, rules)))
    return out


def _app_cases() -> list[Case]:
    out = []
    gimprc = (
        '# GIMP gimprc\n\n(theme "Light")\n(undo-levels 100)\n(layer-new-name "Square")\n'
        "(hide-docks yes)\n(default-image\n    (width 1920))\n"
    )
    other = '(theme "Dark")\n(undo-levels 5)\n(hide-docks no)\n'
    for tid, rules, _ in rules_of("check_config_status"):
        out.append(Case(f"gimp-{tid}-pass", "check_config_status", (_text("gimprc", gimprc), rules)))
        out.append(Case(f"gimp-{tid}-miss", "check_config_status", (_text("gimprc-other", other), rules)))
    two = {"key": ["default-image", "(width"], "value": "1920))"}
    out.append(Case("gimp-two-words-one-word-line", "check_config_status", (_text("gimprc", gimprc), two)))
    flat = _text("gimprc-flat", '(theme "Light")\n(default-image (width 1920))\n')
    out.append(Case("gimp-two-words", "check_config_status", (flat, two)))
    out.append(Case("gimp-two-words-miss", "check_config_status", (flat, {**two, "value": "1080))"})))
    out.append(Case("gimp-none", "check_config_status", (None, {"key": "theme", "value": "x"})))
    prefs_pass = (
        'user_pref("mail.server.default.applyIncomingFilters", true);\n'
        'user_pref("mail.imap.use_status_for_biff", false);\n'
        'user_pref("extensions.activeThemeID", "thunderbird-compact-dark@mozilla.org");\n'
        'user_pref("mail.identity.id1.htmlSigText", "Anonym\\nXYZ Lab");\n'
        'user_pref("mail.identity.id1.auto_quote", false);\n'
    )
    prefs_late = (
        prefs_pass
        + 'user_pref("mail.imap.use_status_for_biff", true);\n'
        + 'user_pref("extensions.activeThemeID", "light");\n'
    )
    prefs_unexpect = prefs_pass + 'user_pref("mail.server.default.autosync_offline_stores", false);\n'
    for tid, rules, _ in rules_of("check_thunderbird_prefs"):
        out.append(
            Case(f"tb_prefs-{tid}-pass", "check_thunderbird_prefs", (_text("prefs.js", prefs_pass), rules))
        )
        out.append(
            Case(
                f"tb_prefs-{tid}-last-wins",
                "check_thunderbird_prefs",
                (_text("prefs-late.js", prefs_late), rules),
            )
        )
        out.append(
            Case(
                f"tb_prefs-{tid}-unexpect",
                "check_thunderbird_prefs",
                (_text("prefs-unexpect.js", prefs_unexpect), rules),
            )
        )
        out.append(
            Case(
                f"tb_prefs-{tid}-empty",
                "check_thunderbird_prefs",
                (_text("prefs-empty.js", "// nothing\n"), rules),
            )
        )
    out.append(Case("tb_prefs-none", "check_thunderbird_prefs", (None, {"expect": {}})))
    return out


CASES = [
    *_string_cases(),
    *_json_object_cases(),
    *_file_cases(),
    *_sqlite_cases(),
    *_tree_cases(),
    *_app_cases(),
]


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_general_metric_agrees(metric_reference: Reference, metric_files: Path, case: Case) -> None:
    check(metric_reference, case, metric_files)
