"""Shared test fixtures and paths."""

from __future__ import annotations

from pathlib import Path

import pytest

# A scriptable OpenAI-compatible server (`openai_server`) and keyring fakes (`memory_keyring`,
# `no_keyring`), for any test that needs a model endpoint or API keys; one real guest desktop
# (`desktop`) for the whole session, for tests that need a guest server on X.
from tests.fakes.desktop import desktop
from tests.fakes.memory_keyring import memory_keyring, no_keyring
from tests.fakes.openai_server import openai_server

__all__ = ["desktop", "memory_keyring", "no_keyring", "openai_server"]

ROOT = Path(__file__).resolve().parent.parent
OSWORLD = ROOT.parent / "shared" / "osworld" / "evaluation_examples"


@pytest.fixture(scope="session")
def osworld_dir() -> Path:
    """OSWorld's evaluation_examples folder, read in place beside the checkout."""
    if not (OSWORLD / "examples").is_dir():
        pytest.fail(f"OSWorld task data not found at {OSWORLD}; it must sit beside the checkout")
    return OSWORLD
