"""Differential tests against OSWorld's own code (the `desktop-env` package in .venv-ref)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.parity.reference import Reference, start_reference


@pytest.fixture(scope="session")
def reference() -> Iterator[Reference]:
    """One reference worker for the session."""
    worker = start_reference()
    yield worker
    worker.close()


@pytest.fixture(scope="session")
def metric_reference(reference: Reference) -> Reference:
    """The reference worker, with stand-ins for the heavy imports of OSWorld's metric modules.

    Only those the side environment lacks: a stand-in for an installed library (mutagen, PyPDF2) would
    break, for the rest of the session, the metrics of other files that call it.
    """
    from tests.parity.guest_env import stub_missing
    from tests.parity.metric_check import HEAVY

    stub_missing(reference, HEAVY)
    return reference


@pytest.fixture(scope="session")
def metric_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder per session for the generated files the differential cases share."""
    return tmp_path_factory.mktemp("metric-files")
