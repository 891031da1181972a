"""The host's relays (the guest server's port, forwarded guest ports such as Chromium's DevTools) serve
only this user's processes, and silent or half-open connections cannot stall them.

Another local user is played by a child process running as ``nobody`` (the tests that need it run as
root, as CI does). The relay's upstream is a small HTTP server on a Unix socket that counts connections.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from osw_studio.envs import relay
from osw_studio.envs.relay import Relay

NOBODY = 65534
OTHER_PYTHON = "/usr/bin/python3"
"""The other user's interpreter: the system's (this venv's may sit where that user cannot read)."""
as_root = pytest.mark.skipif(
    os.geteuid() != 0 or not Path(OTHER_PYTHON).exists(), reason="playing another local user needs root"
)


class _UnixHTTPServer(ThreadingHTTPServer):
    address_family = socket.AF_UNIX
    daemon_threads = True

    def server_bind(self) -> None:
        self.socket.bind(self.server_address)

    def get_request(self) -> tuple[socket.socket, tuple[str, int]]:
        conn, _ = self.socket.accept()
        return conn, ("unix", 0)


class Upstream:
    """A guest-server stand-in on a Unix socket: answers ``ok`` and counts the connections it got."""

    def __init__(self, folder: Path) -> None:
        upstream = self
        self.path = folder / "up.sock"
        self.connections = 0
        self.requests = 0

        class Handler(BaseHTTPRequestHandler):
            def setup(self) -> None:
                upstream.connections += 1
                super().setup()

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                upstream.requests += 1
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        self.server = _UnixHTTPServer(str(self.path), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def upstream(tmp_path: Path) -> Iterator[Upstream]:
    server = Upstream(tmp_path)
    yield server
    server.close()


@pytest.fixture
def forward(upstream: Upstream) -> Iterator[Relay]:
    opened = Relay(upstream.path)
    yield opened
    opened.close()


ATTACK = r"""
import socket, sys, time
port, count, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
held, opened, answered = [], 0, 0
end = time.monotonic() + seconds
while time.monotonic() < end:
    while len(held) < count and time.monotonic() < end:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=1)
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # a request that never ends
            held.append(s)
            opened += 1
        except OSError:
            time.sleep(0.01)
    for s in list(held):  # reconnect whatever the relay closed
        s.setblocking(False)
        try:
            data = s.recv(1024)
            if data:
                answered += 1
                continue
        except BlockingIOError:
            continue
        except OSError:
            pass
        held.remove(s)
        s.close()
    time.sleep(0.02)
print(opened, answered)
"""


def as_other_user(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run Python ``code`` as ``nobody`` (another local user), with ``args``; what it printed."""
    return subprocess.run(
        [OTHER_PYTHON, "-I", "-c", code, *args],
        user=NOBODY,
        group=NOBODY,
        extra_groups=[],
        capture_output=True,
        text=True,
        timeout=30,
        cwd="/",
    )


def _attacker(port: int, count: int, seconds: float) -> subprocess.Popen[str]:
    """Another local user holding ``count`` silent half-requests open, reconnecting each one closed."""
    return subprocess.Popen(
        [OTHER_PYTHON, "-I", "-c", ATTACK, str(port), str(count), str(seconds)],
        user=NOBODY,
        group=NOBODY,
        extra_groups=[],
        stdout=subprocess.PIPE,
        text=True,
        cwd="/",
    )


@as_root
def test_another_local_user_is_refused_before_anything_reaches_the_guest(
    forward: Relay, upstream: Upstream
) -> None:
    probe = (
        "import socket, sys\n"
        "try:\n"
        "    s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5)\n"
        "    s.sendall(b'GET / HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n')\n"
        "    print(repr(s.recv(100)))\n"
        "except OSError as e:\n"
        "    print(type(e).__name__)\n"
    )
    done = as_other_user(probe, str(forward.port))
    assert done.stdout.strip() in ("b''", "ConnectionResetError", "BrokenPipeError"), done
    assert upstream.connections == 0
    # This user's own request is served.
    assert httpx.get(f"{forward.url}/", timeout=5).text == "ok"
    assert upstream.requests == 1


@as_root
def test_a_slowloris_of_another_user_does_not_starve_real_requests(
    forward: Relay, upstream: Upstream
) -> None:
    attacker = _attacker(forward.port, 300, 6.0)
    try:
        time.sleep(1.0)  # let it fill whatever it can
        served = 0
        with httpx.Client(timeout=15) as http:  # under load: starved would be never, not slow
            for _ in range(19):
                served += http.get(f"{forward.url}/", headers={"Connection": "close"}).text == "ok"
    finally:
        out, _ = attacker.communicate(timeout=30)
    opened, answered = map(int, out.split())
    assert served == 19, out
    assert opened >= 300, out  # it kept reconnecting: every connection was closed at once
    assert answered == 0
    assert upstream.connections == 19  # no attacker connection ever reached the guest


def test_silent_connections_of_this_user_do_not_stall_the_relay_and_are_closed(
    forward: Relay, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(relay, "SILENT_LIMIT", 1.0)
    silent = [socket.create_connection(("127.0.0.1", forward.port), timeout=5) for _ in range(64)]
    try:
        assert httpx.get(f"{forward.url}/", timeout=3).text == "ok"  # served beside 64 silent ones
        time.sleep(2.0)
        for sock in silent:  # each was closed by the relay: end of stream, or a reset
            with contextlib.suppress(ConnectionResetError):
                assert sock.recv(10) == b""
    finally:
        for sock in silent:
            sock.close()


def test_past_its_slots_the_relay_refuses_at_once_and_serves_again_later(
    upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(relay, "MAX_CONNECTIONS", 4)
    monkeypatch.setattr(relay, "SILENT_LIMIT", 1.0)
    forward = Relay(upstream.path)
    try:
        held = [socket.create_connection(("127.0.0.1", forward.port), timeout=5) for _ in range(4)]
        started = time.monotonic()
        with pytest.raises(httpx.TransportError):
            httpx.get(f"{forward.url}/", timeout=5)
        assert time.monotonic() - started < 2  # refused, not queued behind the silent ones
        time.sleep(1.5)  # the silent ones are closed
        assert httpx.get(f"{forward.url}/", timeout=3).text == "ok"
        for sock in held:
            sock.close()
    finally:
        forward.close()


def test_the_relay_knows_which_user_connected() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    with server, socket.create_connection(server.getsockname(), timeout=5):
        accepted, _ = server.accept()
        with accepted:
            assert relay.peer_uid(accepted) == os.getuid()
