"""Fixtures for the security tests: a fake user HOME outside /tmp with planted secrets."""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before Qt is imported (the run history and results views)


def _outside_tmp() -> Path:
    """A writable folder outside /tmp (the local sandbox hides /tmp, so a secret there proves less)."""
    for candidate in (Path("/var/tmp"), Path("/dev/shm"), Path.home()):
        if candidate.is_dir() and os.access(candidate, os.W_OK) and not candidate.is_relative_to("/tmp"):
            return candidate
    pytest.skip("no writable folder outside /tmp")


@dataclass
class Victim:
    """A user's HOME with secrets an attacker wants: an SSH key (read) and a login script (write)."""

    home: Path
    key: Path
    key_text: str
    bashrc: Path
    bashrc_text: str

    def untouched(self) -> bool:
        """Whether the login script is as planted and no file appeared beside it."""
        return self.bashrc.read_text() == self.bashrc_text


@pytest.fixture
def victim() -> Iterator[Victim]:
    home = Path(tempfile.mkdtemp(prefix="osw-victim-", dir=_outside_tmp()))
    key_text = f"-----BEGIN FAKE PRIVATE KEY----- {secrets.token_hex(16)}"
    (home / ".ssh").mkdir()
    key = home / ".ssh" / "id_rsa"
    key.write_text(key_text)
    bashrc = home / ".bashrc"
    bashrc.write_text("# the user's own login script\n")
    try:
        yield Victim(home, key, key_text, bashrc, bashrc.read_text())
    finally:
        shutil.rmtree(home, ignore_errors=True)
