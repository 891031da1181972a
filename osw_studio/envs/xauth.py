"""X authority cookies: each local env's Xvfb accepts only clients that hold its own cookie.

An Xvfb started without ``-auth`` lets any local process (another user, a task in another env)
connect and type into it. The local provider writes a fresh MIT-MAGIC-COOKIE-1 into a file only its
env can read, starts Xvfb with ``-auth`` on that file and gives the file to the env's processes as
``XAUTHORITY``; a client without the cookie is refused ("Authorization required").

The file is written before Xvfb picks its display number (``-displayfd``), so its entries name no
number. It holds two entries with the same cookie, because the two client libraries match
differently: libXau (Xlib, xcb, every toolkit) takes a ``FamilyWild`` entry for any display, and
python-xlib (pyautogui, the guest server) takes a ``FamilyLocal`` entry for this host name with an
empty number for any display. Xvfb itself loads every cookie in the file.
"""

from __future__ import annotations

import os
import secrets
import socket
import struct
from pathlib import Path

COOKIE_NAME = b"MIT-MAGIC-COOKIE-1"
FAMILY_LOCAL = 256
FAMILY_WILD = 65535


def entry(family: int, address: bytes, number: bytes, cookie: bytes) -> bytes:
    """One record of an Xauthority file (big-endian family, then four counted strings).

    Examples:
        >>> record = entry(FAMILY_WILD, b"", b"", bytes([1, 2]))
        >>> record[:8].hex(), record[8:26], record[26:].hex()
        ('ffff000000000012', b'MIT-MAGIC-COOKIE-1', '00020102')
    """
    fields = (address, number, COOKIE_NAME, cookie)
    return struct.pack(">H", family) + b"".join(struct.pack(">H", len(f)) + f for f in fields)


def write_cookie_file(path: Path) -> bytes:
    """Create ``path`` (mode 0600, must not exist) holding a fresh cookie for any display; return it.

    Raises:
        FileExistsError: If ``path`` exists (a file planted there is never trusted).
    """
    cookie = secrets.token_bytes(16)
    data = entry(FAMILY_WILD, b"", b"", cookie)
    data += entry(FAMILY_LOCAL, socket.gethostname().encode(), b"", cookie)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as file:
        file.write(data)
    return cookie
