"""Shared test fixtures and paths."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OSWORLD = ROOT.parent / "shared" / "osworld" / "evaluation_examples"


@pytest.fixture(scope="session")
def osworld_dir() -> Path:
    """OSWorld's evaluation_examples folder, read in place beside the checkout."""
    if not (OSWORLD / "examples").is_dir():
        pytest.fail(f"OSWorld task data not found at {OSWORLD}; it must sit beside the checkout")
    return OSWORLD
