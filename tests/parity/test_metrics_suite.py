"""The differential suite itself: big enough, covering every metric listed as differential-tested."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from osw_studio.evaluation.parity import DIFFERENTIAL_TESTED
from osw_studio.evaluation.registry import METRICS
from tests.parity import (
    test_metrics_docs,
    test_metrics_files,
    test_metrics_general,
    test_metrics_slides,
    test_metrics_table,
)
from tests.parity.deviations import DEVIATIONS
from tests.parity.metric_check import MODULE_OF, Case

ALL: list[Case] = [
    *test_metrics_general.CASES,
    *test_metrics_table.CASES,
    *test_metrics_docs.CASES,
    *test_metrics_slides.CASES,
    *test_metrics_files.CASES,
]


def test_at_least_400_differential_cases_with_unique_ids() -> None:
    ids = [c.id for c in ALL]
    assert len(ids) == len(set(ids))
    assert len(ALL) >= 400


def _coverage_test_sources() -> str:
    """The differential tests of the metrics and getters added for coverage (tests/parity/test_coverage_*)."""
    return "\n".join(p.read_text() for p in sorted(Path(__file__).parent.glob("test_coverage_*.py")))


def test_every_listed_metric_has_cases_and_a_reference_function() -> None:
    per_metric = Counter(c.metric for c in ALL)
    listed = {name.split(" ", 1)[1] for name in DIFFERENTIAL_TESTED if name.startswith("metric ")}
    coverage_tests = _coverage_test_sources()
    for name in listed:
        if per_metric[name] == 0:
            # Compared in a coverage test file, through its own helper (tests/parity/guest_env.py).
            assert f'"{name}"' in coverage_tests, f"{name}: no differential case anywhere"
            continue
        assert per_metric[name] >= 2, f"{name}: {per_metric[name]} differential cases"
        assert name in MODULE_OF, name


def test_every_listed_getter_is_compared_in_a_differential_test() -> None:
    sources = _coverage_test_sources() + "\n".join(
        p.read_text() for p in sorted(Path(__file__).parent.glob("test_*getters*.py"))
    )
    for entry in sorted(DIFFERENTIAL_TESTED):
        kind, name = entry.split(" ", 1)
        if kind == "getter":
            assert f'"{name}"' in sources or f"'{name}'" in sources, f"{name}: no differential test"


def test_every_metric_with_cases_is_listed_as_differential_tested() -> None:
    # A name is listed in osw_studio/evaluation/parity.py when it has cases here, and only then
    # (`eval coverage` shows the list; names added to the registry without cases show "no").
    tested = {name.split(" ", 1)[1] for name in DIFFERENTIAL_TESTED if name.startswith("metric ")}
    with_cases = {c.metric for c in ALL}
    assert with_cases - tested == set(), sorted(with_cases - tested)
    assert with_cases <= METRICS.names()


def test_every_deviation_names_a_case_and_gives_a_reason() -> None:
    ids = {c.id for c in ALL}
    for case_id, reason in DEVIATIONS.items():
        assert case_id in ids, case_id
        assert "OSWorld" in reason and len(reason) > 30, case_id
