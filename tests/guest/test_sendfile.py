"""Files sent by ``sendfile`` through uvicorn's h11 protocol as the guest server runs it."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.responses import FileResponse

from osw_studio.guest.sendfile import PATHSEND
from osw_studio.guest.serve import _bounded_protocol


@pytest.fixture(params=["httptools", "h11"])
def served(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[str, Path, list[dict[str, Any]]]]:
    """A server on 127.0.0.1 whose app sends ``tmp_path/data.bin`` declared as ``?declare=N`` bytes
    (each HTTP parser the guest server may run)."""
    data = tmp_path / "data.bin"
    seen: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        seen.append(dict(scope.get("extensions", {})))
        declared = scope["query_string"].decode().removeprefix("declare=")
        if not declared:
            await FileResponse(data, stat_result=data.stat())(scope, receive, send)
            return
        headers = [(b"content-length", declared.encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": PATHSEND, "path": str(data)})

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(app, http=_bounded_protocol(request.param), log_level="critical", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    while not server.started:
        threading.Event().wait(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}", data, seen
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def test_file_response_goes_by_pathsend_and_arrives_whole(served: Any) -> None:
    url, data, seen = served
    payload = os.urandom((2 << 20) + 17)
    data.write_bytes(payload)
    with httpx.Client(base_url=url) as client:
        for _ in range(2):  # twice on one kept-alive connection
            response = client.get("/")
            assert response.status_code == 200
            assert response.content == payload
    assert all(PATHSEND in extensions for extensions in seen)


def test_a_file_shorter_than_declared_ends_the_connection(served: Any) -> None:
    """A file that shrank after its length was declared cannot complete the answer: no silent short body."""
    url, data, _ = served
    data.write_bytes(b"x" * 1000)
    with httpx.Client(base_url=url) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            client.get("/", params={"declare": 5000})
        assert client.get("/", params={"declare": 1000}).content == b"x" * 1000  # a new connection serves


def test_a_client_leaving_mid_file_leaves_the_server_serving(served: Any) -> None:
    url, data, _ = served
    data.write_bytes(os.urandom(64 << 20))  # more than the socket buffers hold: the send is under way
    port = int(url.rsplit(":", 1)[1])
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert sock.recv(1 << 16).startswith(b"HTTP/1.1 200")
    data.write_bytes(b"after")
    assert httpx.get(url).content == b"after"
