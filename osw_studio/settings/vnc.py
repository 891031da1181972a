"""The ``environment.vnc`` setting: where a guest's VNC server listens, as ``HOST:PORT`` or ``PORT``.

A port alone means the guest's own host (the host of its server URL), which is the usual case: an
OSWorld VM that serves its API on port 5000 and VNC on 5900. The password is not kept here but in the
keyring (``osw-studio keys set --vnc HOST:PORT``), see :mod:`osw_studio.settings.secrets`.

Examples:
    >>> parse_vnc_address("5901")
    (None, 5901)
    >>> parse_vnc_address(" vnc://10.0.0.5:5900 "), parse_vnc_address("[::1]:5900"), parse_vnc_address("vm")
    (('10.0.0.5', 5900), ('::1', 5900), ('vm', 5900))
    >>> vnc_address("5901", "http://10.0.0.5:5000")
    ('10.0.0.5', 5901)
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

DEFAULT_PORT = 5900
"""VNC's port for display :0, used when only a host is given."""

_ADDRESS = re.compile(r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<host>[^\s:/\[\]]+))(?::(?P<port>\d+))?")


def parse_vnc_address(text: str) -> tuple[str | None, int]:
    """``HOST:PORT``, ``[IPv6]:PORT``, ``HOST`` (port 5900) or ``PORT`` -> (host or None, port).

    >>> parse_vnc_address("host:0")
    Traceback (most recent call last):
    ValueError: 'host:0': the port must be 1 to 65535

    Raises:
        ValueError: Saying what is wrong with ``text``.
    """
    value = text.strip().removeprefix("vnc://").rstrip("/")
    if value.isdigit():
        host, port = None, int(value)
    else:
        match = _ADDRESS.fullmatch(value)
        if not match:
            raise ValueError(f"{text!r} is not HOST:PORT or PORT (e.g. 10.0.0.5:5900, or 5900)")
        host = match["v6"] or match["host"]
        port = int(match["port"]) if match["port"] else DEFAULT_PORT
    if not 0 < port < 65536:
        raise ValueError(f"{text!r}: the port must be 1 to 65535")
    return host, port


def format_vnc_address(host: str | None, port: int) -> str:
    """The address as written in settings and keyring entries.

    >>> format_vnc_address("::1", 5900), format_vnc_address(None, 5901)
    ('[::1]:5900', '5901')
    """
    if host is None:
        return str(port)
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def vnc_address(setting: str, guest_url: str | None) -> tuple[str, int]:
    """The host and port to connect to: the setting's, with the guest URL's host when it names none.

    >>> vnc_address("vm:5902", "http://10.0.0.5:5000"), vnc_address("5900", None)
    (('vm', 5902), ('127.0.0.1', 5900))

    Raises:
        ValueError: If ``setting`` is not an address.
    """
    host, port = parse_vnc_address(setting)
    return host or (urlsplit(guest_url).hostname if guest_url else None) or "127.0.0.1", port
