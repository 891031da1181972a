"""Which evaluator names are differential-tested against OSWorld's own code.

A name is listed here when ``tests/parity`` scores generated files and values with both our function
and OSWorld's (its evaluators at the tasks' commit, run by the reference side environment) and they agree, or
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
        "getter accessibility_tree",
        "getter active_tab_html_parse",
        "getter active_tab_info",
        "getter active_tab_url_parse",
        "getter active_url_from_accessTree",
        "getter audio_in_slide",
        "getter background_image_in_slide",
        "getter bookmarks",
        "getter cache_file",
        "getter chrome_font_size",
        "getter cloud_file",
        "getter content_from_vm_file",
        "getter cookie_data",
        "getter data_delete_automacally",
        "getter default_search_engine",
        "getter default_video_player",
        "getter enable_do_not_track",
        "getter enable_safe_browsing",
        "getter find_installed_extension_name",
        "getter find_unpacked_extension_path",
        "getter gimp_config_file",
        "getter history",
        "getter info_from_website",
        "getter list_directory",
        "getter new_startup_page",
        "getter open_tabs_info",
        "getter page_info",
        "getter pdf_from_url",
        "getter profile_name",
        "getter rule",
        "getter rule_relativeTime",
        "getter shortcuts_on_desktop",
        "getter url_dashPart",
        "getter url_path_parse",
        "getter vlc_config",
        "getter vlc_playing_info",
        "getter vm_command_error",
        "getter vm_command_line",
        "getter vm_file",
        "getter vm_screen_size",
        "getter vm_terminal_output",
        "getter vm_wallpaper",
        "getter vm_window_size",
        "getter vscode_config",
        "metric check_accessibility_tree",
        "metric check_auto_saving_time",
        "metric check_brightness_decrease_and_structure_sim",
        "metric check_config_status",
        "metric check_contrast_increase_and_structure_sim",
        "metric check_csv",
        "metric check_direct_json_object",
        "metric check_file_exists_and_structure_sim",
        "metric check_font_size",
        "metric check_global_key_play_pause",
        "metric check_gnome_favorite_apps",
        "metric check_green_background",
        "metric check_history_deleted",
        "metric check_image_file_size",
        "metric check_image_mirror",
        "metric check_image_size",
        "metric check_image_stretch_and_center",
        "metric check_include_exclude",
        "metric check_italic_font_size_14",
        "metric check_json",
        "metric check_json_keybindings",
        "metric check_json_settings",
        "metric check_left_panel",
        "metric check_line_number",
        "metric check_list",
        "metric check_moved_jpgs",
        "metric check_mp3_meta",
        "metric check_one_instance_when_started_from_file",
        "metric check_page_number_colors",
        "metric check_palette_and_structure_sim",
        "metric check_pdf_pages",
        "metric check_presenter_console_disable",
        "metric check_python_file_by_test_suite",
        "metric check_qt_bgcone",
        "metric check_qt_max_volume",
        "metric check_qt_minimal_view",
        "metric check_qt_slider_colours",
        "metric check_saturation_increase_and_structure_sim",
        "metric check_slide_orientation_Portrait",
        "metric check_structure_sim",
        "metric check_structure_sim_resized",
        "metric check_structure_sim_with_threshold",
        "metric check_play_and_exit",
        "metric check_highlighted_words",
        "metric check_thunderbird_folder",
        "metric check_tabstops",
        "metric check_textbox_on_leftside",
        "metric check_thunderbird_filter",
        "metric check_thunderbird_prefs",
        "metric check_transition",
        "metric check_triangle_position",
        "metric compare_archive",
        "metric compare_conference_city_in_order",
        "metric compare_audios",
        "metric compare_config",
        "metric compare_csv",
        "metric compare_docx_files",
        "metric compare_docx_files_and_ignore_new_lines",
        "metric compare_docx_images",
        "metric compare_docx_tables",
        "metric compare_epub",
        "metric compare_font_names",
        "metric compare_htmls",
        "metric compare_image_text",
        "metric compare_image_list",
        "metric compare_images",
        "metric compare_line_spacing",
        "metric compare_pdf_images",
        "metric compare_pdfs",
        "metric compare_pptx_files",
        "metric compare_python_pure_text",
        "metric compare_references",
        "metric compare_result_files",
        "metric compare_subscript_contains",
        "metric compare_table",
        "metric compare_text_file",
        "metric compare_unique_train_records",
        "metric compare_videos",
        "metric compare_zip_files",
        "metric contains_page_break",
        "metric diff_text_file",
        "metric evaluate_colored_words_in_tables",
        "metric evaluate_presentation_fill_to_rgb_distance",
        "metric evaluate_strike_through_last_paragraph",
        "metric exact_match",
        "metric file_contains",
        "metric find_default_font",
        "metric fuzzy_match",
        "metric fuzzy_place_math",
        "metric has_page_numbers_in_footers",
        "metric is_added_to_steam_cart",
        "metric is_cookie_deleted",
        "metric is_expected_active_tab",
        "metric is_expected_active_tab_approximate",
        "metric is_expected_bookmarks",
        "metric is_expected_installed_extensions",
        "metric is_expected_search_query",
        "metric is_expected_tabs",
        "metric is_expected_url_pattern_match",
        "metric is_extension_installed",
        "metric is_first_line_centered",
        "metric is_in_list",
        "metric is_in_vm_clickboard",
        "metric is_shortcut_on_desktop",
        "metric is_utc_0",
        "metric is_vlc_fullscreen",
        "metric is_vlc_playing",
        "metric is_vlc_recordings_folder",
        "metric literal_match",
        "metric match_in_list",
        "metric run_sqlite3",
    }
)
"""``"<kind> <name>"`` of every metric and getter with differential tests against the reference."""


ENGINE_DIFFERENCES: dict[str, str] = {
    "metric compare_image_text": (
        "reads the picture with Tesseract (Debian's tesseract-ocr), not OSWorld's EasyOCR, whose model is "
        "downloaded at run time; the two engines can read ambiguous glyphs differently (ls as 1s or Is, "
        "O as 0) and small or faint text, so a picture one finds the text in the other may not"
    ),
}
"""Names whose result can differ from OSWorld's because a library OSWorld uses cannot be shipped."""


def engine_difference(kind: str, name: str) -> str:
    """How ``name`` of ``kind`` can score differently from OSWorld's own (empty when it cannot)."""
    return ENGINE_DIFFERENCES.get(f"{kind} {name}", "")


def is_differential_tested(kind: str, name: str) -> bool:
    """Whether ``name`` of ``kind`` (``metric``, ``getter``) is in :data:`DIFFERENTIAL_TESTED`."""
    return f"{kind} {name}" in DIFFERENTIAL_TESTED
