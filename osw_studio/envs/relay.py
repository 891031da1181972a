"""A TCP port on the host's 127.0.0.1 that forwards to a sandboxed guest server's Unix socket.

A sandboxed env has no network of its own that the host can reach (and must not reach the host's),
so its guest server listens on a Unix socket in the env's folder. The env's own client talks to that
socket directly; this relay gives everything that wants a URL (the viewer's frame stream, OSWorld's
host code, a person with ``curl``) the usual ``http://127.0.0.1:PORT``, still behind the token.

It runs on threads, not on the event loop, so a caller that blocks the loop (OSWorld's synchronous
code, a test) is still served.

Every relay authenticates its client before anything reaches the guest: a TCP port on 127.0.0.1 is
open to every local user, so the relay looks the connecting socket up in the kernel's table
(``/proc/net/tcp``, as ``identd`` does) and serves only this user's processes (and root's); another
user's connection is closed at once, before it takes a slot or reaches the guest server, the
browser's DevTools or any other forwarded port. A connection that sends nothing for
:data:`SILENT_LIMIT` seconds after it opened is closed, and when every slot is taken a new
connection is refused at once instead of waiting, so silent or half-open connections cannot stall
the relay.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import selectors
import socket
import struct
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from osw_studio.core.errors import GuestError

if TYPE_CHECKING:
    from osw_studio.envs.guest_client import GuestClient

MAX_CONNECTIONS = 128
"""Connections relayed at once; more are refused (closed) until one ends."""

SILENT_LIMIT = 10.0
"""Seconds a new connection may stay silent before its first byte; then it is closed."""

_CHUNK = 1 << 18


def _hex_address(host: str, port: int) -> str:
    """An IPv4 address and port as ``/proc/net/tcp`` writes them.

    >>> _hex_address("127.0.0.1", 8080)
    '0100007F:1F90'
    """
    packed = socket.inet_aton(host)
    return f"{int.from_bytes(packed, 'little'):08X}:{port:04X}"


def peer_uid(conn: socket.socket) -> int | None:
    """The uid that owns the other end of ``conn``, a TCP connection on this machine's loopback.

    Returns:
        The uid, or ``None`` when the other end is not a socket of this machine's (this network
        namespace's) table.
    """
    try:
        peer_host, peer_port = conn.getpeername()[:2]
        own_host, own_port = conn.getsockname()[:2]
        theirs, ours = _hex_address(peer_host, peer_port), _hex_address(own_host, own_port)
        with open("/proc/net/tcp", encoding="ascii") as table:
            for line in table:
                fields = line.split()
                if len(fields) > 7 and fields[1] == theirs and fields[2] == ours:
                    return int(fields[7])
    except (OSError, ValueError):
        return None
    return None


def allowed_uids() -> frozenset[int]:
    """Whose processes a relay serves: this user's, and root's (who can read the env's folder anyway)."""
    return frozenset({os.getuid(), 0})


def _pump(client: socket.socket, upstream: socket.socket) -> None:
    """Copy both ways until both sides have finished sending, then close both.

    A client that sends nothing within :data:`SILENT_LIMIT` seconds is closed.
    """
    pairs = {client: upstream, upstream: client}
    open_sides = 2
    heard = False
    deadline = time.monotonic() + SILENT_LIMIT
    with selectors.DefaultSelector() as selector, client, upstream:
        for sock in pairs:
            selector.register(sock, selectors.EVENT_READ)
        while open_sides:
            events = selector.select(None if heard else max(0.0, deadline - time.monotonic()))
            if not events and not heard:
                return
            for key, _ in events:
                source: socket.socket = key.fileobj  # type: ignore[assignment]
                try:
                    data = source.recv(_CHUNK)
                except OSError:
                    return
                heard = heard or (source is client and bool(data))
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


def _reset(conn: socket.socket) -> None:
    """Close ``conn`` at once, without waiting for what it may still send."""
    with contextlib.suppress(OSError):
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


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
        self.refused = 0
        """Connections closed unserved (another user's, or past :data:`MAX_CONNECTIONS`)."""
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept, name=f"relay:{self.port}", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        allowed = allowed_uids()
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if peer_uid(client) not in allowed:
                self.refused += 1
                _reset(client)
                continue
            if not self._slots.acquire(blocking=False):
                self.refused += 1
                _reset(client)
                continue
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
