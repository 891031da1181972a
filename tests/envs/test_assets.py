"""The asset cache: fetch from a mirror on 127.0.0.1, resume, verify, import, and setups read from it."""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from osw_studio.cli import main
from osw_studio.core.errors import GuestError
from osw_studio.envs.guest_client import GuestClient, RetryPolicy
from osw_studio.envs.setup import SetupOptions, SetupRunner
from osw_studio.tasks.assets import AssetStore, suite_assets
from osw_studio.tasks.load import load_tasks
from tests.envs.fake_guest import FakeGuest

HF = "https://huggingface.co/datasets/xlangai/ubuntu_osworld_file_cache/resolve/main"


class Mirror:
    """Stand-in files served under ``/<host>/<path>`` (the mirror layout), with Range support.

    ``short`` names paths whose answers announce more bytes than they send (a cut connection).
    """

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.requests: list[tuple[str, str | None]] = []
        self.short: set[str] = set()
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                rng = self.headers.get("Range")
                mirror.requests.append((self.path, rng))
                data = mirror.files.get(self.path)
                if data is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                start = int(rng.removeprefix("bytes=").split("-")[0]) if rng else 0
                if start >= len(data) and rng:
                    self.send_response(416)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = data[start:]
                self.send_response(206 if rng else 200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.path in mirror.short:
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/m"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def serve(self, url: str, data: bytes) -> None:
        self.files["/m/" + url.split("://", 1)[1]] = data

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def mirror() -> Iterator[Mirror]:
    server = Mirror()
    yield server
    server.close()


def _task(folder: Path, task_id: str, urls: list[str], cloud: str | None = None) -> Path:
    files = [{"url": url, "path": f"/home/user/{url.rsplit('/', 1)[-1]}"} for url in urls]
    evaluator: dict[str, Any] = {"func": "check_include_exclude", "result": {"type": "vm_file"}}
    if cloud:
        evaluator = {
            "func": "compare_text_file",
            "result": {"type": "vm_file", "path": "/home/user/a.txt", "dest": "a.txt"},
            "expected": {"type": "cloud_file", "path": cloud, "dest": "gold.txt"},
        }
    task = {
        "id": task_id,
        "instruction": "edit the file",
        "config": [{"type": "download", "parameters": {"files": files}}],
        "evaluator": evaluator,
    }
    path = folder / f"{task_id}.json"
    path.write_text(json.dumps(task))
    return path


def test_suite_assets_lists_every_osworld_url_once(osworld_dir: Path) -> None:
    report = load_tasks([osworld_dir / "test_all.json"])
    refs = suite_assets(e.task for e in report.entries)
    urls = [r.url for r in refs]
    assert len(urls) == len(set(urls)) == 660  # download steps and cloud_file getters of the 369 tasks
    assert all(u.startswith("https://huggingface.co/") for u in urls)
    assert all(r.tasks and r.names for r in refs)


def test_fetch_from_a_mirror_then_list_verify_and_lock(
    mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    a, b, gold = f"{HF}/calc/t1/a.xlsx", f"{HF}/calc/t1/b.docx", f"{HF}/calc/t2/gold.txt"
    _task(suite, "t1", [a, b])
    _task(suite, "t2", [a], cloud=gold)
    payload = {a: b"A" * 3_000_000, b: b"docx", gold: b"gold text\n"}
    for url, data in payload.items():
        mirror.serve(url, data)
    cache = tmp_path / "cache"
    base = ["assets", "fetch", str(suite), "--cache", str(cache), "--mirror", mirror.url, "-j", "3"]
    assert main(base) == 0
    assert "3 fetched, 0 already cached, 0 failed" in capsys.readouterr().out
    store = AssetStore(cache)
    for url, data in payload.items():
        assert store.read(url) == data
        meta = store.meta(url)
        assert meta is not None and meta.sha256 == hashlib.sha256(data).hexdigest()
    requests = len(mirror.requests)
    assert main(base) == 0  # nothing left to fetch: no request at all
    assert "0 fetched, 3 already cached" in capsys.readouterr().out
    assert len(mirror.requests) == requests

    assert main(["assets", "list", str(suite), "--cache", str(cache), "--json"]) == 0
    lock = json.loads(capsys.readouterr().out)
    assert {row["url"] for row in lock} == set(payload)
    (tmp_path / "lock.json").write_text(json.dumps(lock))
    verify = ["assets", "verify", str(suite), "--cache", str(cache), "--lock", str(tmp_path / "lock.json")]
    assert main(verify) == 0
    assert "3 ok, 0 missing or damaged" in capsys.readouterr().out


def test_a_corrupt_file_is_found_by_verify_and_fetched_again(
    mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    url = f"{HF}/os/t3/report.pdf"
    _task(suite, "t3", [url])
    mirror.serve(url, b"%PDF real")
    cache = tmp_path / "cache"
    assert main(["assets", "fetch", str(suite), "--cache", str(cache), "--mirror", mirror.url]) == 0
    store = AssetStore(cache)
    store.path(url).write_bytes(b"%PDF evil")  # same size, other bytes
    capsys.readouterr()
    assert main(["assets", "verify", str(suite), "--cache", str(cache)]) == 1
    out = capsys.readouterr().out
    assert "BAD" in out and "SHA-256 differs" in out and url in out
    assert store.get(url) is None  # removed, so the next fetch gets it again
    assert main(["assets", "fetch", str(suite), "--cache", str(cache), "--mirror", mirror.url]) == 0
    assert store.read(url) == b"%PDF real"


def test_a_cut_download_fails_clearly_and_resumes_with_a_range_request(
    mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    url = f"{HF}/gimp/t4/photo.png"
    data = bytes(range(256)) * 4000
    _task(suite, "t4", [url])
    mirror.serve(url, data)
    path = "/m/" + url.split("://", 1)[1]
    mirror.short.add(path)
    cache = tmp_path / "cache"
    args = ["assets", "fetch", str(suite), "--cache", str(cache), "--mirror", mirror.url]
    assert main(args) == 1
    captured = capsys.readouterr()
    assert "0 fetched, 0 already cached, 1 failed" in captured.out
    assert f"FAIL {url}" in captured.err
    store = AssetStore(cache)
    assert store.get(url) is None
    part = store.path(url).with_suffix(".part")
    have = part.stat().st_size
    assert 0 < have < len(data)
    mirror.short.clear()
    assert main(args) == 0
    assert mirror.requests[-1] == (path, f"bytes={have}-")
    assert store.read(url) == data


def test_a_missing_file_on_the_mirror_is_reported(
    mirror: Mirror, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    _task(suite, "t5", [f"{HF}/vlc/t5/clip.mp4"])
    args = ["assets", "fetch", str(suite), "--cache", str(tmp_path / "c"), "--mirror", mirror.url]
    assert main(args) == 1
    assert "HTTP 404" in capsys.readouterr().err


def test_import_reads_an_osworld_cache_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    a, b = f"{HF}/calc/t6/a.xlsx", f"{HF}/calc/t6/b.csv"
    _task(suite, "t6", [a, b])
    osworld_cache = tmp_path / "osworld-cache" / "t6"
    osworld_cache.mkdir(parents=True)
    (osworld_cache / f"{uuid.uuid5(uuid.NAMESPACE_URL, a)}_a.xlsx").write_bytes(b"xlsx")
    (tmp_path / "osworld-cache" / "b.csv").write_bytes(b"1,2\n")
    (tmp_path / "osworld-cache" / "link.csv").symlink_to("/etc/passwd")
    cache = tmp_path / "cache"
    assert main(["assets", "import", str(tmp_path / "osworld-cache"), str(suite), "--cache", str(cache)]) == 0
    assert "2 imported, 0 still missing" in capsys.readouterr().out
    store = AssetStore(cache)
    assert store.read(a) == b"xlsx" and store.read(b) == b"1,2\n"


FAST = RetryPolicy(attempts=2, delay=0.01)


async def test_setup_reads_downloads_from_the_cache_and_names_the_fetch_command_when_missing(
    osworld: FakeGuest, tmp_path: Path
) -> None:
    store = AssetStore(tmp_path / "cache")
    url = f"{HF}/calc/t7/Report.xlsx"
    store.put(url, b"cached report", "test")
    step = {"type": "download", "parameters": {"files": [{"url": url, "path": "/home/user/Report.xlsx"}]}}
    options = SetupOptions(assets=store, task_dir=tmp_path / "suite")
    async with GuestClient(osworld.start(), retry=FAST) as guest:
        await SetupRunner(guest, options).run([step], task_id="t7")
        assert osworld.calls("/setup/upload")[0].form()["file_data"] == b"cached report"
        missing = url.replace("Report", "Other")
        step["parameters"]["files"][0]["url"] = missing  # type: ignore[index]
        with pytest.raises(GuestError) as caught:
            await SetupRunner(guest, options).run([step], task_id="t7")
    text = str(caught.value)
    assert missing in text and "not in the asset cache" in text
    assert f"osw-studio assets fetch {tmp_path / 'suite'}" in text


async def test_setup_may_fetch_a_missing_file_into_the_cache_when_allowed(
    osworld: FakeGuest, mirror: Mirror, tmp_path: Path
) -> None:
    store = AssetStore(tmp_path / "cache", mirror=mirror.url)
    url = f"{HF}/calc/t8/x.csv"
    mirror.serve(url, b"a,b\n")
    step = {"type": "download", "parameters": {"files": [{"url": url, "path": "/home/user/x.csv"}]}}
    async with GuestClient(osworld.start(), retry=FAST) as guest:
        await SetupRunner(guest, SetupOptions(assets=store, fetch_missing=True)).run([step], task_id="t8")
    assert store.read(url) == b"a,b\n"
    assert osworld.calls("/setup/upload")[0].form()["file_data"] == b"a,b\n"
