"""Code inside the local sandbox cannot stand in for its guest server.

The attacker is a task's command: it looks for the guest server's Unix socket in its view, unlinks it
and listens in its place, hoping the host's next request (with the bearer token) comes to it; and it
tries to reach into the server process itself (its descriptors, memory and environment).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from osw_studio.envs.local import LocalEnv, LocalProvider
from tests.security.test_relays import OTHER_PYTHON, as_other_user

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]

IMPOSTOR = r"""
import glob, os, socket, sys
found = [p for p in glob.glob("/tmp/**/*.sock", recursive=True) + glob.glob("/tmp/*.sock")
         if "port-" not in p]
with open("/tmp/impostor.log", "w") as log:
    log.write("found %r\n" % found)
    log.flush()
    servers = []
    for path in found:
        try:
            os.unlink(path)
            s = socket.socket(socket.AF_UNIX)
            s.bind(path)
            s.listen(8)
            servers.append(s)
            log.write("listening on %s\n" % path)
        except OSError as exc:
            log.write("failed %s: %s\n" % (path, exc))
        log.flush()
    for s in servers:
        s.settimeout(20)
        try:
            conn, _ = s.accept()
            conn.settimeout(5)
            log.write("GOT %r\n" % conn.recv(4096))
        except OSError as exc:
            log.write("no connection: %s\n" % exc)
        log.flush()
"""


@pytest.fixture
async def env() -> AsyncIterator[LocalEnv]:
    created = await LocalProvider(screen=(800, 600), sandbox=True, accessibility=False).create()
    try:
        yield created
    finally:
        await created.close()


async def _shell(env: LocalEnv, command: str) -> str:
    result = await env.guest.execute(["bash", "-c", command], shell=False)
    return result.output + result.error


async def test_a_task_cannot_replace_the_guest_servers_socket(env: LocalEnv, tmp_path: Path) -> None:
    script = env.session.tmp / "impostor.py"
    script.write_text(IMPOSTOR)
    await env.guest.launch(["python3", "/tmp/impostor.py"])
    log = env.session.tmp / "impostor.log"
    for _ in range(200):
        if log.exists() and "found" in log.read_text():
            break
        await env.guest.screen_size()  # the real server answers meanwhile
    # The host's new connections (the relay connects afresh each time) still reach the real server.
    headers = {"Authorization": f"Bearer {env.token}"}
    for _ in range(3):
        async with httpx.AsyncClient(timeout=10) as http:
            answer = await http.post(f"{env.url}/screen_size", headers=headers)
        assert answer.json() == {"width": 800, "height": 600}
    text = log.read_text()
    assert "GOT" not in text, text
    assert env.token not in text
    assert "listening on /tmp/guest.sock" not in text, text


async def test_a_task_cannot_reach_into_the_guest_server_process(env: LocalEnv) -> None:
    # The server's python, not bwrap (whose command line names it too).
    server = await _shell(
        env, 'for p in $(pgrep -f osw_studio.guest); do [ "$(cat /proc/$p/comm)" = bwrap ] || echo $p; done'
    )
    pid = server.split()[0] if server.split() else ""
    assert pid.isdigit(), server
    out = await _shell(
        env,
        f"readlink /proc/{pid}/fd/* 2>/dev/null | grep -q . && echo FD-LISTED; "
        f"grep -q . /proc/{pid}/maps 2>/dev/null && echo MAPS-READ; "
        f"tr '\\0' '\\n' < /proc/{pid}/environ 2>/dev/null | grep -c . ; true",
    )
    assert "FD-LISTED" not in out and "MAPS-READ" not in out, out
    assert env.token not in out


@pytest.mark.skipif(shutil.which("socat") is None, reason="socat forwards guest ports")
@pytest.mark.skipif(os.geteuid() != 0 or not Path(OTHER_PYTHON).exists(), reason="another user needs root")
async def test_a_forwarded_guest_port_serves_this_user_only(env: LocalEnv) -> None:
    """As the guest's Chromium DevTools port is forwarded: no token there, so the relay decides."""
    await env.guest.launch(["python3", "-m", "http.server", "--bind", "127.0.0.1", "9333"])
    url = await env.guest_port_url(9333)
    body = ""
    async with httpx.AsyncClient(timeout=5) as http:
        for _ in range(100):
            try:
                body = (await http.get(f"{url}/")).text
                break
            except httpx.HTTPError:
                await asyncio.sleep(0.1)
    assert "Directory listing" in body
    port = url.rsplit(":", 1)[1]
    probe = (
        "import urllib.request, sys\n"
        "try:\n    print(urllib.request.urlopen(sys.argv[1], timeout=5).read()[:40])\n"
        "except Exception as e:\n    print('refused', type(e).__name__)\n"
    )
    done = await asyncio.to_thread(as_other_user, probe, f"http://127.0.0.1:{port}/")
    assert done.stdout.startswith("refused"), done
