"""Deliberate deviations from OSWorld's metric functions, each with its reason.

Every entry is a differential case (by id) where OSWorld's own function raises instead of scoring;
OSW Studio gives a score there (0, with the reason in the verdict) or a clear error, so a task is
never left without an explanation. ``tests/parity/metric_check.check`` asserts for each entry that
OSWorld still raises, so the table cannot go stale. Nothing may be listed where OSWorld returns a
score: there we must agree.
"""

from __future__ import annotations

DEVIATIONS: dict[str, str] = {
    # check_direct_json_object
    "json_object-garbage": "a reply that is not JSON: OSWorld's json.loads raises; we score 0 and say so",
    "json_object-empty-string": "an empty reply: OSWorld's json.loads raises; we score 0 and say so",
    # check_accessibility_tree
    "a11y-exact-default": "a rule with text but no 'exact': OSWorld raises KeyError; we default to exact",
    # compare_table
    "table-taskd1acdb87-uncached": (
        "a formula cell saved without its result (<v></v>, as openpyxl saves it): OSWorld's cell reader "
        "raises TypeError on float(None); we read the cell as empty"
    ),
    "table-task8e116af7-uncached": (
        "a formula cell saved without its result (<v></v>): OSWorld raises TypeError; we read it as empty"
    ),
    "table-style-format-cf-between": (
        "a conditional format without a number format, compared on number_format: OSWorld raises "
        "AttributeError on the format's missing numFmt; we read the property as None"
    ),
    "table-style-font-cf-text": (
        "a conditional format without a font, compared on a font property: OSWorld raises "
        "AttributeError on the format's missing font; we read the property as None"
    ),
    # check_config_status
    "gimp-two-words-one-word-line": (
        "a two-word key and a gimprc line of one word (such as '(default-image'): OSWorld raises "
        "IndexError on that line; we skip it and read on"
    ),
}
"""Case id -> why we differ (always: OSWorld raises on this input)."""
