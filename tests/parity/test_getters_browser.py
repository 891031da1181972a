"""Differential tests: the page getters over DevTools and OSWorld's, on one real Chromium (Debian's).

``active_tab_info``, ``page_info``, ``open_tabs_info``, ``pdf_from_url`` and ``info_from_website`` run
on both sides against the same headless Chromium (DevTools on 127.0.0.1), each side through its own
Playwright connection, over pages served on 127.0.0.1: a page changed by its script, a folder that
redirects, a missing page, links that lead to other pages, and an address where nothing listens.
OSWorld's getters get an ``env`` whose ``vm_ip``/``chromium_port`` name that browser; the address bar
both read is the accessibility-tree stand-in of :class:`tests.fakes.chromium.AddressBarGuest`.

One browser and one site serve the module (its cost in CI: Chromium's start, about 2 s, and the
getters' own waits: OSWorld's ``pdf_from_url`` sleeps 3 s, its ``page_info`` 3 s before its retry).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from osw_studio.evaluation.registry import GETTERS, GetterContext
from tests.fakes.chromium import (
    CHROMIUM,
    AddressBarGuest,
    address_bar_tree,
    close_tab,
    open_tab,
    pages,
    run_chromium,
    serve_site,
)
from tests.parity.guest_env import stub_missing
from tests.parity.reference import Reference

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (make setup)")

SITE = {
    "alpha.html": (
        "<html><head><title>Alpha</title></head><body><h1 id='head'>Alpha</h1>"
        "<p class='price' data-sku='A-17'>12.50 EUR</p><a id='next' href='beta.html'>to beta</a>"
        "<script>document.getElementById('head').textContent = 'Alpha, as the script left it';</script>"
        "</body></html>"
    ),
    "beta.html": (
        "<html><head><meta charset='utf-8'><title>Béta · Zürich</title></head><body>"
        "<div class='card'><span class='name'>Zürich</span><a class='more' href='gamma.html'"
        " title='More about Zürich'>more</a></div></body></html>"
    ),
    "gamma.html": (
        "<html><head><title>Gamma</title></head><body><p id='fact' lang='en'>  Facts\n on  gamma </p>"
        "<p id='hidden' style='display:none'>not shown</p></body></html>"
    ),
    "docs/index.html": "<html><head><title>Docs</title></head><body><p>index of docs</p></body></html>",
}

NOWHERE = "http://127.0.0.1:9/nothing.html"
"""An address where nothing listens (the discard port): loading it fails at once."""


@pytest.fixture(scope="module")
def ref(reference: Reference) -> Reference:
    stub_missing(reference)
    return reference


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("site")
    (root / "docs").mkdir()
    with serve_site(root, SITE) as url:
        yield url


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with run_chromium(tmp_path_factory.mktemp("profile")) as url:
        yield url


REFERENCE = """
class _Controller:
    def get_accessibility_tree(self):
        return TREE
class _Env:
    vm_ip = "127.0.0.1"
    vm_machine = "x86_64"  # upstream getters read the guest's architecture
    chromium_port = PORT
    server_port = 9
    cache_dir = CACHE
    current_use_proxy = False
    controller = _Controller()
result = m0.FUNC(_Env(), CONFIG)
"""


def theirs(
    ref: Reference, browser: str, name: str, config: dict[str, Any], address: str = "", cache: Path = Path()
) -> Any:
    code = (
        REFERENCE.replace("TREE", repr(address_bar_tree(address) if address else "<desktop-frame/>"))
        .replace("PORT", repr(urlsplit(browser).port))
        .replace("CACHE", repr(str(cache)))
        .replace("FUNC", "get_" + name)
        .replace("CONFIG", repr(json.loads(json.dumps(config))))
    )
    return ref.exec(code, modules=("desktop_env.evaluators.getters.chrome",))


async def ours(
    browser: str, name: str, config: dict[str, Any], address: str = "", cache: Path = Path()
) -> Any:
    guest = AddressBarGuest(address or None)
    ctx = GetterContext(guest=guest, cache_dir=cache, devtools_url=browser)  # type: ignore[arg-type]
    return await GETTERS.get(name)(ctx, dict(config))


def address(url: str) -> str:
    """The address bar's text for ``url``: Chromium shows it without ``http://``."""
    return url.removeprefix("http://")


@pytest.mark.parametrize("page", ["alpha.html", "missing.html"])
async def test_active_tab_info(ref: Reference, browser: str, site: str, page: str) -> None:
    spec = {"goto_prefix": "http://"}
    bar = address(f"{site}/{page}")
    a = await ours(browser, "active_tab_info", spec, bar)
    b = theirs(ref, browser, "active_tab_info", spec, bar)
    assert a == b
    assert a["url"].startswith(site)  # a page was loaded, not a fallback


@pytest.mark.parametrize("bar", ["", address(NOWHERE)], ids=["no-address-bar", "nothing-listens"])
async def test_active_tab_info_without_a_page(ref: Reference, browser: str, bar: str) -> None:
    spec = {"goto_prefix": "http://"}
    assert await ours(browser, "active_tab_info", spec, bar) is None
    assert theirs(ref, browser, "active_tab_info", spec, bar) is None


