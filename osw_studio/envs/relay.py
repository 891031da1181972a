"""A TCP port on the host's 127.0.0.1 that forwards to a sandboxed guest server's Unix socket.

A sandboxed env has no network of its own that the host can reach (and must not reach the host's),
so its guest server listens on a Unix socket in the env's folder. The env's own client talks to that
socket directly; this relay gives everything that wants a URL (the viewer's frame stream, OSWorld's
host code, a person with ``curl``) the usual ``http://127.0.0.1:PORT``, still behind the token.

It runs on threads, not on the event loop, so a caller that blocks the loop (OSWorld's synchronous
code, a test) is still served.
"""

from __future__ import annotations

import asyncio
import contextlib
import selectors
import socket
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from osw_studio.core.errors import GuestError

if TYPE_CHECKING:
    from osw_studio.envs.guest_client import GuestClient

MAX_CONNECTIONS = 64
"""Connections relayed at once; more wait in the listen backlog."""

_CHUNK = 1 << 18


def _pump(client: socket.socket, upstream: socket.socket) -> None:
    """Copy both ways until both sides have finished sending, then close both."""
    pairs = {client: upstream, upstream: client}
    open_sides = 2
    with selectors.DefaultSelector() as selector, client, upstream:
        for sock in pairs:
            selector.register(sock, selectors.EVENT_READ)
        while open_sides:
            for key, _ in selector.select():
                source: socket.socket = key.fileobj  # type: ignore[assignment]
                try:
                    data = source.recv(_CHUNK)
                except OSError:
                    return
                if not data:
                    selector.unregister(source)
                    open_sides -= 1
                    with contextlib.suppress(OSError):
                        pairs[source].shutdown(socket.SHUT_WR)
                    continue
                try:
                    pairs[source].sendall(data)
                except OSError:
                    return


class Relay:
    """Forward connections to ``127.0.0.1:port`` (a free port) to the Unix socket ``target``.

    Args:
        target: The Unix socket to connect each connection to.
    """

    def __init__(self, target: Path) -> None:
        self.target = target
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(MAX_CONNECTIONS)
        self.port = int(self._listener.getsockname()[1])
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept, name=f"relay:{self.port}", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            self._slots.acquire()
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                upstream.connect(str(self.target))
            except OSError:
                upstream.close()
                client.close()
                return
            _pump(client, upstream)
        finally:
            self._slots.release()

    def close(self) -> None:
        """Stop accepting; connections in flight end when the guest server stops. Safe to call twice."""
        self._closed.set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()


async def forward_guest_port(
    guest: GuestClient, port: int, *, inside: str, outside: Path, connect: Path | None = None, where: str
) -> Relay:
    """Reach TCP ``port`` of a guest with a network of its own, through a folder both sides see.

    ``socat`` is started inside the guest (through its server, so in its network), listening on the
    Unix socket ``inside`` (mode 0600) and connecting to the port on the guest's loopback; the host sees
    that socket as ``outside`` and relays a free port of its 127.0.0.1 to it.

    Args:
        guest: The guest's server.
        port: The guest's TCP port (a browser's DevTools, VLC's HTTP interface).
        inside: The socket's path as the guest sees it.
        outside: The same socket's path on the host.
        connect: A shorter host path of it to connect to (sockets' paths are limited), if needed.
        where: The env's name, for errors.

    Raises:
        GuestError: If the socket does not appear (``socat`` missing in the guest).
    """
    await guest.launch(["socat", f"UNIX-LISTEN:{inside},fork,mode=600", f"TCP:127.0.0.1:{port}"])
    deadline = time.monotonic() + 5
    while not await asyncio.to_thread(outside.exists):
        if time.monotonic() > deadline:
            raise GuestError(
                f"cannot forward the guest's port {port}: socat did not start in the guest",
                where=where,
                hint="the guest needs socat (make setup-osworld; the osworld guest image has it)",
            )
        await asyncio.sleep(0.02)
    return Relay(connect or outside)
