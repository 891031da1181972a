"""A sustained slowloris (hundreds of reconnecting half-requests) does not starve the guest server.

The guest server is reached directly over TCP, as a remote guest is: each connection that has not
sent its headers yet waits in a bounded set, a new one pushes the oldest out, so real requests (whose
headers come at once) always find a slot.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.fakes.desktop import start_guest, start_xvfb, stop, wait_ready
from tests.security.test_relays import ATTACK

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def guest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    xvfb, display = start_xvfb((640, 480))
    started = [xvfb]
    try:
        home = tmp_path_factory.mktemp("guest")
        token = secrets.token_urlsafe(24)
        env = {**os.environ, "HOME": str(home), "LANG": "C.UTF-8", "OSW_GUEST_TOKEN": token}
        ready = home / "ready"
        process = start_guest(display, ready, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started.append(process)
        url, _ = wait_ready(process, ready)
        yield url, token
    finally:
        for process in reversed(started):
            stop(process)


def test_reconnecting_half_requests_do_not_starve_real_requests(
    guest: tuple[str, str], tmp_path: Path
) -> None:
    url, token = guest
    port = url.rsplit(":", 1)[1]
    attacker = subprocess.Popen(
        [sys.executable, "-I", "-c", ATTACK, port, "300", "8"], stdout=subprocess.PIPE, text=True
    )
    try:
        time.sleep(2.0)  # the attack holds what it can
        answers: list[str] = []
        with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=5) as http:
            for _ in range(19):
                try:
                    reply = http.get(f"{url}/platform", headers={"Connection": "close"})
                    answers.append(reply.text)
                except httpx.HTTPError as exc:
                    answers.append(type(exc).__name__)
    finally:
        out, _ = attacker.communicate(timeout=60)
    opened, answered = map(int, out.split())
    assert opened >= 300, out  # the attack went on the whole time
    assert answered == 0
    # Before: 0 of 19. Under heavy load a burst of new connections can still take the last slot from
    # one request for a moment (a 503, which clients retry): not starved.
    assert answers.count("Linux") >= 15, answers
