"""Desktop profiles: the OSWorld desktop's HOME, settings and launchers, and Chromium as google-chrome."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
import urllib.request
from pathlib import Path
from xml.etree import ElementTree

import httpx
import pytest

from osw_studio.core.errors import GuestError
from osw_studio.envs.desktops import HOME_FOLDERS, get_profile
from osw_studio.envs.local import free_port
from tests.fakes.desktop import start, start_xvfb, stop


def test_the_osworld_profile_arranges_home_as_osworld_tasks_expect(tmp_path: Path) -> None:
    home, bin_dir = tmp_path / "home", tmp_path / "bin"
    get_profile("osworld").prepare(home, bin_dir)
    assert all((home / name).is_dir() for name in HOME_FOLDERS)
    xcu = ElementTree.parse(home / ".config/libreoffice/4/user/registrymodifications.xcu").getroot()
    props = {p.get("{http://openoffice.org/2001/registry}name") for p in xcu.iter("prop")}
    assert "WarnAlienFormat" in props  # saving .xlsx/.docx/.pptx does not stop to ask
    vlcrc = (home / ".config/vlc/vlcrc").read_text()
    assert (
        "extraintf=http" in vlcrc and "\nhttp-port=8080" in vlcrc and "[lua]\nhttp-password=password" in vlcrc
    )
    chrome = bin_dir / "google-chrome"
    assert os.access(chrome, os.X_OK)
    assert '--user-data-dir="$HOME/.config/google-chrome"' in chrome.read_text()


def test_the_studio_profile_only_makes_the_folders(tmp_path: Path) -> None:
    get_profile("studio").prepare(tmp_path / "home", tmp_path / "bin")
    assert sorted(p.name for p in (tmp_path / "home").iterdir()) == sorted(HOME_FOLDERS)
    assert not (tmp_path / "bin").exists()


def test_an_unknown_desktop_lists_the_known_ones() -> None:
    with pytest.raises(GuestError, match="choose one of: studio, osworld"):
        get_profile("ubuntu")


def _needs(program: str) -> None:
    if shutil.which(program) is None:
        message = f"{program} is not installed (make setup-osworld)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@pytest.mark.xvfb
def test_google_chrome_starts_chromium_with_devtools_and_chrome_s_profile(tmp_path: Path) -> None:
    _needs("chromium")
    home, bin_dir = tmp_path / "home", tmp_path / "bin"
    get_profile("osworld").prepare(home, bin_dir)
    xvfb, display = start_xvfb((1280, 720))
    port = free_port()
    env = {**os.environ, "HOME": str(home), "DISPLAY": display, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    browser = start(["google-chrome", f"--remote-debugging-port={port}", "about:blank"], env=env)
    try:
        version: dict[str, str] = {}
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not version:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/version", timeout=2) as reply:
                    version = json.load(reply)
            except OSError:
                time.sleep(0.2)
        assert "Chrome/" in version.get("Browser", ""), version
        assert version.get("webSocketDebuggerUrl", "").startswith(f"ws://127.0.0.1:{port}/")
        assert (home / ".config/google-chrome/Default").is_dir()
    finally:
        stop(browser)
        stop(xvfb)


@pytest.mark.xvfb
async def test_an_osworld_desktop_runs_google_chrome_and_the_host_reaches_its_devtools() -> None:
    _needs("chromium")
    _needs("socat")
    from osw_studio.envs.local import LocalProvider

    env = await LocalProvider(screen=(1280, 720), desktop="osworld").create()
    try:
        listing = await env.guest.execute(["ls", "/home/user"], shell=False)
        assert {"Desktop", "Documents", "Downloads"} <= set(listing.output.split())
        # As OSWorld's Chrome tasks start it: google-chrome on 1337, socat from 9222.
        await env.guest.launch(["google-chrome", "--remote-debugging-port=1337"])
        await env.guest.launch("socat tcp-listen:9222,fork tcp:localhost:1337", shell=True)
        url = await env.guest_port_url(9222)
        assert url.startswith("http://127.0.0.1:") and not url.endswith(":9222")
        version: dict[str, str] = {}
        async with httpx.AsyncClient(timeout=2) as http:
            deadline = time.monotonic() + 40
            while time.monotonic() < deadline and not version:
                try:
                    version = (await http.get(f"{url}/json/version")).json()
                except (httpx.HTTPError, ValueError):
                    await asyncio.sleep(0.3)
        assert "Chrome/" in version.get("Browser", ""), version
        assert await env.guest_port_url(9222) == url  # one forwarder per port
    finally:
        await env.close()


async def test_a_desktop_whose_programs_are_missing_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from osw_studio.envs.local import LocalProvider

    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(GuestError, match=r"make setup-osworld"):
        await LocalProvider(desktop="osworld").create()
