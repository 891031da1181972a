"""The guest server as an attacker meets it: a web page (DNS rebinding, cross-site requests), a local
process holding connections open or sending huge bodies, and a task or model asking for absurd numbers,
endless output, procfs files or bottomless folders. Also: the token never shows on a command line, in
the ready file to other users, or in the environment of the commands the guest runs.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from osw_studio.guest.files_api import MAX_TREE_DEPTH
from osw_studio.guest.processes import MAX_OUTPUT
from osw_studio.guest.serve import HEADER_TIMEOUT_S
from tests.fakes.desktop import start_guest, start_xvfb, stop, wait_ready

pytestmark = [pytest.mark.xvfb, pytest.mark.timeout(180)]


@dataclass
class Server:
    url: str
    port: int
    token: str | None
    process: subprocess.Popen[bytes]
    ready: Path
    home: Path

    def client(self, **headers: str) -> httpx.Client:
        auth = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        return httpx.Client(base_url=self.url, headers={**auth, **headers}, timeout=30)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Server]]:
    """One Xvfb; a guest server with a token (given the usual way, in the environment) and one without."""
    xvfb, display = start_xvfb((640, 480))
    started: list[subprocess.Popen[bytes]] = [xvfb]
    result: dict[str, Server] = {}
    try:
        for name, extra in (("token", ()), ("open", ("--no-token",))):
            home = tmp_path_factory.mktemp(f"guest-{name}")
            token = secrets.token_urlsafe(24) if name == "token" else None
            env = {**os.environ, "HOME": str(home), "LANG": "C.UTF-8"}
            env.pop("OSW_GUEST_TOKEN", None)
            if token:
                env["OSW_GUEST_TOKEN"] = token
            ready = home / "ready"
            process = start_guest(
                display, ready, *extra, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            started.append(process)
            url, _ = wait_ready(process, ready)
            result[name] = Server(url, int(url.rsplit(":", 1)[1]), token, process, ready, home)
        yield result
    finally:
        for process in reversed(started):
            stop(process)


def raw_request(port: int, data: bytes, wait: float = 10.0) -> bytes:
    """Send ``data`` on a fresh connection; what the server answers before closing or ``wait`` passes."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as sock:
        sock.sendall(data)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
                if b"\r\n\r\n" in answer:
                    break
        except TimeoutError:
            pass
    return answer


# --- a web page: DNS rebinding and cross-site requests -----------------------------------------------


@pytest.mark.parametrize("name", ["token", "open"])
def test_a_rebound_dns_name_is_refused_but_loopback_names_and_addresses_work(
    servers: dict[str, Server], name: str
) -> None:
    server = servers[name]
    canary = server.home / f"rebound-{name}"
    with server.client(Host=f"attacker.example:{server.port}") as client:
        refused = client.post("/execute", json={"command": ["touch", str(canary)]})
    assert refused.status_code == 421
    assert "attacker.example" in refused.json()["detail"]
    assert not canary.exists()
    for host in (f"127.0.0.1:{server.port}", f"localhost:{server.port}", "localhost"):
        with server.client(Host=host) as client:
            assert client.get("/platform").text == "Linux", host


def test_without_a_token_a_web_page_cannot_drive_the_desktop(servers: dict[str, Server]) -> None:
    server = servers["open"]
    canary = server.home / "cross-site"
    body = {"command": ["touch", str(canary)]}
    with server.client(Origin="http://evil.example") as client:
        refused = client.post("/execute", json=body)
    assert refused.status_code == 403
    assert not canary.exists()
    # A page can also send a form post (no preflight), or load the screen as an image.
    form = raw_request(
        server.port,
        b"POST /execute HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: null\r\nContent-Type: text/plain\r\n"
        b"Content-Length: 2\r\n\r\n{}",
    )
    assert form.startswith(b"HTTP/1.1 403")
    with server.client(**{"Sec-Fetch-Site": "cross-site"}) as client:
        assert client.get("/screenshot").status_code == 403
    # Host code sends no Origin; a page of the server itself (its /docs) sends its own.
    with server.client(Origin=server.url) as client:
        assert client.post("/execute", json=body).status_code == 200
    assert canary.exists()


# --- a local process: slow headers, many connections, huge bodies -----------------------------------


def test_connections_that_never_finish_their_headers_are_closed(servers: dict[str, Server]) -> None:
    server = servers["token"]
    slow = [socket.create_connection(("127.0.0.1", server.port), timeout=30) for _ in range(80)]
    try:
        for sock in slow:
            sock.sendall(b"GET /platform HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # headers never end
        with server.client() as client:  # others are still served meanwhile
            assert client.get("/platform").text == "Linux"
        deadline = time.monotonic() + HEADER_TIMEOUT_S + 10
        for sock in slow:
            sock.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                closed = sock.recv(1024) == b""
            except TimeoutError:
                closed = False
            except ConnectionResetError:
                closed = True
            assert closed, "the server still holds a connection whose headers never came"
    finally:
        for sock in slow:
            sock.close()


def test_a_huge_body_is_refused_before_it_is_read(servers: dict[str, Server]) -> None:
    server = servers["token"]
    head = (
        f"POST /execute HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {server.token}\r\n"
        "Content-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n"
    )
    answer = raw_request(server.port, head.encode(), wait=10)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]


def test_a_chunked_body_past_the_cap_is_refused(servers: dict[str, Server]) -> None:
    server = servers["token"]

    def body() -> Iterator[bytes]:
        chunk = b"x" * (1 << 20)
        for _ in range(80):  # 80 MiB, past the 64 MiB cap
            yield chunk

    with server.client() as client:
        response = client.post("/run_python", content=body(), headers={"content-type": "application/json"})
    assert response.status_code == 413


