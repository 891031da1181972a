"""A headless Chromium (Debian's) with its DevTools endpoint on 127.0.0.1, and a static site to show it."""

from __future__ import annotations

import http.server
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from osw_studio.envs.local import free_port
from tests.fakes.desktop import start, stop

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
"""The browser, or None where it is not installed."""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serve_site(root: Path, pages: dict[str, str]) -> Iterator[str]:
    """Serve ``pages`` (name -> HTML) from ``root`` on 127.0.0.1; yields the base URL."""
    for name, text in pages.items():
        (root / name).write_text(text)

    def handler(*args: Any, **kwargs: Any) -> _Quiet:
        return _Quiet(*args, directory=str(root), **kwargs)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def run_chromium(profile: Path) -> Iterator[str]:
    """Start a headless Chromium with ``profile``; yields its DevTools URL; stops it (its process group)."""
    assert CHROMIUM is not None
    port = free_port()
    process = start(
        [
            CHROMIUM,
            "--headless=new",
            "--no-sandbox",  # tests run as root, where Chromium's sandbox refuses to start
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--remote-debugging-address=127.0.0.1",
            f"--remote-debugging-port={port}",
            f"--user-data-dir={profile}",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{url}/json/version", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert process.poll() is None, "chromium exited before its DevTools port answered"
            assert time.monotonic() < deadline, "chromium's DevTools port did not answer within 30 s"
            time.sleep(0.2)
        yield url
    finally:
        stop(process)


def pages(browser: str) -> list[dict[str, Any]]:
    """The browser's open tabs (DevTools ``/json/list`` entries of type page)."""
    return [t for t in httpx.get(f"{browser}/json/list").json() if t.get("type") == "page"]


def open_tab(browser: str, url: str) -> str:
    """Open ``url`` in a new tab; its DevTools id."""
    response = httpx.put(f"{browser}/json/new?{url}")
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def close_tab(browser: str, tab_id: str) -> None:
    """Close the tab ``tab_id``."""
    httpx.get(f"{browser}/json/close/{tab_id}")


def address_bar_tree(address: str) -> str:
    """An accessibility tree (OSWorld's XML) with only Google Chrome's address bar showing ``address``."""
    return (
        '<desktop-frame><application name="Google Chrome"><entry name="Address and search bar">'
        f"{address.replace('&', '&amp;')}</entry></application></desktop-frame>"
    )


class AddressBarGuest:
    """Stands in for the guest's accessibility tree only (the address bar); pages come from the browser.

    Args:
        address: The address bar's text, or None for a desktop without a browser window.
    """

    def __init__(self, address: str | None) -> None:
        self.address = address
        self.base_url = "http://127.0.0.1:9"

    async def accessibility_tree(self) -> str:
        """The tree with the address bar, or an empty desktop."""
        return "<desktop-frame/>" if self.address is None else address_bar_tree(self.address)