@pytest.mark.parametrize("page", ["beta.html", "docs", "NOWHERE"])
async def test_page_info(ref: Reference, browser: str, site: str, page: str) -> None:
    spec = {"url": NOWHERE if page == "NOWHERE" else f"{site}/{page}"}
    a = await ours(browser, "page_info", spec)
    assert a == theirs(ref, browser, "page_info", spec)
    if page == "docs":
        assert a["url"] == f"{site}/docs/" and a["title"] == "Docs"  # the redirect was followed


async def test_open_tabs_info(ref: Reference, browser: str, site: str) -> None:
    opened = [open_tab(browser, f"{site}/{page}") for page in ("beta.html", "alpha.html", "docs")]
    try:
        a = await ours(browser, "open_tabs_info", {})
        b = theirs(ref, browser, "open_tabs_info", {})
        assert a == b
        assert len(a) == len(pages(browser)) >= 3
        assert {"title": "Béta · Zürich", "url": f"{site}/beta.html"} in a
    finally:
        for tab in opened:
            close_tab(browser, tab)


def _pdf_body(path: Path) -> bytes:
    # Chromium stamps each PDF with the time it printed it; the rest must be equal.
    return re.sub(rb"/(CreationDate|ModDate) \(D:[^)]*\)", b"", path.read_bytes())


@pytest.mark.parametrize("page", ["beta.html"])
async def test_pdf_from_url(ref: Reference, browser: str, site: str, tmp_path: Path, page: str) -> None:
    spec = {"path": f"{site}/{page}", "dest": "page.pdf"}
    for side in ("ours", "theirs"):
        (tmp_path / side).mkdir()
    a = await ours(browser, "pdf_from_url", spec, cache=tmp_path / "ours")
    b = theirs(ref, browser, "pdf_from_url", spec, cache=tmp_path / "theirs")
    assert Path(a).relative_to(tmp_path / "ours") == Path(b).relative_to(tmp_path / "theirs")
    printed = _pdf_body(Path(a))
    assert printed.startswith(b"%PDF-") and len(printed) > 500  # a printed page, not the stand-in
    assert printed == _pdf_body(Path(b))


def _website_cases(site: str) -> list[tuple[str, dict[str, Any]]]:
    backups = ["from the task", 1]
    return [
        (
            "texts-and-attributes",
            {
                "url": f"{site}/alpha.html",
                "infos": [
                    {"action": "inner_text", "selector": "#head"},
                    {"selector": "p.price"},
                    {"action": "attribute", "selector": "p.price", "attribute": "data-sku"},
                    {"action": "attribute", "selector": "#head", "attribute": "title"},
                ],
                "backups": backups,
            },
        ),
        (
            "clicks",
            {
                "url": f"{site}/alpha.html",
                "infos": [
                    {"action": "click_and_inner_text", "selector": ["#next", ".card .name"]},
                    {"action": "click_and_attribute", "selector": ["#next", "a.more"], "attribute": "title"},
                    {"action": "click_and_inner_text", "selector": ["#next", "a.more", "#fact"]},
                    {"action": "inner_text", "selector": "#head"},
                ],
                "backups": backups,
            },
        ),
        (
            "hidden-and-whitespace",
            {
                "url": f"{site}/gamma.html",
                "infos": [{"selector": "#fact"}, {"selector": "#hidden"}, {"selector": "html"}],
            },
        ),
        (
            "unknown-action",
            {"url": f"{site}/gamma.html", "infos": [{"action": "hover", "selector": "#fact"}]},
        ),
        ("nothing-listens", {"url": NOWHERE, "infos": [{"selector": "p"}], "backups": backups}),
        ("no-backups", {"url": NOWHERE, "infos": [{"selector": "p"}]}),
    ]


@pytest.mark.parametrize(
    "case",
    ["texts-and-attributes", "clicks", "hidden-and-whitespace", "unknown-action", "nothing-listens"],
)
async def test_info_from_website(ref: Reference, browser: str, site: str, case: str) -> None:
    spec = dict(_website_cases(site))[case]
    before = {tab["id"] for tab in pages(browser)}
    try:
        a = await ours(browser, "info_from_website", spec)
        assert a == theirs(ref, browser, "info_from_website", spec)
    finally:
        # OSWorld's getter leaves its tab open: close it so the other cases see the browser as it was.
        for tab in pages(browser):
            if tab["id"] not in before:
                close_tab(browser, tab["id"])
    if case == "clicks":
        assert a == ["Zürich", "More about Zürich", "Facts on gamma", "Alpha, as the script left it"]


def test_the_getters_compared_here_are_listed_as_differential_tested() -> None:
    from osw_studio.evaluation.parity import is_differential_tested

    compared = ("active_tab_info", "page_info", "open_tabs_info", "pdf_from_url", "info_from_website")
    assert all(is_differential_tested("getter", name) for name in compared)
