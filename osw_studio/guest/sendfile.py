"""ASGI's ``http.response.pathsend`` on uvicorn's protocols: a file's bytes go out by ``sendfile``.

uvicorn does not implement the extension, so a ``FileResponse`` would read the file into Python in
parts and write each part to the socket (copied three times on the way: read, framed by h11, buffered
by the transport). With the extension in the request's scope, Starlette's ``FileResponse`` sends
``{"type": "http.response.pathsend", "path": ...}`` instead, and :func:`enable_pathsend` answers it
with :meth:`asyncio.loop.sendfile`: the kernel copies the file to the socket (``os.sendfile``), and
the protocol's HTTP writer counts the bytes without holding them (h11's ``send_with_data_passthrough``).

The body is the ``Content-Length`` the response declared. A file that shrank since then cannot fill
it: the connection is closed, as when any response fails half-way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import h11

PATHSEND = "http.response.pathsend"


class _Sized:
    """Stands for ``size`` body bytes that go out by ``sendfile``: h11 counts them, nobody holds them."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __len__(self) -> int:
        return self.size


def _declared_length(headers: Any) -> int | None:
    """The ``Content-Length`` among ASGI response ``headers``, or None.

    Examples:
        >>> _declared_length([(b"content-type", b"x"), (b"Content-Length", b"12")])
        12
        >>> _declared_length([]) is None
        True
    """
    for name, value in headers or ():
        if name.lower() == b"content-length":
            return int(value)
    return None


def count_h11(cycle: Any, length: int) -> None:
    """Tell h11 that ``length`` body bytes go out past it (it checks them against the declared length)."""
    cycle.conn.send_with_data_passthrough(h11.Data(data=_Sized(length)))  # type: ignore[arg-type]


def count_httptools(cycle: Any, length: int) -> None:
    """Count ``length`` body bytes against the length uvicorn's httptools cycle expects."""
    if length > cycle.expected_content_length:
        raise RuntimeError("Response content longer than Content-Length")
    cycle.expected_content_length -= length


def enable_pathsend(cycle: Any, count: Callable[[Any, int], None]) -> None:
    """Offer ``http.response.pathsend`` to the app that answers uvicorn's request ``cycle``.

    Call it before the cycle's task runs (right after uvicorn's protocol created it): it adds the
    extension to the request's scope and wraps the cycle's ``send``. ``count`` tells the cycle's HTTP
    writer about the bytes sent past it (:func:`count_h11`, :func:`count_httptools`).
    """
    cycle.scope.setdefault("extensions", {})[PATHSEND] = {}
    plain_send = cycle.send
    declared: list[int | None] = [None]

    async def send(message: Any) -> None:
        if message["type"] == "http.response.start":
            declared[0] = _declared_length(message.get("headers"))
        if message["type"] != PATHSEND:
            await plain_send(message)
            return
        if cycle.disconnected:
            return
        if not cycle.response_started or cycle.response_complete:
            raise RuntimeError(f"{PATHSEND} sent outside a response body")
        length = declared[0]
        with open(message["path"], "rb") as file:  # noqa: ASYNC230 - a local file, opened once
            if length is None:  # no Content-Length: chunked framing, sent as ordinary body parts
                while part := file.read(1 << 20):
                    await plain_send({"type": "http.response.body", "body": part, "more_body": True})
            else:
                await _send_file(cycle, file, length, count)
        await plain_send({"type": "http.response.body", "body": b"", "more_body": False})

    cycle.send = send


async def _send_file(cycle: Any, file: Any, length: int, count: Callable[[Any, int], None]) -> None:
    """Send ``length`` bytes of ``file`` as the body, by ``sendfile``.

    Raises:
        OSError: If the file holds fewer bytes than declared (the connection is then closed).
    """
    if cycle.flow.write_paused:
        await cycle.flow.drain()
    count(cycle, length)
    try:
        sent = await asyncio.get_running_loop().sendfile(cycle.transport, file, 0, length)
    except ConnectionError:  # the client went away: nothing more to send
        cycle.transport.close()
        return
    except RuntimeError:
        if cycle.disconnected or cycle.transport.is_closing():
            return  # closed under us (the client went away, the server stops)
        raise
    if sent != length:
        raise OSError(f"{file.name} holds {sent} bytes, fewer than the {length} its response declared")
