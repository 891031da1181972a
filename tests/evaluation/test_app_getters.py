"""The VLC and VS Code getters against real servers: VLC's HTTP interface as it answers (a loopback server
with its password check) and the tests' guest desktop."""

from __future__ import annotations

import asyncio
import base64
import http.server
import shutil
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from osw_studio.envs.guest_client import GuestClient
from osw_studio.envs.local import free_port
from osw_studio.evaluation.getters.vlc import VIDEO_TYPES
from osw_studio.evaluation.registry import GETTERS, METRICS, GetterContext
from tests.fakes.desktop import Desktop

STATUS = (
    '<?xml version="1.0" encoding="utf-8" standalone="yes" ?><root><fullscreen>false</fullscreen>'
    '<state>playing</state><information><category name="meta">'
    '<info name="filename">Colorful-Flowers.mp3</info></category></information></root>'
)


class _VlcHttp(http.server.BaseHTTPRequestHandler):
    """VLC's HTTP interface: ``/requests/status.xml`` behind Basic auth with an empty user name."""

    password = "password"

    def do_GET(self) -> None:
        expected = "Basic " + base64.b64encode(f":{self.password}".encode()).decode()
        if self.headers.get("Authorization") != expected:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="VLC stream"')
            self.end_headers()
            return
        if self.path != "/requests/status.xml":
            self.send_response(404)
            self.end_headers()
            return
        body = STATUS.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def vlc_http() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _VlcHttp)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
async def offline_guest() -> AsyncIterator[GuestClient]:
    async with GuestClient(f"http://127.0.0.1:{free_port()}") as guest:
        yield guest


async def test_vlc_playing_info_saves_the_status_and_scores_it(
    offline_guest: GuestClient, vlc_http: str, tmp_path: Path
) -> None:
    ctx = GetterContext(guest=offline_guest, cache_dir=tmp_path, vlc_url=vlc_http)
    path = await GETTERS.get("vlc_playing_info")(ctx, {"dest": "status.xml"})
    assert path == str(tmp_path / "status.xml")
    assert await asyncio.to_thread(Path(path).read_text) == STATUS
    rule = {"type": "file_name", "file_name": "Colorful-Flowers.mp3"}
    assert METRICS.get("is_vlc_playing")(path, rule) == 1.0


async def test_vlc_playing_info_is_none_when_vlc_refuses_or_is_not_there(
    offline_guest: GuestClient, vlc_http: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_VlcHttp, "password", "another")
    ctx = GetterContext(guest=offline_guest, cache_dir=tmp_path, vlc_url=vlc_http)
    assert await GETTERS.get("vlc_playing_info")(ctx, {"dest": "status.xml"}) is None
    nobody = GetterContext(guest=offline_guest, cache_dir=tmp_path, vlc_url=f"http://127.0.0.1:{free_port()}")
    assert await GETTERS.get("vlc_playing_info")(nobody, {"dest": "status.xml"}) is None
    assert not (tmp_path / "status.xml").exists()
    assert METRICS.get("is_vlc_playing")(None, {"type": "file_name", "file_name": "x"}) == 0.0


@pytest.fixture
async def ctx(desktop: Desktop, tmp_path: Path) -> AsyncIterator[GetterContext]:
    async with GuestClient(desktop.url, desktop.token) as guest:
        yield GetterContext(guest=guest, cache_dir=tmp_path / "cache")


@pytest.mark.xvfb
async def test_default_video_player_is_the_most_common_default(ctx: GetterContext, desktop: Desktop) -> None:
    mimeapps = desktop.home / ".config" / "mimeapps.list"
    mimeapps.parent.mkdir(parents=True, exist_ok=True)
    apps = desktop.home / ".local" / "share" / "applications"
    apps.mkdir(parents=True, exist_ok=True)
    # xdg-mime answers only with applications whose program is installed: these run programs we have.
    for name, program in (("mpv", "xterm"), ("totem", "openbox")):
        entry = f"[Desktop Entry]\nType=Application\nName={name}\nExec={program} %U\nMimeType=video/mp4;\n"
        (apps / f"{name}.desktop").write_text(entry)

    async def defaults(apps: dict[str, str]) -> Any:
        lines = ["[Default Applications]", *(f"video/{kind}={app}" for kind, app in apps.items())]
        await asyncio.to_thread(mimeapps.write_text, "\n".join(lines) + "\n")
        return await GETTERS.get("default_video_player")(ctx, {})

    try:
        mostly_mpv = {kind: "totem.desktop" if i < 5 else "mpv.desktop" for i, kind in enumerate(VIDEO_TYPES)}
        assert await defaults(mostly_mpv) == "mpv.desktop\n"
        assert await defaults(dict.fromkeys(VIDEO_TYPES, "totem.desktop")) == "totem.desktop\n"
    finally:
        await asyncio.to_thread(mimeapps.unlink, missing_ok=True)
        await asyncio.to_thread(shutil.rmtree, apps)


@pytest.mark.xvfb
async def test_vscode_config_runs_the_palette_command_then_fetches_the_file(
    ctx: GetterContext, desktop: Desktop
) -> None:
    target = desktop.home / "OpenProject.txt"
    await asyncio.to_thread(target.write_text, "/home/user/project\n")
    spec = {"vscode_extension_command": "OpenProject", "path": str(target), "dest": "OpenProject.txt"}
    try:
        path = await GETTERS.get("vscode_config")(ctx, dict(spec))
        assert await asyncio.to_thread(Path(path).read_text) == "/home/user/project\n"
    finally:
        await asyncio.to_thread(target.unlink)
    # Nothing written: VS Code's workspace storage is fetched instead, and there is none on this guest.
    assert await GETTERS.get("vscode_config")(ctx, dict(spec)) == ""
