"""Differential scoring: one case scored by our metric and by OSWorld's, and the verdict on the pair.

A case names a metric, its arguments and options. Arguments may be :class:`File` placeholders: each
names a file made by a factory (``FACTORIES[name](path)``) on first use, in one folder per session,
so the files are real (written by openpyxl, python-docx, python-pptx, PyMuPDF, Pillow, sqlite3,
zipfile) and shared between the cases that use them.

Both sides get the same paths and values. Scores must agree within 1e-9, unless the case id is in
:data:`tests.parity.deviations.DEVIATIONS`, which says why; every deviation there is one where
OSWorld's function raises, and the check asserts that it still does and that ours gives a score.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from osw_studio.evaluation.registry import METRICS, Verdict
from tests.parity.deviations import DEVIATIONS, PACKAGE_DIFFERENCES
from tests.parity.reference import PACKAGE, Reference, ReferenceError, judge

REF_MODULES = {
    "general": (
        "check_include_exclude exact_match match_in_list is_in_list literal_match fuzzy_match "
        "check_direct_json_object check_json check_list file_contains diff_text_file run_sqlite3 "
        "check_accessibility_tree check_line_number"
    ),
    "vscode": "compare_text_file compare_config check_json_settings is_extension_installed",
    "chrome": "is_expected_url_pattern_match compare_pdfs compare_archive",
    "vlc": "compare_images",
    "table": "compare_table compare_csv",
    "slides": "compare_pptx_files",
    "docs": (
        "compare_docx_files compare_docx_tables compare_docx_images compare_line_spacing compare_font_names "
        "compare_subscript_contains has_page_numbers_in_footers is_first_line_centered "
        "check_highlighted_words"
    ),
    "gimp": "check_config_status",
    "thunderbird": "check_thunderbird_prefs",
}
"""OSWorld's module (under ``desktop_env.evaluators.metrics``) of each metric we implement."""

MODULE_OF = {
    name: f"desktop_env.evaluators.metrics.{mod}"
    for mod, names in REF_MODULES.items()
    for name in names.split()
}

HEAVY = (
    "easyocr",
    "cv2",
    "librosa",
    "acoustid",
    "fastdtw",
    "borb",
    "borb.pdf",
    "imagehash",
    "PyPDF2",
    "mutagen",
    "mutagen.easyid3",
)
"""Imports of the reference metric modules that the compared functions never call."""

TOLERANCE = 1e-9


@dataclass(frozen=True)
class File:
    """A placeholder for the file that ``FACTORIES[name]`` makes."""

    name: str


@dataclass
class Case:
    """One metric call: ``metric(*args, **options)``, as a task would make it."""

    id: str
    metric: str
    args: tuple[Any, ...]
    options: dict[str, Any] = field(default_factory=dict)


FACTORIES: dict[str, Callable[[Path], None]] = {}
"""File name -> the function that writes it (filled by the case modules)."""


def factory(name: str) -> Callable[[Callable[[Path], None]], Callable[[Path], None]]:
    """Register a file factory under ``name`` (decorator)."""

    def decorate(func: Callable[[Path], None]) -> Callable[[Path], None]:
        if name in FACTORIES:
            raise ValueError(f"file factory {name!r} registered twice")
        FACTORIES[name] = func
        return func

    return decorate


def made(name: str, func: Callable[[Path], None]) -> File:
    """Register ``func`` as the factory of ``name`` (if new) and return its placeholder."""
    FACTORIES.setdefault(name, func)
    return File(name)


def resolve(value: Any, folder: Path) -> Any:
    """``value`` with every :class:`File` replaced by the path of its (made once) file."""
    if isinstance(value, File):
        path = folder / value.name
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            FACTORIES[value.name](path)
        return str(path)
    if isinstance(value, list):
        return [resolve(v, folder) for v in value]
    if isinstance(value, tuple):
        return tuple(resolve(v, folder) for v in value)
    if isinstance(value, dict):
        return {k: resolve(v, folder) for k, v in value.items()}
    return value


def ours(metric: str, args: tuple[Any, ...], options: dict[str, Any]) -> float:
    """Our score (a Verdict's score, or the float)."""
    value = METRICS.get(metric)(*copy.deepcopy(args), **copy.deepcopy(options))
    return float(value.score if isinstance(value, Verdict) else value)


def theirs(reference: Reference, metric: str, args: tuple[Any, ...], options: dict[str, Any]) -> float:
    """OSWorld's score (raises :class:`ReferenceError` when its function raises)."""
    value = reference.call(MODULE_OF[metric], metric, *args, **options)
    return float(value)


def check(reference: Reference, case: Case, folder: Path) -> None:
    """Score ``case`` with both and fail on a difference that is not a documented deviation."""
    args = resolve(case.args, folder)
    options = resolve(case.options, folder)
    json.dumps([args, options])  # both sides must get exactly these plain values
    try:
        reference_score: float | None = theirs(reference, case.metric, args, options)
        reference_error = None
    except ReferenceError as exc:
        reference_score, reference_error = None, exc.error
    try:
        our_score: float | None = ours(case.metric, args, options)
        our_error = None
    except Exception as exc:  # evaluate() reports it as an EvaluationError naming the metric
        our_score, our_error = None, f"{type(exc).__name__}: {exc}"
    if judge() == PACKAGE and case.id in PACKAGE_DIFFERENCES:
        assert reference_error is not None or reference_score != our_score, (
            f"{case.id} is listed as scored differently by desktop-env 1.0.2, but it agrees ({our_score})"
        )
        return
    if case.id in DEVIATIONS:
        assert reference_error is not None, (
            f"{case.id} is listed as a deviation where OSWorld raises, but it scored {reference_score}"
        )
        assert our_score is not None or our_error is not None
        return
    assert reference_error is None, f"OSWorld raised on {case.id}: {reference_error} (ours: {our_score})"
    assert our_error is None, f"ours raised on {case.id}: {our_error} (OSWorld: {reference_score})"
    assert our_score is not None and reference_score is not None
    assert abs(our_score - reference_score) <= TOLERANCE, (
        f"{case.id}: ours {our_score} != OSWorld's {reference_score}"
    )


def ids(cases: Iterable[Case]) -> list[str]:
    """The case ids, checked to be unique."""
    out = [c.id for c in cases]
    duplicates = {i for i in out if out.count(i) > 1}
    assert not duplicates, f"duplicate case ids: {sorted(duplicates)}"
    return out
