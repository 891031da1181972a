"""Differential tests against OSWorld's own code (the `desktop-env` package in .venv-ref)."""

from __future__ import annotations

import os
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


UPSTREAM = Path(__file__).resolve().parents[2].parent / "shared" / "osworld" / "upstream"
"""OSWorld's code at the tasks' commit: the agents newer than desktop-env 1.0.2 (DART-GUI's, ...)."""


@pytest.fixture(scope="session")
def upstream() -> Iterator[Reference]:
    """A reference worker whose ``mm_agents`` is OSWorld's at the tasks' commit (not desktop-env 1.0.2)."""
    if not (UPSTREAM / "mm_agents").is_dir():
        pytest.skip(f"OSWorld's code is not at {UPSTREAM}")
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(UPSTREAM)  # before the side environment's own mm_agents
    try:
        worker = start_reference()
    finally:
        if saved is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = saved
    from tests.parity.episodes import STUBS

    worker.stub(*STUBS)
    yield worker
    worker.close()
