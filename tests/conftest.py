"""Shared test fixtures and paths."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# A scriptable OpenAI-compatible server (`openai_server`) and keyring fakes (`memory_keyring`,
# `no_keyring`), for any test that needs a model endpoint or API keys; one real guest desktop
# (`desktop`) for the whole session, for tests that need a guest server on X.
from tests.fakes.desktop import desktop
from tests.fakes.memory_keyring import memory_keyring, no_keyring
from tests.fakes.openai_server import openai_server
from tests.fakes.responses_server import responses_server

__all__ = ["desktop", "memory_keyring", "no_keyring", "openai_server", "responses_server"]

# CI explores the same examples on every run, so a submission is judged on the code, not on a draw;
# local runs keep exploring new examples (and hypothesis replays any failure it found before).
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

ROOT = Path(__file__).resolve().parent.parent
OSWORLD = ROOT.parent / "shared" / "osworld" / "evaluation_examples"


@pytest.fixture(scope="session")
def osworld_dir() -> Path:
    """OSWorld's evaluation_examples folder, read in place beside the checkout."""
    if not (OSWORLD / "examples").is_dir():
        pytest.fail(f"OSWorld task data not found at {OSWORLD}; it must sit beside the checkout")
    return OSWORLD