def test_command_output_is_capped(servers: dict[str, Server]) -> None:
    server = servers["token"]
    command = "head -c 40000000 /dev/zero | tr '\\0' a; head -c 40000000 /dev/zero | tr '\\0' b >&2"
    with server.client() as client:
        result = client.post("/execute", json={"command": command, "shell": True}).json()
        script = client.post("/run_bash_script", json={"script": command}).json()
    assert result["returncode"] == 0
    for text in (result["output"], result["error"], script["output"]):
        assert MAX_OUTPUT <= len(text) < MAX_OUTPUT + 200
        assert text.endswith("more bytes of output dropped]")


# --- a task or a model: absurd numbers, procfs, bottomless folders ------------------------------------

ABSURD = [math.nan, -1.0, 1e300, math.inf]


@pytest.mark.parametrize("value", ABSURD, ids=["nan", "negative", "1e300", "inf"])
@pytest.mark.parametrize(
    ("route", "body", "field"),
    [
        ("/execute", {"command": ["true"]}, "timeout"),
        ("/setup/execute", {"command": ["true"]}, "timeout"),
        ("/setup/execute_with_verification", {"command": ["true"], "verification": {}}, "max_wait_time"),
        ("/setup/execute_with_verification", {"command": ["true"]}, "check_interval"),
        ("/run_bash_script", {"script": "true"}, "timeout"),
        ("/setup/open_file", {"path": "/nonexistent"}, "timeout_seconds"),
    ],
)
def test_out_of_range_numbers_are_a_422_naming_the_field(
    servers: dict[str, Server], route: str, body: dict[str, Any], field: str, value: float
) -> None:
    with servers["token"].client() as client:
        response = client.post(
            route, content=json.dumps({**body, field: value}), headers={"content-type": "application/json"}
        )
    assert response.status_code == 422, response.text
    assert any(error["loc"][-1] == field for error in response.json()["detail"])


@pytest.mark.parametrize("value", ABSURD, ids=["nan", "negative", "1e300", "inf"])
def test_an_absurd_wait_action_is_a_422(servers: dict[str, Server], value: float) -> None:
    body = json.dumps({"actions": [{"type": "wait", "seconds": value}]})
    with servers["token"].client() as client:
        response = client.post("/input", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 422, response.text
    assert "seconds" in response.text


def test_procfs_files_are_served_and_endless_files_say_why(servers: dict[str, Server]) -> None:
    server = servers["token"]
    fifo = server.home / "fifo"
    os.mkfifo(fifo)
    with server.client() as client:
        status = client.post("/file", data={"file_path": f"/proc/{server.process.pid}/status"})
        fifo_answer = client.post("/file", data={"file_path": str(fifo)})
        zero = client.post("/file", data={"file_path": "/dev/zero"})
        folder = client.post("/file", data={"file_path": str(server.home)})
    assert status.status_code == 200 and b"Name:" in status.content
    for answer, word in ((fifo_answer, "FIFO"), (zero, "device"), (folder, "folder")):
        assert answer.status_code == 400 and word in answer.json()["error"]


def test_a_bottomless_folder_is_listed_without_crashing(servers: dict[str, Server]) -> None:
    server = servers["token"]
    top = server.home / "deep"
    path = str(top)
    os.mkdir(path)
    try:
        for _ in range(MAX_TREE_DEPTH + 900):  # deeper than Python's recursion limit
            path += "/d"
            os.mkdir(path)  # one by one: pathlib and os.makedirs recurse themselves
        (top / "d" / "loop").symlink_to(top)  # and a cycle through a symlink
        with server.client() as client:
            response = client.post("/list_directory", json={"path": str(top)})
    finally:
        # find, not shutil.rmtree (nor pytest's clean-up), which recurse as deep as the folders go
        subprocess.run(["find", str(top), "-delete"], check=True, timeout=60)
    assert response.status_code == 200, response.text[:300]
    tree = response.json()["directory_tree"]
    depth, node = 0, tree
    while node.get("children"):
        names = {child["name"]: child for child in node["children"]}
        if "loop" in names:
            assert names["loop"]["truncated"].startswith("a symlink back")
        node = names["d"]
        depth += 1
    assert depth == MAX_TREE_DEPTH + 1 and "deeper than" in node["truncated"]


# --- the token ---------------------------------------------------------------------------------------


def test_the_token_is_not_on_a_command_line_in_the_environment_of_commands_or_readable_by_others(
    servers: dict[str, Server],
) -> None:
    server = servers["token"]
    assert server.token
    with server.client() as client:
        env = client.post("/execute", json={"command": ["env"]}).json()["output"]
        python = client.post("/run_python", json={"code": "import os; print(dict(os.environ))"}).json()
        children = client.post("/execute", json={"command": "ps -eo args", "shell": True}).json()["output"]
    assert server.token not in env
    assert server.token not in python["output"]
    assert server.token not in children
    cmdline = Path(f"/proc/{server.process.pid}/cmdline").read_bytes()
    assert server.token.encode() not in cmdline
    # not even in the environment the server process started with, which its commands could read
    assert server.token.encode() not in Path(f"/proc/{server.process.pid}/environ").read_bytes()
    assert stat.S_IMODE(server.ready.stat().st_mode) == 0o600


def test_a_token_on_the_command_line_is_refused(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "osw_studio.guest", "--display", ":0", "--token", "visible-in-ps"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "command line" in result.stderr and "OSW_GUEST_TOKEN" in result.stderr
    assert "Traceback" not in result.stderr
