"""What the host may fetch for a task: public addresses only, redirects followed one by one, bounded size.

A task's ``download`` URLs (and ``cloud_file`` paths) are untrusted: fetched by the host, their bytes
go into the guest, so a URL naming ``127.0.0.1``, the LAN or a cloud's metadata service (or any URL
that redirects there) would hand the guest what only this machine may see. :func:`open_public` follows
redirects itself and, before every request, resolves the host and refuses it when any of its
addresses is not a public one (loopback, link-local, private, shared, reserved, multicast,
unspecified; IPv4-mapped IPv6 addresses are judged as IPv4). The request is then sent to the
address that was checked (the name goes in ``Host`` and in TLS's server name), so a name that
resolves differently a moment later reaches nothing new. Host names the user lists
(``assets.allowed_hosts``: a mirror on the LAN) are exempt.

:func:`read_capped` reads a body to at most a cap (``assets.max_download_mb``) and checks it against
the declared ``Content-Length``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

from osw_studio.core.errors import OswError

MAX_REDIRECTS = 10
DEFAULT_MAX_BYTES = 2 << 30
"""The default cap of one download (2 GiB: OSWorld's largest files are a few hundred MB)."""


class FetchRefused(OswError):
    """A fetch the host does not make: a non-public address, too many redirects, a body past its cap."""


@dataclass(frozen=True)
class FetchPolicy:
    """Where the host may fetch from and how much.

    Attributes:
        allowed_hosts: Host names fetched whatever they resolve to (a mirror on this machine or the LAN).
        max_bytes: The most one download may be.
    """

    allowed_hosts: frozenset[str] = field(default_factory=frozenset)
    max_bytes: int = DEFAULT_MAX_BYTES

    @classmethod
    def of(cls, allowed_hosts: Iterable[str] = (), max_bytes: int | None = None) -> FetchPolicy:
        """A policy from settings values (names compared without case)."""
        hosts = frozenset(h.strip().lower().rstrip(".") for h in allowed_hosts if h.strip())
        return cls(hosts, max_bytes or DEFAULT_MAX_BYTES)

    def allows_name(self, host: str) -> bool:
        """Whether ``host`` is on the user's list."""
        return host.lower().rstrip(".") in self.allowed_hosts


def public_address(address: str) -> bool:
    """Whether the host may connect to ``address`` for a task.

    Examples:
        >>> [public_address(a) for a in ("93.184.216.34", "127.0.0.1", "10.1.2.3", "169.254.169.254")]
        [True, False, False, False]
        >>> [public_address(a) for a in ("::1", "::ffff:127.0.0.1", "fd00:ec2::254", "100.64.0.1", "0.0.0.0")]
        [False, False, False, False, False]
    """
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


async def _checked_address(host: str, port: int, where: str) -> str:
    """The address to connect to for ``host``; refused if any address it resolves to is not public."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise OswError(f"cannot resolve {host!r} ({exc.strerror or exc})", where=where) from None
    addresses = [str(info[4][0]) for info in infos]
    bad = [a for a in addresses if not public_address(a)]
    if bad or not addresses:
        what = host if bad == [host] else f"{host} (resolved to {bad[0] if bad else 'nothing'})"
        raise FetchRefused(
            f"refused: {what} is not a public address (a task may not make this machine fetch from "
            "itself, its network or a metadata service)",
            where=where,
            hint="to fetch from a mirror of your own, add its host name to assets.allowed_hosts in the "
            "settings",
        )
    return addresses[0]


def _pinned(url: str, address: str) -> str:
    parts = urlsplit(url)
    host = f"[{address}]" if ":" in address else address
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))


@asynccontextmanager
async def open_public(
    http: httpx.AsyncClient, url: str, policy: FetchPolicy, headers: dict[str, str] | None = None
) -> AsyncIterator[httpx.Response]:
    """A streamed GET of ``url``, following redirects under ``policy`` (see the module docs).

    ``http`` must not follow redirects itself.

    Raises:
        FetchRefused: A hop's host is not public (and not allowed by name), or too many redirects.
        OswError: The URL is not http(s) or a host does not resolve.
        httpx.HTTPError: The connection failed.
    """
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        parts = urlsplit(current)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise FetchRefused(f"refused: {current!r} is not an http(s) URL", where=url)
        host = parts.hostname
        sent = dict(headers or {})
        extensions: dict[str, str] = {}
        target = current
        if not policy.allows_name(host):
            port = parts.port or (443 if parts.scheme == "https" else 80)
            address = await _checked_address(host, port, current)
            target = _pinned(current, address)
            sent["Host"] = parts.netloc.rsplit("@", 1)[-1]
            if parts.scheme == "https":
                extensions["sni_hostname"] = host
        request = http.build_request("GET", target, headers=sent, extensions=extensions)
        response = await http.send(request, stream=True)
        if response.is_redirect and "location" in response.headers:
            await response.aclose()
            current = urljoin(current, response.headers["location"])
            continue
        try:
            yield response
        finally:
            await response.aclose()
        return
    raise FetchRefused(f"refused: more than {MAX_REDIRECTS} redirects", where=url)


async def read_capped(response: httpx.Response, cap: int, where: str) -> AsyncIterator[bytes]:
    """The body of ``response`` chunk by chunk, refused past ``cap`` bytes or past its declared length.

    Raises:
        FetchRefused: The declared length is over the cap, or the body goes past the cap or its length.
    """
    declared = response.headers.get("content-length")
    length = int(declared) if declared and declared.isdigit() else None
    encoded = response.headers.get("content-encoding", "identity").strip().lower() not in ("", "identity")
    if length is not None and length > cap:
        raise FetchRefused(
            f"refused: the file is {length} bytes, over the download cap of {cap} bytes",
            where=where,
            hint="raise assets.max_download_mb in the settings if the file is genuine",
        )
    size = 0
    async for chunk in response.aiter_bytes():  # decoded: a gzip bomb is counted as it unpacks
        size += len(chunk)
        if size > cap:
            raise FetchRefused(
                f"refused: the download went past the cap of {cap} bytes and was stopped",
                where=where,
                hint="raise assets.max_download_mb in the settings if the file is genuine",
            )
        if length is not None and not encoded and size > length:
            raise FetchRefused(f"the server sent more than the {length} bytes it declared", where=where)
        yield chunk
