"""Differential tests against OSWorld's own code (the `desktop-env` package in .venv-ref)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.parity.reference import Reference, start_reference


@pytest.fixture(scope="session")
def reference() -> Iterator[Reference]:
    """One reference worker for the session."""
    worker = start_reference()
    yield worker
    worker.close()
