"""The browser getters against a real Chromium (Debian's) over DevTools, on pages served on 127.0.0.1.

One headless Chromium and one page server serve the whole module; each test opens the tabs it needs and
closes them again, so the tests do not depend on each other's order.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader

from osw_studio.envs.guest_client import GuestClient
from osw_studio.envs.local import free_port
from osw_studio.evaluation.registry import GETTERS, METRICS, GetterContext
from tests.fakes.chromium import CHROMIUM, close_tab, open_tab, pages, run_chromium, serve_site

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (make setup)")

PAGES = {
    "index.html": "<html><head><title>Home page</title></head><body><h1 id='head'>Welcome</h1>"
    "<a id='next' href='/second.html'>next</a><span class='price' data-value='42'>42 EUR</span>"
    "</body></html>",
    "second.html": "<html><head><title>Second page</title></head>"
    "<body><p id='text'>The second one</p></body></html>",
    "report.html": "<html><head><title>Report</title></head><body><p>Quarterly totals 1234</p></body></html>",
    # a page whose network never goes idle: it asks for the missing /poll every 100 ms
    "busy.html": "<html><head><title>Busy</title></head><body>"
    "<script>setInterval(() => fetch('/poll?' + Date.now()), 100);</script></body></html>",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A static site on 127.0.0.1."""
    with serve_site(tmp_path_factory.mktemp("site"), PAGES) as url:
        yield url


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A headless Chromium whose DevTools endpoint listens on 127.0.0.1; its URL."""
    with run_chromium(tmp_path_factory.mktemp("chromium-profile")) as url:
        yield url


@pytest.fixture
async def ctx(browser: str, tmp_path: Path) -> AsyncIterator[GetterContext]:
    # The page getters talk to the browser only; the guest is never asked (a closed port proves it).
    async with GuestClient(f"http://127.0.0.1:{free_port()}") as guest:
        yield GetterContext(guest=guest, cache_dir=tmp_path / "cache", devtools_url=browser)


@pytest.fixture
def tabs(browser: str) -> Iterator[list[str]]:
    """Open tabs by URL (``tabs.append(url)`` after opening); closes every tab a test opened."""
    before = {t["id"] for t in pages(browser)}
    opened: list[str] = []
    yield opened
    for tab in pages(browser):
        if tab["id"] not in before:
            close_tab(browser, tab["id"])


async def get(ctx: GetterContext, spec: dict[str, Any]) -> Any:
    spec = dict(spec)
    return await GETTERS.get(str(spec.pop("type")))(ctx, spec)


async def test_open_tabs_info_lists_every_tab_with_its_title(
    ctx: GetterContext, browser: str, site: str, tabs: list[str]
) -> None:
    open_tab(browser, f"{site}/index.html")
    open_tab(browser, f"{site}/second.html")
    info = await get(ctx, {"type": "open_tabs_info"})
    mine = [t for t in info if t["url"].startswith(site)]
    assert sorted(mine, key=lambda t: t["url"]) == [
        {"title": "Home page", "url": f"{site}/index.html"},
        {"title": "Second page", "url": f"{site}/second.html"},
    ]
    urls = [t["url"] for t in info]
    rule = {"type": "url", "urls": urls}
    assert METRICS.get("is_expected_tabs")(info, rule) == 1.0
    assert METRICS.get("is_expected_tabs")(info, {"type": "url", "urls": urls[:-1]}) == 0.0


async def test_a_tab_that_never_settles_is_listed_with_osworlds_error_title(
    ctx: GetterContext, browser: str, site: str, tabs: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # OSWorld waits 30 s for each tab; its `except TimeoutError` does not catch Playwright's timeout,
    # so such a tab gets its "Error encountered" title (1 s here, to keep the test short).
    from osw_studio.evaluation.getters import chrome

    monkeypatch.setattr(chrome, "OPEN_TABS_TIMEOUT_MS", 1_000)
    open_tab(browser, f"{site}/busy.html")
    open_tab(browser, f"{site}/second.html")
    info = await get(ctx, {"type": "open_tabs_info"})
    assert {"title": "Error encountered", "url": f"{site}/busy.html"} in info
    assert {"title": "Second page", "url": f"{site}/second.html"} in info


async def test_page_info_loads_a_page_in_a_new_tab_and_closes_it(
    ctx: GetterContext, browser: str, site: str, tabs: list[str]
) -> None:
    count = len(pages(browser))
    info = await get(ctx, {"type": "page_info", "url": f"{site}/index.html"})
    assert info["title"] == "Home page"
    assert info["url"] == f"{site}/index.html"
    assert '<h1 id="head">Welcome</h1>' in info["content"]
    assert len(pages(browser)) == count  # the getter's own tab is gone again
    assert METRICS.get("is_expected_active_tab")(info, {"type": "url", "url": f"{site}/index.html"}) == 1.0


async def test_pdf_from_url_prints_the_page(ctx: GetterContext, site: str) -> None:
    path = await get(ctx, {"type": "pdf_from_url", "path": f"{site}/report.html", "dest": "report.pdf"})
    assert path == str(ctx.cache_dir / "report.pdf")
    text = "".join(page.extract_text() for page in PdfReader(path).pages)
    assert "Quarterly totals 1234" in text


async def test_info_from_website_reads_texts_attributes_and_follows_clicks(
    ctx: GetterContext, site: str, tabs: list[str]
) -> None:
    spec = {
        "type": "info_from_website",
        "url": f"{site}/index.html",
        "infos": [
            {"action": "inner_text", "selector": "#head"},
            {"action": "attribute", "selector": ".price", "attribute": "data-value"},
            {"action": "click_and_inner_text", "selector": ["#next", "#text"]},
            {"action": "inner_text", "selector": "#head"},  # back on the first page
        ],
        "backups": ["fallback"],
    }
    assert await get(ctx, spec) == ["Welcome", "42", "The second one", "Welcome"]


async def test_info_from_website_falls_back_to_the_backups(ctx: GetterContext, site: str) -> None:
    spec = {
        "type": "info_from_website",
        "url": f"{site}/index.html",
        "infos": [{"action": "scroll_and_read", "selector": "#head"}],
        "backups": ["fallback"],
    }
    assert await get(ctx, spec) == ["fallback"]


async def test_an_unreachable_browser_gives_osworlds_empty_values(tmp_path: Path) -> None:
    async with GuestClient(f"http://127.0.0.1:{free_port()}") as guest:
        dead = GetterContext(
            guest=guest, cache_dir=tmp_path / "cache", devtools_url=f"http://127.0.0.1:{free_port()}"
        )
        started = time.monotonic()
        assert await get(dead, {"type": "open_tabs_info"}) == []
        page = await get(dead, {"type": "page_info", "url": "http://127.0.0.1:9/x"})
        assert page == {"title": "Connection failed", "url": "http://127.0.0.1:9/x", "content": ""}
        pdf = await get(dead, {"type": "pdf_from_url", "path": "http://127.0.0.1:9/x", "dest": "x.pdf"})
        assert await asyncio.to_thread(Path(pdf).read_text) == "%PDF-1.4\n%EOF\n"
        assert time.monotonic() - started < 60


async def test_getters_run_side_by_side_on_one_browser(
    ctx: GetterContext, site: str, tabs: list[str]
) -> None:
    first, second = await asyncio.gather(
        get(ctx, {"type": "page_info", "url": f"{site}/index.html"}),
        get(ctx, {"type": "page_info", "url": f"{site}/second.html"}),
    )
    assert (first["title"], second["title"]) == ("Home page", "Second page")
