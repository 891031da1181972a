"""The guest server's ready line, as a launcher reads it.

The guest server prints ``osw-studio guest ready on http://HOST:PORT token=TOKEN`` once it accepts
connections (``token=none`` with ``--no-token``; ``unix:PATH`` instead of the URL when it listens on
a Unix socket), and writes the same line to its ``--ready-file``.
Started with ``--port 0`` it picks a free port itself, and this line is the only place that names
it. The guest formats the line (``osw_studio.guest.serve.ready_line``); every launcher (the local
and docker providers, the tests' desktops) parses it here, so the two sides stay one format.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

PREFIX = "osw-studio guest ready on "


@dataclass(frozen=True)
class ReadyLine:
    """What a guest server's ready line announces.

    Attributes:
        url: The server's base URL, ``http://HOST:PORT`` (``unix:PATH`` for a Unix socket).
        port: The TCP port it listens on (0 on a Unix socket).
        token: Its token, or ``None`` when it wants none (``token=none``).
        unix_socket: The Unix socket it listens on (``--unix-socket``), else ``None``.
    """

    url: str
    port: int
    token: str | None
    unix_socket: str | None = None


def parse_ready(text: str) -> ReadyLine | None:
    r"""The first complete ready line in ``text`` (a ready file or a log), or ``None`` if none yet.

    A line counts only once it is whole: a URL with a port, then the token, then the line's end
    (a file caught mid-write has no newline, so its last line is not trusted).

    Examples:
        >>> parse_ready("Openbox-Message: ...\nosw-studio guest ready on http://127.0.0.1:41234 token=x\n")
        ReadyLine(url='http://127.0.0.1:41234', port=41234, token='x', unix_socket=None)
        >>> parse_ready("osw-studio guest ready on http://127.0.0.1:5000 token=none\n").token is None
        True
        >>> parse_ready("osw-studio guest ready on http://127.0.0.1:5000 tok") is None
        True
        >>> parse_ready("starting\n") is None
        True
        >>> parse_ready("osw-studio guest ready on unix:/tmp/guest.sock token=x\n").unix_socket
        '/tmp/guest.sock'
    """
    for line in text.splitlines(keepends=True):
        if not (line.startswith(PREFIX) and line.endswith("\n")):
            continue
        address, sep, token = line[len(PREFIX) :].strip().partition(" token=")
        if not sep or not token or " " in token:
            continue
        if address.startswith("unix:/"):
            return ReadyLine(address, 0, None if token == "none" else token, address[len("unix:") :])
        try:
            parts = urlsplit(address)
            port = parts.port
        except ValueError:
            continue
        if parts.scheme != "http" or not parts.hostname or not port:
            continue
        return ReadyLine(address, port, None if token == "none" else token)
    return None
