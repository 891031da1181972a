"""The real guest server on its own Xvfb display (the guest tests' session fixture), for the getters."""

from __future__ import annotations

from tests.guest.conftest import desktop

__all__ = ["desktop"]
