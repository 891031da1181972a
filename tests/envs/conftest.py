"""Fixtures for env tests: fake guests on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.envs.fake_guest import FakeGuest, osworld_guest


@pytest.fixture
def fake_guest() -> Iterator[FakeGuest]:
    guest = FakeGuest()
    yield guest
    if hasattr(guest, "server"):
        guest.stop()


@pytest.fixture
def osworld() -> Iterator[FakeGuest]:
    guest = osworld_guest()
    yield guest
    if hasattr(guest, "server"):
        guest.stop()
