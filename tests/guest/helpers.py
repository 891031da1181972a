"""Helpers for the guest server tests: waiting, running commands in the guest (the ``desktop`` fixture)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from tests.fakes.desktop import Desktop

T = TypeVar("T")


def wait_for(get: Callable[[], T], ok: Callable[[T], bool], seconds: float = 20) -> T:
    deadline = time.monotonic() + seconds
    value = get()
    while not ok(value) and time.monotonic() < deadline:
        time.sleep(0.2)
        value = get()
    return value


def execute(desktop: Desktop, command: list[str] | str, shell: bool = False) -> dict[str, object]:
    response = desktop.client.post("/execute", json={"command": command, "shell": shell})
    assert response.status_code == 200, response.text
    result: dict[str, object] = response.json()
    return result
