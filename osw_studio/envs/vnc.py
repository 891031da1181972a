r"""A small RFB (VNC) client on asyncio streams: frames of a guest whose server has no live stream.

OSWorld guests serve screenshots but no stream; many of them (and VMs generally) run a VNC server.
This client speaks RFB 3.3, 3.7 and 3.8 (RFC 6143) with the None and VNC Authentication security
types, asks for 32-bit BGRX pixels (the byte order of Qt's ``Format_RGB32`` and of X11 screens, so
frames need no conversion), the Raw and CopyRect encodings and the DesktopSize pseudo-encoding, and
keeps a framebuffer that incremental updates patch. It only watches: it sends no input events (input
goes through the guest API, which records it).

Examples:
    >>> parse_version(b"RFB 003.008\n")
    (3, 8)
    >>> vnc_des_key("secret")  # each byte's bits reversed, as VNC servers do
    b'\xce\xa6\xc6N\xa6.\x00\x00'
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import struct
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Self

from osw_studio.core.errors import GuestError

SECURITY_NAMES = {
    0: "Invalid",
    1: "None",
    2: "VNC Authentication",
    5: "RA2",
    6: "RA2ne",
    16: "Tight",
    18: "TLS",
    19: "VeNCrypt",
    22: "xvp",
    30: "Apple Remote Desktop",
    113: "MSLogon II",
}
"""Names of RFB security types, for messages about the ones this client cannot use."""

RAW, COPY_RECT, DESKTOP_SIZE = 0, 1, -223
"""The encodings this client asks for (DesktopSize is a pseudo-encoding: a resized screen)."""

MAX_SIDE = 16384
"""A screen side larger than this is a broken or hostile server, not a desktop."""

HINT_PORT = "give the guest's VNC (RFB) port, usually 5900; a web VNC (noVNC) port does not speak RFB"


@dataclass(frozen=True)
class PixelFormat:
    """An RFB pixel format (16 bytes on the wire).

    Examples:
        >>> PixelFormat.unpack(BGRX.pack()) == BGRX
        True
    """

    bits_per_pixel: int
    depth: int
    big_endian: bool
    true_colour: bool
    red_max: int
    green_max: int
    blue_max: int
    red_shift: int
    green_shift: int
    blue_shift: int

    _STRUCT = struct.Struct(">BBBBHHHBBB3x")

    def pack(self) -> bytes:
        """The wire form."""
        return self._STRUCT.pack(
            self.bits_per_pixel,
            self.depth,
            self.big_endian,
            self.true_colour,
            self.red_max,
            self.green_max,
            self.blue_max,
            self.red_shift,
            self.green_shift,
            self.blue_shift,
        )

    @classmethod
    def unpack(cls, data: bytes) -> PixelFormat:
        """Read the wire form."""
        bpp, depth, big, true, rmax, gmax, bmax, rs, gs, bs = cls._STRUCT.unpack(data)
        return cls(bpp, depth, bool(big), bool(true), rmax, gmax, bmax, rs, gs, bs)


BGRX = PixelFormat(32, 24, False, True, 255, 255, 255, 16, 8, 0)
"""Little-endian ``0x00RRGGBB``: the bytes of a pixel are blue, green, red, padding."""


@dataclass(frozen=True)
class VncTarget:
    """Where a VNC server is and its password (None: the server asks for none)."""

    host: str
    port: int
    password: str | None = field(default=None, repr=False)

    def __str__(self) -> str:
        """``host:port`` (IPv6 hosts in brackets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


@dataclass(frozen=True)
class VncFrame:
    """One screen: ``width * height`` pixels of 4 bytes (blue, green, red, 255), rows top down.

    The bytes are those of an opaque Qt ``QImage.Format_RGB32`` image (on little-endian machines).
    """

    width: int
    height: int
    data: bytes = field(repr=False)

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        """The (red, green, blue) colour at ``x, y``.

        >>> VncFrame(2, 1, bytes([0, 0, 0, 0, 3, 2, 1, 0])).pixel(1, 0)
        (1, 2, 3)
        """
        i = (y * self.width + x) * 4
        blue, green, red = self.data[i : i + 3]
        return red, green, blue

    def rgb(self) -> bytes:
        r"""The pixels as packed RGB bytes (``width * height * 3``), e.g. for ``PIL.Image.frombytes``.

        >>> VncFrame(1, 1, bytes([3, 2, 1, 0])).rgb()
        b'\x01\x02\x03'
        """
        out = bytearray(self.width * self.height * 3)
        out[0::3], out[1::3], out[2::3] = self.data[2::4], self.data[1::4], self.data[0::4]
        return bytes(out)


def parse_version(greeting: bytes) -> tuple[int, int]:
    r"""The protocol version in a server's 12-byte greeting.

    >>> parse_version(b"RFB 003.889\n")
    (3, 889)
    >>> parse_version(b"HTTP/1.1 400")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: ...

    Raises:
        ValueError: If the greeting is not ``RFB xxx.yyy\n``.
    """
    match = re.fullmatch(rb"RFB (\d{3})\.(\d{3})\n", greeting)
    if not match:
        raise ValueError(f"not an RFB greeting: {greeting!r}")
    return int(match[1]), int(match[2])


def choose_version(server: tuple[int, int]) -> tuple[int, int]:
    """The version to answer: the highest of 3.3, 3.7 and 3.8 that the server's allows.

    >>> choose_version((3, 889)), choose_version((3, 7)), choose_version((3, 5)), choose_version((4, 1))
    ((3, 8), (3, 7), (3, 3), (3, 8))
    """
    if server >= (3, 8):
        return (3, 8)
    return (3, 7) if server >= (3, 7) else (3, 3)


def vnc_des_key(password: str) -> bytes:
    """The DES key of VNC Authentication: the password's first 8 bytes, each bit-reversed, zero-padded."""
    raw = password.encode("latin-1", "replace")[:8].ljust(8, b"\0")
    return bytes(int(f"{b:08b}"[::-1], 2) for b in raw)


def vnc_auth_response(password: str, challenge: bytes) -> bytes:
    """The 16-byte answer to a VNC Authentication challenge: DES-ECB of it under the password's key."""
    from cryptography.hazmat.decrepit.ciphers.algorithms import TripleDES
    from cryptography.hazmat.primitives.ciphers import Cipher, modes

    key = vnc_des_key(password)
    # Three equal keys make triple DES single DES; 24-byte keys are the form that is not deprecated.
    encryptor = Cipher(TripleDES(key * 3), modes.ECB()).encryptor()
    return encryptor.update(challenge) + encryptor.finalize()


class VncClient:
    """One connection to a VNC server that watches its screen.

    Use :meth:`open` (or ``async with await VncClient.open(...)``), then iterate :meth:`frames`.

    Attributes:
        target: The server.
        width: The screen's width (changes when the server resizes its desktop).
        height: The screen's height.
        name: The desktop name the server gave.
        version: The protocol version spoken.
    """

    def __init__(self, target: VncTarget, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.target = target
        self._reader = reader
        self._writer = writer
        self.width = 0
        self.height = 0
        self.name = ""
        self.version = (3, 8)
        self._fb = bytearray()
        self._opaque = b""

    @classmethod
    async def open(cls, target: VncTarget, *, seconds: float = 10.0) -> Self:
        """Connect, authenticate and initialise (pixel format, encodings).

        Args:
            target: The server and its password.
            seconds: How long connecting, and then the handshake, may take.

        Raises:
            GuestError: If the server cannot be reached, speaks no RFB, wants a security type or a
                password this client cannot give, or refuses the password.
        """
        where = f"vnc://{target}"
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(target.host, target.port, limit=2**22), seconds
            )
        except ConnectionRefusedError as exc:
            raise GuestError(
                "no VNC server answers: connection refused",
                where=where,
                hint="check the VNC port in Settings and that the guest's VNC server runs",
            ) from exc
        except (TimeoutError, OSError) as exc:
            raise GuestError(
                f"cannot reach the VNC server: {exc or 'timed out'}",
                where=where,
                hint="check the host and port, and that a firewall lets this machine through",
            ) from exc
        client = cls(target, reader, writer)
        try:
            await asyncio.wait_for(client._handshake(), seconds)
        except TimeoutError as exc:
            await client.aclose()
            raise GuestError(
                f"the server did not complete the VNC handshake within {seconds:g} s",
                where=where,
                hint=HINT_PORT,
            ) from exc
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            await client.aclose()
            raise GuestError(
                "the server closed the connection during the VNC handshake",
                where=where,
                hint="the server may allow only one viewer or limit this address; " + HINT_PORT,
            ) from exc
        except BaseException:
            await client.aclose()
            raise
        return client

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection (idempotent)."""
        if not self._writer.is_closing():
            self._writer.close()
        with contextlib.suppress(OSError, asyncio.CancelledError):
            await self._writer.wait_closed()

    # --- handshake ----------------------------------------------------------------------------------

    def _error(self, message: str, hint: str | None = None) -> GuestError:
        return GuestError(message, where=f"vnc://{self.target}", hint=hint)

    async def _handshake(self) -> None:
        greeting = await self._reader.readexactly(12)
        try:
            server = parse_version(greeting)
        except ValueError:
            raise self._error(f"the server does not speak VNC (it sent {greeting!r})", HINT_PORT) from None
        self.version = choose_version(server)
        self._writer.write(b"RFB %03d.%03d\n" % self.version)
        await self._authenticate()
        self._writer.write(b"\x01")  # ClientInit: shared, so other viewers stay connected
        width, height, pixel_format, name_length = struct.unpack(
            ">HH16sI", await self._reader.readexactly(24)
        )
        self.name = (await self._reader.readexactly(name_length)).decode("utf-8", "replace")
        del pixel_format  # the server's own; this client sets its own below
        self._resize(width, height)
        self._writer.write(b"\x00\x00\x00\x00" + BGRX.pack())
        encodings = (COPY_RECT, RAW, DESKTOP_SIZE)
        self._writer.write(struct.pack(f">BxH{len(encodings)}i", 2, len(encodings), *encodings))
        await self._writer.drain()

    async def _authenticate(self) -> None:
        if self.version == (3, 3):
            (kind,) = struct.unpack(">I", await self._reader.readexactly(4))
            if kind == 0:
                raise self._error(f"the server refused the connection: {await self._reason()}")
            offered = [kind]
        else:
            (count,) = await self._reader.readexactly(1)
            if count == 0:
                raise self._error(f"the server refused the connection: {await self._reason()}")
            offered = list(await self._reader.readexactly(count))
        kind = self._pick_security(offered)
        if self.version != (3, 3):
            self._writer.write(bytes([kind]))
        if kind == 2:
            challenge = await self._reader.readexactly(16)
            self._writer.write(vnc_auth_response(self.target.password or "", challenge))
        if kind == 2 or self.version == (3, 8):
            (result,) = struct.unpack(">I", await self._reader.readexactly(4))
            if result != 0:
                reason = await self._reason() if self.version == (3, 8) else ""
                if kind == 2:
                    raise self._error(
                        "the VNC server refused the password" + (f": {reason}" if reason else ""),
                        "store the right one: osw-studio keys set --vnc HOST:PORT, or in Settings",
                    )
                raise self._error("the VNC server refused the connection" + (f": {reason}" if reason else ""))

    def _pick_security(self, offered: list[int]) -> int:
        if 2 in offered and self.target.password:
            return 2
        if 1 in offered:
            return 1
        if 2 in offered:
            raise self._error(
                "the VNC server asks for a password and none is stored",
                "store it with osw-studio keys set --vnc HOST:PORT, or in Settings",
            )
        names = ", ".join(SECURITY_NAMES.get(k, f"type {k}") for k in offered)
        raise self._error(
            f"the VNC server offers only security types this viewer does not support ({names})",
            "configure the server to allow VNC Authentication or no authentication "
            "(reach it over an SSH tunnel instead of TLS)",
        )

    async def _reason(self) -> str:
        (length,) = struct.unpack(">I", await self._reader.readexactly(4))
        return (await self._reader.readexactly(min(length, 4096))).decode("utf-8", "replace")

    # --- frames -------------------------------------------------------------------------------------

    def _resize(self, width: int, height: int) -> None:
        if not (0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE):
            raise self._error(f"the VNC server reports a {width}x{height} screen")
        self.width, self.height = width, height
        self._fb = bytearray(width * height * 4)
        self._opaque = b"\xff" * (width * height)

    def _request(self, incremental: bool) -> None:
        self._writer.write(struct.pack(">BBHHHH", 3, incremental, 0, 0, self.width, self.height))

    def frame(self) -> VncFrame:
        """The screen as last updated."""
        self._fb[3::4] = self._opaque  # servers send the padding byte as 0; Qt's RGB32 wants 255 there
        return VncFrame(self.width, self.height, bytes(self._fb))

    async def frames(self, fps: float = 30.0) -> AsyncIterator[VncFrame]:
        """Frames of the screen: the whole screen first, then one after each change, at most ``fps`` a second.

        An update is asked for only once the previous frame's time slot has passed, so a slow consumer or
        a low ``fps`` slows the server down instead of queueing frames.

        Raises:
            GuestError: If the server closes the connection or sends something that is not RFB.
        """
        interval = 1.0 / fps if fps > 0 else 0.0
        resized = True
        while True:
            requested = time.monotonic()
            self._request(incremental=not resized)
            await self._writer.drain()
            try:
                resized = await self._read_update()
            except (asyncio.IncompleteReadError, ConnectionError) as exc:
                raise self._error(
                    "the VNC server closed the connection", "it may have stopped or restarted"
                ) from exc
            yield self.frame()
            await asyncio.sleep(max(0.0, requested + interval - time.monotonic()))

    async def _read_update(self) -> bool:
        """Read server messages up to one framebuffer update; True when the screen was resized."""
        while True:
            (kind,) = await self._reader.readexactly(1)
            if kind == 0:
                return await self._read_rects()
            if kind == 1:  # SetColourMapEntries: not used with a true-colour format
                _, count = struct.unpack(">xHH", await self._reader.readexactly(5))
                await self._reader.readexactly(count * 6)
            elif kind == 2:  # Bell
                continue
            elif kind == 3:  # ServerCutText: the guest's clipboard; not ours to read
                (length,) = struct.unpack(">3xI", await self._reader.readexactly(7))
                await self._reader.readexactly(length)
            else:
                raise self._error(f"the VNC server sent an unknown message (type {kind})")

    async def _read_rects(self) -> bool:
        (count,) = struct.unpack(">xH", await self._reader.readexactly(3))
        resized = False
        for _ in range(count):
            x, y, w, h, encoding = struct.unpack(">HHHHi", await self._reader.readexactly(12))
            if encoding == DESKTOP_SIZE:
                self._resize(w, h)
                resized = True
                continue
            if x + w > self.width or y + h > self.height:
                raise self._error(f"the VNC server sent a rectangle outside the screen ({x},{y} {w}x{h})")
            if encoding == RAW:
                self._put(x, y, w, h, await self._reader.readexactly(w * h * 4))
            elif encoding == COPY_RECT:
                sx, sy = struct.unpack(">HH", await self._reader.readexactly(4))
                if sx + w > self.width or sy + h > self.height:
                    raise self._error("the VNC server sent a copy from outside the screen")
                self._put(x, y, w, h, self._get(sx, sy, w, h))
            else:
                raise self._error(f"the VNC server sent encoding {encoding}, which was not asked for")
        return resized

    def _get(self, x: int, y: int, w: int, h: int) -> bytes:
        stride, row = self.width * 4, w * 4
        return b"".join(self._fb[(y + r) * stride + x * 4 : (y + r) * stride + x * 4 + row] for r in range(h))

    def _put(self, x: int, y: int, w: int, h: int, data: bytes) -> None:
        stride, row = self.width * 4, w * 4
        if x == 0 and w == self.width:  # whole rows: one copy
            self._fb[y * stride : (y + h) * stride] = data
            return
        for r in range(h):
            start = (y + r) * stride + x * 4
            self._fb[start : start + row] = data[r * row : (r + 1) * row]
