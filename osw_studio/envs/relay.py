"""A TCP port on the host's 127.0.0.1 that forwards to a sandboxed guest server's Unix socket.

A sandboxed env has no network of its own that the host can reach (and must not reach the host's),
so its guest server listens on a Unix socket in the env's folder. The env's own client talks to that
socket directly; this relay gives everything that wants a URL (the viewer's frame stream, OSWorld's
host code, a person with ``curl``) the usual ``http://127.0.0.1:PORT``, still behind the token.

It runs on threads, not on the event loop, so a caller that blocks the loop (OSWorld's synchronous
code, a test) is still served.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
from pathlib import Path

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
