"""GuestClient against small local HTTP servers: retries, errors a user reads, OSWorld shapes."""

from __future__ import annotations

import pytest

from osw_studio.core.errors import GuestError
from osw_studio.envs.guest_client import GuestClient, RetryPolicy
from osw_studio.envs.local import free_port
from tests.envs.fake_guest import FakeGuest, Reply, Request, json_reply
from tests.fakes.desktop import Desktop

FAST = RetryPolicy(attempts=3, delay=0.01)
PNG = b"\x89PNG\r\n\x1a\nrest"


def failing(times: int, status: int, then: Reply) -> object:
    """A route that answers ``status`` ``times`` times, then ``then``."""
    count = {"n": 0}

    def reply(request: Request) -> Reply:
        count["n"] += 1
        if count["n"] <= times:
            return status, "text/plain", b"boom: disk on fire"
        return then

    return reply


async def test_reads_are_retried_until_they_succeed(fake_guest: FakeGuest) -> None:
    fake_guest.route("GET", "/screenshot", failing(2, 503, (200, "image/png", PNG)))  # type: ignore[arg-type]
    async with GuestClient(fake_guest.start(), retry=FAST) as client:
        assert await client.screenshot() == PNG
    assert len(fake_guest.calls("/screenshot")) == 3


async def test_a_read_that_keeps_failing_names_the_url_and_the_body(fake_guest: FakeGuest) -> None:
    fake_guest.route("GET", "/screenshot", failing(5, 500, (200, "image/png", PNG)))  # type: ignore[arg-type]
    url = fake_guest.start()
    async with GuestClient(url, retry=FAST) as client:
        with pytest.raises(GuestError) as caught:
            await client.screenshot()
    assert len(fake_guest.calls("/screenshot")) == 3
    text = str(caught.value)
    assert f"{url}/screenshot" in text
    assert "HTTP 500" in text and "boom: disk on fire" in text


async def test_a_failed_action_is_not_sent_twice(fake_guest: FakeGuest) -> None:
    fake_guest.route("POST", "/execute", failing(1, 500, json_reply({"status": "success"})))  # type: ignore[arg-type]
    async with GuestClient(fake_guest.start(), retry=FAST) as client:
        with pytest.raises(GuestError, match="HTTP 500"):
            await client.execute(["true"])
    assert len(fake_guest.calls("/execute")) == 1


async def test_a_timed_out_action_is_not_retried_but_a_timed_out_read_is(fake_guest: FakeGuest) -> None:
    fake_guest.route("POST", "/execute", lambda r: json_reply({"status": "success"}))
    fake_guest.route("GET", "/terminal", lambda r: json_reply({"output": "x"}))
    fake_guest.delay = 0.5
    async with GuestClient(fake_guest.start(), retry=FAST, timeout=0.1, action_timeout=0.1) as client:
        with pytest.raises(GuestError, match=r"did not answer within 0\.1 s"):
            await client.execute(["sleep", "1"])
        with pytest.raises(GuestError, match="did not answer"):
            await client.terminal_output()
    assert len(fake_guest.calls("/execute")) == 1
    assert len(fake_guest.calls("/terminal")) == 3


async def test_a_wrong_token_says_so_and_is_not_retried(fake_guest: FakeGuest) -> None:
    fake_guest.route("GET", "/screenshot", lambda r: json_reply({"detail": "missing or wrong token"}, 401))
    async with GuestClient(fake_guest.start(), "wrong", retry=FAST) as client:
        with pytest.raises(GuestError, match="wrong token") as caught:
            await client.screenshot()
    assert "token the guest server printed" in str(caught.value)
    assert len(fake_guest.calls("/screenshot")) == 1
    assert fake_guest.requests[0].headers["authorization"] == "Bearer wrong"


