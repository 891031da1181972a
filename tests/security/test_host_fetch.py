"""A task's download URLs make the host fetch: never from this machine, its network or a metadata service.

A server on 127.0.0.1 plays the host-only service with a secret. A task may not reach it by naming it,
nor through a redirect from a name the user allowed (the mirror allow-list, which is how the allowed
path is tested with loopback only). Sizes are capped, and links in the cache are refused.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from osw_studio.cli import main
from osw_studio.core.errors import OswError
from osw_studio.envs.guest_client import GuestClient, RetryPolicy
from osw_studio.envs.setup import SetupOptions, SetupRunner
from osw_studio.tasks.assets import AssetMissing, AssetStore
from osw_studio.tasks.hostfetch import FetchPolicy, FetchRefused
from tests.envs.fake_guest import FakeGuest, osworld_guest
from tests.security.conftest import Victim

SECRET = b"host-only secret 4f1c"
FAST = RetryPolicy(attempts=1, delay=0.01)


class HostService:
    """A loopback service: ``/secret``, ``/go`` (redirects to ``/secret`` by address), ``/endless``,
    ``/huge`` (declares 10 GB), ``/file``; it records every path asked."""

    def __init__(self) -> None:
        service = self
        self.paths: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                service.paths.append(self.path)
                if self.path == "/go":
                    self.send_response(302)
                    self.send_header("Location", f"http://127.0.0.1:{service.port}/secret")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif self.path == "/endless":
                    self.send_response(200)
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    chunk = b"x" * 65536
                    try:
                        for _ in range(2000):  # 128 MiB at most: the client must stop long before
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    except OSError:
                        pass
                    self.close_connection = True
                elif self.path == "/huge":
                    self.send_response(200)
                    self.send_header("Content-Length", str(10 << 30))
                    self.end_headers()
                    self.close_connection = True
                else:
                    body = SECRET if self.path == "/secret" else b"mirror file"
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def service() -> Iterator[HostService]:
    server = HostService()
    yield server
    server.close()


@pytest.fixture
def guest() -> Iterator[FakeGuest]:
    fake = osworld_guest()
    fake.start()
    yield fake
    fake.stop()


def _url(guest: FakeGuest) -> str:
    return f"http://127.0.0.1:{guest.server.server_address[1]}"


def _uploads(guest: FakeGuest) -> list[bytes]:
    return [call.form()["file_data"] for call in guest.calls("/setup/upload")]


async def _fetch(store: AssetStore, url: str) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        await store.fetch(url, http)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::ffff:127.0.0.1]"])
async def test_a_loopback_url_is_refused_before_any_request(
    service: HostService, tmp_path: Path, host: str
) -> None:
    store = AssetStore(tmp_path / "cache")
    with pytest.raises(FetchRefused, match="not a public address"):
        await _fetch(store, f"http://{host}:{service.port}/secret")
    assert service.paths == []
    assert list((tmp_path / "cache").rglob("*.part")) == []


async def test_a_redirect_to_loopback_is_refused_even_from_an_allowed_mirror(
    service: HostService, tmp_path: Path
) -> None:
    store = AssetStore(tmp_path / "cache", policy=FetchPolicy.of(["localhost"]))
    with pytest.raises(FetchRefused, match=r"refused: 127\.0\.0\.1 is not a public address"):
        await _fetch(store, f"http://localhost:{service.port}/go")
    assert service.paths == ["/go"]  # the redirect's target was never asked
    # The allowed name itself is fetched.
    await _fetch(store, f"http://localhost:{service.port}/file")
    assert store.read(f"http://localhost:{service.port}/file") == b"mirror file"


async def test_an_endless_or_oversized_body_stops_at_the_cap_and_leaves_nothing(
    service: HostService, tmp_path: Path
) -> None:
    store = AssetStore(tmp_path / "cache", policy=FetchPolicy.of(["localhost"], max_bytes=1 << 20))
    for path in ("/endless", "/huge"):
        url = f"http://localhost:{service.port}{path}"
        with pytest.raises(FetchRefused, match="cap of 1048576 bytes"):
            await _fetch(store, url)
        assert store.get(url) is None
    assert [p for p in (tmp_path / "cache").rglob("*") if p.is_file()] == []


def test_assets_fetch_reports_a_loopback_url_as_refused(
    service: HostService, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    url = f"http://127.0.0.1:{service.port}/secret"
    task = {
        "id": "t1",
        "instruction": "x",
        "config": [{"type": "download", "parameters": {"files": [{"url": url, "path": "/home/user/a"}]}}],
        "evaluator": {"func": "infeasible"},
    }
    (suite / "t1.json").write_text(json.dumps(task))
    assert main(["assets", "fetch", str(suite), "--cache", str(tmp_path / "cache")]) == 1
    captured = capsys.readouterr()
    assert "not a public address" in captured.out + captured.err
    assert service.paths == []


async def test_a_setup_never_fetches_loopback_nor_uploads_it(
    service: HostService, guest: FakeGuest, tmp_path: Path
) -> None:
    step = {"type": "download", "parameters": {"files": [{"url": "", "path": "/home/user/loot"}]}}
    async with GuestClient(_url(guest), retry=FAST) as client:
        for url in (f"http://127.0.0.1:{service.port}/secret", f"http://localhost:{service.port}/go"):
            step["parameters"]["files"][0]["url"] = url  # type: ignore[index]
            options = SetupOptions(
                cache_dir=tmp_path / "c",
                download_retry_delay=0.01,
                fetch_policy=FetchPolicy.of(["localhost"]),
            )
            with pytest.raises(OswError, match="not a public address"):
                await SetupRunner(client, options).run([step], task_id="t1")
            store = AssetStore(tmp_path / "assets")
            with pytest.raises(OswError, match="not a public address"):
                options = SetupOptions(assets=store, fetch_missing=True, fetch_policy=FetchPolicy())
                await SetupRunner(client, options).run([step], task_id="t1")
    assert "/secret" not in service.paths
    assert SECRET not in b"".join(_uploads(guest))


async def test_cache_files_that_are_links_are_refused(
    victim: Victim, guest: FakeGuest, tmp_path: Path
) -> None:
    url = "https://files.example/a/notes.txt"
    # An asset-cache object that is a link to the key, with a sidecar that matches its size.
    store = AssetStore(tmp_path / "assets")
    store.path(url).parent.mkdir(parents=True)
    store.path(url).symlink_to(victim.key)
    sidecar = {"url": url, "size": len(victim.key_text), "sha256": "0", "source": url, "fetched": 0}
    store.path(url).with_suffix(".json").write_text(json.dumps(sidecar))
    assert store.get(url) is None
    with pytest.raises(AssetMissing):
        store.read(url)
    # A --cache folder whose file is a link to the key, and one that is a folder.
    cache = tmp_path / "cache"
    (cache / "t1").mkdir(parents=True)
    (cache / "t1" / "notes.txt").symlink_to(victim.key)
    step = {"type": "download", "parameters": {"files": [{"url": url, "path": "/home/user/notes.txt"}]}}
    async with GuestClient(_url(guest), retry=FAST) as client:
        for options in (SetupOptions(cache_dir=cache), SetupOptions(assets=store)):
            with pytest.raises(OswError, match=r"link or not a regular file|not in the asset cache"):
                await SetupRunner(client, options).run([step], task_id="t1")
    assert _uploads(guest) == []
