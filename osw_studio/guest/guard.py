"""What every request passes before any route: its ``Host``, its origin, and the size of its body.

- **Host** (DNS rebinding): a web page can point a name it controls at 127.0.0.1 and then talk to the
  guest server as its own origin. Such a request carries that name in ``Host``. Only IP literals
  (which no page can rebind), ``localhost`` names, the address the server was bound to and names
  given with ``--allow-host`` are served; any other ``Host`` gets 421.
- **Origin** (cross-site requests): a browser marks requests a page sends with ``Origin`` (and
  ``Sec-Fetch-Site``). Host code (OSWorld's controllers, our client, curl) sends neither. A request
  whose ``Origin`` is not this server itself, or that a browser marks ``cross-site``, gets 403, token
  or not: with ``--no-token`` nothing else would stop a page from driving the desktop.
- **Body size**: a body longer than the route's cap gets 413 before the route reads it (the declared
  ``Content-Length``, and the bytes actually received when there is none).

A plain ASGI middleware, like :mod:`osw_studio.guest.auth`.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from starlette.exceptions import HTTPException

Scope = dict[str, Any]
ASGIApp = Any

MAX_BODY = 64 << 20
"""The largest request body of any route but uploads (JSON commands, scripts, Python code): 64 MiB."""

MAX_UPLOAD = 4 << 30
"""The largest ``/setup/upload`` body: 4 GiB (task files and disk images are large)."""

_UPLOAD_PATHS = frozenset({"/setup/upload"})
_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})


def host_name(value: str) -> str:
    """The name part of a ``Host`` header value (no port, no IPv6 brackets, lower case).

    Examples:
        >>> host_name("Example.COM:5000"), host_name("[::1]:80"), host_name("127.0.0.1")
        ('example.com', '::1', '127.0.0.1')
    """
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    if value.count(":") > 1:  # a bare IPv6 address
        return value
    return value.partition(":")[0].rstrip(".")


def is_ip_literal(name: str) -> bool:
    """Whether ``name`` is an IPv4 or IPv6 address (which DNS rebinding cannot produce).

    Examples:
        >>> is_ip_literal("10.0.0.2"), is_ip_literal("::1"), is_ip_literal("evil.example")
        (True, True, False)
    """
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class HostPolicy:
    """Which ``Host`` names the server answers to.

    Args:
        bound: The address the server listens on (``--host``); served by name too.
        allowed: More names to serve (``--allow-host``), e.g. a VM's DNS name.

    Examples:
        >>> policy = HostPolicy("127.0.0.1", ["guest.lan"])
        >>> [policy.allows(h) for h in ("127.0.0.1:5000", "localhost", "app.localhost", "GUEST.lan:80")]
        [True, True, True, True]
        >>> policy.allows("attacker.example:5000"), policy.allows("")
        (False, False)
    """

    def __init__(self, bound: str, allowed: Iterable[str] = ()) -> None:
        self.names = {host_name(bound), *(host_name(name) for name in allowed)} - {""}

    def allows(self, value: str) -> bool:
        """Whether a request with ``Host: value`` is served."""
        name = host_name(value)
        if not name:
            return False
        return (
            is_ip_literal(name) or name in _LOCAL_NAMES or name.endswith(".localhost") or name in self.names
        )


def _header(scope: Scope, wanted: bytes) -> str | None:
    for name, value in scope.get("headers", []):
        if name == wanted:
            return str(value.decode("latin-1"))
    return None


def cross_site(scope: Scope) -> str | None:
    """Why a request looks like a web page's cross-site request, or None when it does not.

    Examples:
        >>> cross_site({"headers": [(b"host", b"127.0.0.1:5000"), (b"origin", b"http://127.0.0.1:5000")]})
        >>> cross_site({"headers": [(b"host", b"127.0.0.1:5000"), (b"origin", b"https://evil.example")]})
        "Origin 'https://evil.example' is not this server"
        >>> cross_site({"headers": [(b"sec-fetch-site", b"cross-site")]})
        'the browser marks it cross-site'
    """
    origin = _header(scope, b"origin")
    if origin is not None:
        host = (_header(scope, b"host") or "").strip().lower()
        parts = urlsplit(origin.strip().lower())
        if parts.scheme not in ("http", "https") or not host or parts.netloc != host:
            return f"Origin {origin[:100]!r} is not this server"
    if (_header(scope, b"sec-fetch-site") or "").strip().lower() == "cross-site":
        return "the browser marks it cross-site"
    return None


def body_cap(path: str) -> int:
    """The most bytes a request body to ``path`` may hold.

    Examples:
        >>> body_cap("/setup/upload") > body_cap("/execute")
        True
    """
    return MAX_UPLOAD if path in _UPLOAD_PATHS else MAX_BODY


async def _refuse(send: Any, status: int, message: str) -> None:
    body = json.dumps({"detail": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class RequestGuard:
    """Refuses foreign ``Host`` names (421), cross-site requests (403) and oversized bodies (413).

    Args:
        app: The ASGI app to guard.
        hosts: The ``Host`` names to serve.
    """

    def __init__(self, app: ASGIApp, hosts: HostPolicy) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        """Check an HTTP request, then pass it on with its body counted."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = _header(scope, b"host") or ""
        if not self.hosts.allows(host):
            message = (
                f"this guest server does not answer to the name {host_name(host)[:100]!r} "
                "(start it with --allow-host NAME to allow it)"
            )
            await _refuse(send, 421, message)
            return
        why = cross_site(scope)
        if why:
            await _refuse(send, 403, f"cross-site requests are refused: {why}")
            return
        cap = body_cap(scope.get("path", ""))
        declared = _header(scope, b"content-length")
        if declared is not None and declared.strip().isdigit() and int(declared) > cap:
            await _refuse(send, 413, f"the request body is larger than {cap} bytes")
            return
        received = 0
        started = False

        async def counted_receive() -> Any:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > cap:
                    # FastAPI passes an HTTPException raised while it reads the body on as the answer.
                    raise HTTPException(413, f"the request body is larger than {cap} bytes")
            return message

        async def tracked_send(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted_receive, tracked_send)
        except HTTPException as exc:
            if started or exc.status_code != 413:
                raise
            await _refuse(send, 413, str(exc.detail))
