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

_CONFIG = (
    "compare_config: upstream reads containment_ok (default true) and checks that the expected JSON is "
    "contained in the file's (or, for text that is not JSON, a substring); 1.0.2 compares the whole text"
)
_CONFIG_STRICT = (
    "compare_config with containment_ok false: upstream also accepts equal JSON; 1.0.2 only equal text"
)

_LEVEL = "compare_pptx_files: upstream takes paragraph levels 0 and 1 as the same indent; 1.0.2 compares them"
_RUNS = (
    "compare_pptx_files: upstream reads examine_run_count (false: run counts not compared) and counts only "
    "runs with text in two blank paragraphs; 1.0.2 always compares every run's count"
)
_BLANK_SHAPE = (
    "compare_pptx_files: upstream exempts shapes without text (pictures, empty boxes) from examine_shape's "
    "position/size check; 1.0.2 checks every shape"
)
_GROUP = (
    "compare_pptx_files: a text shape in a group whose alignment differs: 1.0.2 fails it on the bullets of "
    "the slide (level of a paragraph without a bullet); upstream compares levels only where a bullet shows"
)

PACKAGE_DIFFERENCES: dict[str, str] = {
    "config-510f64c8-newline": _CONFIG,
    "config-982d12a5-newline": _CONFIG,
    "config-982d12a5-wider": _CONFIG,
    "config-nested-in-loose": _CONFIG,
    "config-equal-json-loose": _CONFIG,
    "config-text-in-loose": _CONFIG,
    "config-equal-json-strict": _CONFIG_STRICT,
    **{
        f"pptx-level-{options}": _LEVEL
        for options in (
            "default",
            *(
                f"task{t}"
                for t in ["04578141", "0a211154", "7ae48c60", "af2d657a", "b8adbc24", "c82632a4", "eb303e01"]
            ),
        )
    },
    "pptx-runs-task04578141": _RUNS,
    "pptx-runs-taskb8adbc24": _RUNS,
    "pptx-blank-runs-vs-empty-default": _RUNS,
    "pptx-blank-runs-vs-empty-no-run-count": _RUNS,
    "pptx-shape-size-default": _BLANK_SHAPE,
    "pptx-shape-size-taskaf2d657a": _BLANK_SHAPE,
    "pptx-group-align-taskb8adbc24": _GROUP,
    "table-freeze-freeze-scrolled": (
        "compare_table freeze: upstream compares the frozen column/row counts (xSplit, ySplit); 1.0.2 "
        "compares openpyxl's freeze_panes, the top-left visible cell, which moves when the user scrolls"
    ),
}
"""Case id -> why desktop-env 1.0.2 scores it differently from OSWorld at the tasks' commit (ours follows
the latter). Checked only when the package judges (``OSW_REFERENCE_OSWORLD=package``)."""
