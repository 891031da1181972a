"""An in-memory keyring backend for unit tests, and a fixture that installs it for one test."""

from __future__ import annotations

from collections.abc import Iterator

import keyring
import keyring.backend
import keyring.backends.fail
import keyring.errors
import pytest

__all__ = ["MemoryKeyring", "memory_keyring", "no_keyring"]


class MemoryKeyring(keyring.backend.KeyringBackend):
    """Keeps passwords in a dict; ``entries`` maps ``(service, user)`` to the password."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if (service, username) not in self.entries:
            raise keyring.errors.PasswordDeleteError("no such password")
        del self.entries[(service, username)]


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    """Use a fresh in-memory keyring for the duration of the test."""
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


@pytest.fixture
def no_keyring() -> Iterator[None]:
    """Make the keyring behave as on a machine with no backend at all."""
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())
    try:
        yield
    finally:
        keyring.set_keyring(previous)
