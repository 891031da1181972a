"""Which evaluator names are differential-tested against OSWorld's own code.

A name is listed here when ``tests/parity`` scores generated files and values with both our function
and OSWorld's (the ``desktop-env`` package in the reference side environment) and they agree, or
differ only as the documented deviations say. ``osw-studio eval coverage`` shows this per name, and
a test checks that every listed name has differential cases. One name a line, ``"<kind> <name>"`` as
:func:`osw_studio.evaluation.coverage.missing_names` spells them; add the line with the tests.

Examples:
    >>> is_differential_tested("metric", "compare_table")
    True
    >>> is_differential_tested("metric", "no_such_metric")
    False
"""

from __future__ import annotations

DIFFERENTIAL_TESTED: frozenset[str] = frozenset(
    {
        "metric check_accessibility_tree",
        "metric check_config_status",
        "metric check_direct_json_object",
        "metric check_include_exclude",
        "metric check_json",
        "metric check_json_settings",
        "metric check_line_number",
        "metric check_list",
        "metric check_thunderbird_prefs",
        "metric compare_archive",
        "metric compare_config",
        "metric compare_csv",
        "metric compare_docx_files",
        "metric compare_docx_images",
        "metric compare_docx_tables",
        "metric compare_font_names",
        "metric compare_images",
        "metric compare_line_spacing",
        "metric compare_pdfs",
        "metric compare_pptx_files",
        "metric compare_subscript_contains",
        "metric compare_table",
        "metric compare_text_file",
        "metric diff_text_file",
        "metric exact_match",
        "metric file_contains",
        "metric fuzzy_match",
        "metric has_page_numbers_in_footers",
        "metric is_expected_url_pattern_match",
        "metric is_extension_installed",
        "metric is_first_line_centered",
        "metric is_in_list",
        "metric literal_match",
        "metric match_in_list",
        "metric run_sqlite3",
        "getter cache_file",
        "getter cloud_file",
        "getter content_from_vm_file",
        "getter gimp_config_file",
        "getter list_directory",
        "getter rule",
        "getter vm_command_error",
        "getter vm_command_line",
        "getter vm_file",
        "getter vm_screen_size",
        "getter vm_terminal_output",
        "getter vlc_config",
    }
)
"""``"<kind> <name>"`` of every metric and getter with differential tests against the reference."""


def is_differential_tested(kind: str, name: str) -> bool:
    """Whether ``name`` of ``kind`` (``metric``, ``getter``) is in :data:`DIFFERENTIAL_TESTED`."""
    return f"{kind} {name}" in DIFFERENTIAL_TESTED