async def test_a_server_that_is_down_is_reported_with_what_to_do() -> None:
    port = free_port()  # free, so nothing listens there
    async with GuestClient(f"http://127.0.0.1:{port}", retry=FAST) as client:
        with pytest.raises(GuestError, match="cannot connect") as caught:
            await client.screen_size()
    assert f"127.0.0.1:{port}/screen_size" in str(caught.value)
    assert "is the guest server running" in str(caught.value)


async def test_missing_file_and_missing_capabilities_are_none(fake_guest: FakeGuest) -> None:
    async with GuestClient(fake_guest.start(), retry=FAST) as client:
        assert await client.get_file("/nope") is None
        assert await client.capabilities() is None
    # 404s are answers, not failures: asked once each
    assert len(fake_guest.calls("/file")) == 1
    assert fake_guest.calls("/file")[0].form() == {"file_path": b"/nope"}


async def test_osworld_request_shapes(fake_guest: FakeGuest) -> None:
    fake_guest.route("POST", "/setup/upload", lambda r: json_reply({"status": "success"}))
    fake_guest.route("GET", "/cursor_position", lambda r: json_reply([12, 34]))
    fake_guest.route("POST", "/list_directory", lambda r: json_reply({"directory_tree": {"name": "d"}}))
    fake_guest.route("GET", "/accessibility", lambda r: json_reply({"detail": "no AT-SPI"}, 501))
    async with GuestClient(fake_guest.start(), retry=FAST) as client:
        await client.upload("Ünï €".encode(), "/home/user/a b.txt")
        assert await client.cursor_position() == (12, 34)
        assert await client.list_directory("/home/user") == {"name": "d"}
        assert await client.accessibility_tree() is None
    form = fake_guest.calls("/setup/upload")[0].form()
    assert form == {"file_path": b"/home/user/a b.txt", "file_data": "Ünï €".encode()}
    assert fake_guest.calls("/list_directory")[0].json() == {"path": "/home/user"}


async def test_window_size_is_none_at_once_on_osworlds_bare_500(fake_guest: FakeGuest) -> None:
    """OSWorld's /window_size returns nothing for a class with no window, which Flask turns into a 500."""
    fake_guest.route(
        "POST", "/window_size", lambda r: (500, "text/html", b"<title>500 Internal Server Error")
    )
    async with GuestClient(fake_guest.start(), retry=RetryPolicy(attempts=3, delay=5)) as client:
        assert await client.window_size("no-such-class") is None
    assert len(fake_guest.calls("/window_size")) == 1


async def test_window_routes_answer_200_on_osworld_and_on_older_guests_404_means_no_window(
    fake_guest: FakeGuest,
) -> None:
    fake_guest.route(
        "POST", "/setup/activate_window", lambda r: (200, "text/html", b"Window activated successfully")
    )
    fake_guest.route("POST", "/setup/close_window", lambda r: (404, "text/plain", b"Window x not found"))
    async with GuestClient(fake_guest.start(), retry=FAST) as client:
        assert await client.activate_window("anything") is True  # OSWorld's server cannot tell
        assert await client.close_window("x") is False


async def test_our_guest_says_whether_a_window_matched(desktop: Desktop) -> None:
    async with GuestClient(desktop.url, desktop.token, retry=FAST) as client:
        assert await client.activate_window("no-such-window-anywhere") is False
        assert await client.close_window("no-such-window-anywhere") is False


def test_idle_connections_are_dropped_before_the_servers_drop_them() -> None:
    """Both servers close idle keep-alive connections after 5 s; a request sent on one at that moment
    fails, so the client stops reusing them well before."""
    from osw_studio.envs.guest_client import KEEP_ALIVE_S
    from osw_studio.guest.serve import KEEP_ALIVE_S as SERVER_KEEP_ALIVE_S

    assert KEEP_ALIVE_S <= SERVER_KEEP_ALIVE_S / 2
    client = GuestClient("http://127.0.0.1:1")
    assert client._http._transport._pool._keepalive_expiry == KEEP_ALIVE_S  # type: ignore[attr-defined]
