"""The RFB client against a real x11vnc on a private Xvfb, and against servers that are not VNC."""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from osw_studio.core.errors import GuestError
from osw_studio.envs.local import free_port
from osw_studio.envs.vnc import VncClient, VncFrame, VncTarget, vnc_auth_response
from tests.fakes.vnc_server import (
    VncDisplay,
    store_password,
    vnc_locked_port,
    vnc_open_port,
    vnc_screen,
)

__all__ = ["vnc_locked_port", "vnc_open_port", "vnc_screen"]  # fixtures


async def frames_until(client: VncClient, wanted: tuple[int, int, int], at: tuple[int, int]) -> VncFrame:
    """Frames until the pixel at ``at`` has the ``wanted`` colour (a hang guard, not a timing)."""
    async with asyncio.timeout(20), contextlib.aclosing(client.frames(fps=30)) as frames:
        async for frame in frames:
            if frame.pixel(*at) == wanted:
                return frame
    raise AssertionError("the frame stream ended")


async def test_frames_show_the_screen_and_follow_changes(vnc_screen: VncDisplay, vnc_open_port: int) -> None:
    vnc_screen.paint("#ff0000")
    async with await VncClient.open(VncTarget("127.0.0.1", vnc_open_port)) as client:
        assert (client.width, client.height) == (640, 480)
        assert client.version == (3, 8)
        frame = await frames_until(client, (255, 0, 0), (10, 10))
        assert (frame.width, frame.height) == (640, 480)
        assert len(frame.rgb()) == 640 * 480 * 3
        assert frame.rgb()[-3:] == b"\xff\x00\x00"
    # a second viewer sees a change made while the first is gone
    vnc_screen.paint("#0000ff")
    async with await VncClient.open(VncTarget("127.0.0.1", vnc_open_port)) as client:
        await frames_until(client, (0, 0, 255), (600, 400))


async def test_frames_arrive_while_the_screen_changes(vnc_screen: VncDisplay, vnc_open_port: int) -> None:
    colours = ["#00ff00", "#ffff00"]
    async with await VncClient.open(VncTarget("127.0.0.1", vnc_open_port)) as client:
        vnc_screen.paint(colours[0])
        await frames_until(client, (0, 255, 0), (100, 100))
        vnc_screen.paint(colours[1])
        await frames_until(client, (255, 255, 0), (100, 100))


async def test_password_is_sent_with_vnc_authentication(vnc_screen: VncDisplay, vnc_locked_port: int) -> None:
    vnc_screen.paint("#ff00ff")
    async with await VncClient.open(VncTarget("127.0.0.1", vnc_locked_port, "secret")) as client:
        await frames_until(client, (255, 0, 255), (1, 1))


async def test_wrong_password_says_so(vnc_locked_port: int) -> None:
    with pytest.raises(GuestError, match="refused the password") as caught:
        await VncClient.open(VncTarget("127.0.0.1", vnc_locked_port, "wrong"))
    assert f"127.0.0.1:{vnc_locked_port}" in str(caught.value)
    assert "keys set --vnc" in str(caught.value)


async def test_missing_password_says_one_is_needed(vnc_locked_port: int) -> None:
    with pytest.raises(GuestError, match="asks for a password and none is stored"):
        await VncClient.open(VncTarget("127.0.0.1", vnc_locked_port))


async def test_connection_refused_names_the_address() -> None:
    port = free_port()
    with pytest.raises(GuestError, match="connection refused") as caught:
        await VncClient.open(VncTarget("127.0.0.1", port))
    assert f"vnc://127.0.0.1:{port}" in str(caught.value)


@contextlib.asynccontextmanager
async def server(greeting: bytes, then: bytes = b"") -> AsyncIterator[int]:
    """A TCP server on 127.0.0.1 that sends ``greeting``, reads the reply and sends ``then``."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(greeting)
        if then:
            await reader.readexactly(12)
            writer.write(then)
        await writer.drain()
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            await reader.read(100)
        writer.close()

    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield srv.sockets[0].getsockname()[1]
    finally:
        srv.close()
        await srv.wait_closed()


async def test_a_server_that_speaks_something_else_is_named() -> None:
    async with server(b"SSH-2.0-OpenSSH_9.2p1\r\n") as port:
        with pytest.raises(GuestError, match="does not speak VNC") as caught:
            await VncClient.open(VncTarget("127.0.0.1", port))
    assert "5900" in str(caught.value)


async def test_a_silent_server_times_out_with_a_hint() -> None:
    async with server(b"") as port:
        with pytest.raises(GuestError, match="did not complete the VNC handshake") as caught:
            await VncClient.open(VncTarget("127.0.0.1", port), seconds=0.5)
    assert "noVNC" in str(caught.value)


async def test_unsupported_security_types_are_named() -> None:
    async with server(b"RFB 003.008\n", bytes([2, 18, 19])) as port:
        with pytest.raises(GuestError, match=r"does not support \(TLS, VeNCrypt\)"):
            await VncClient.open(VncTarget("127.0.0.1", port))


async def test_a_refusal_carries_the_servers_reason() -> None:
    reason = b"Too many authentication failures"
    async with server(b"RFB 003.008\n", b"\x00" + len(reason).to_bytes(4, "big") + reason) as port:
        with pytest.raises(GuestError, match="Too many authentication failures"):
            await VncClient.open(VncTarget("127.0.0.1", port))


def pixels(*rgb: tuple[int, int, int]) -> bytes:
    return b"".join(bytes([b, g, r, 0]) for r, g, b in rgb)


def rect(x: int, y: int, w: int, h: int, encoding: int) -> bytes:
    return struct.pack(">HHHHi", x, y, w, h, encoding)


async def test_raw_copyrect_and_desktop_size_over_rfb_3_3() -> None:
    """A scripted 3.3 server: a 2x1 screen, a copy, then a resize to 1x2 with new pixels."""
    red, green, blue = (255, 0, 0), (0, 255, 0), (0, 0, 255)
    updates = [
        b"\x00\x00" + struct.pack(">H", 1) + rect(0, 0, 2, 1, 0) + pixels(red, green),
        b"\x02"  # a bell between updates is skipped
        + b"\x00\x00"
        + struct.pack(">H", 1)
        + rect(1, 0, 1, 1, 1)
        + struct.pack(">HH", 0, 0),
        b"\x00\x00" + struct.pack(">H", 2) + rect(0, 0, 1, 2, -223) + rect(0, 0, 1, 2, 0) + pixels(blue, red),
        b"\x00\x00\x00\x00",  # an empty update
    ]
    requests: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"RFB 003.003\n")
        assert await reader.readexactly(12) == b"RFB 003.003\n"
        writer.write(struct.pack(">I", 1))  # security: None, no result in 3.3
        assert await reader.readexactly(1) == b"\x01"  # shared
        writer.write(struct.pack(">HH16sI", 2, 1, bytes(16), 4) + b"test")
        await reader.readexactly(20 + 4 + 3 * 4)  # SetPixelFormat, SetEncodings (3)
        for update in updates:
            requests.append(await reader.readexactly(10))
            writer.write(update)
            await writer.drain()
        await reader.read(100)
        writer.close()

    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        port = srv.sockets[0].getsockname()[1]
        async with await VncClient.open(VncTarget("127.0.0.1", port)) as client:
            assert (client.name, client.version) == ("test", (3, 3))
            seen = []
            async with contextlib.aclosing(client.frames(fps=0)) as frames:
                async for frame in frames:
                    seen.append(frame)
                    if len(seen) == 4:
                        break
    finally:
        srv.close()
        await srv.wait_closed()
    assert [f.pixel(x, 0) for f in seen[:2] for x in (0, 1)] == [red, green, red, red]
    assert (seen[2].width, seen[2].height) == (1, 2)
    assert [seen[2].pixel(0, y) for y in (0, 1)] == [blue, red]
    # a full update first, incremental after it, and full again after the resize
    assert [r[1] for r in requests] == [0, 1, 1, 0]


def test_des_matches_x11vnc(tmp_path: Path) -> None:
    # x11vnc -storepasswd writes the password DES-encrypted under VNC's fixed key with the same
    # bit-reversed key bytes that VNC Authentication uses: an independent vector for our DES.
    stored = store_password(tmp_path / "passwd", "secret").read_bytes()[:8]
    fixed_key = bytes([23, 82, 107, 6, 35, 78, 88, 7]).decode("latin-1")
    assert vnc_auth_response(fixed_key, b"secret\0\0" * 2) == stored * 2
    assert vnc_auth_response("12345678 and more", bytes(16)) == vnc_auth_response("12345678", bytes(16))
