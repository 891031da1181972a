"""Browser getters: the active tab's URL from the accessibility tree, and pages over the DevTools protocol.

The URL getters read the address bar out of the guest's accessibility tree, as OSWorld does (a CDP
client cannot tell which tab is active). The page getters drive the guest's browser through its DevTools
endpoint with Playwright's ``connect_over_cdp`` (imported lazily; no browser is ever downloaded): the
browser is the guest's own, started by the task with ``--remote-debugging-port``.

The endpoint is :attr:`GetterContext.devtools_url`, by default the guest's host on port 9222 (OSWorld's
``chromium_port``). Values and fallbacks are OSWorld's: a browser that cannot be reached gives ``None``
(the active tab) or ``[]`` (the open tabs), and the metric scores that.
"""

from __future__ import annotations

import itertools
import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlparse

import lxml.etree
from lxml.cssselect import CSSSelector

from osw_studio.evaluation.registry import GetterContext, getter
from osw_studio.guest.atspi_dump import NAMESPACES

if TYPE_CHECKING:
    from playwright.async_api import Browser, Page, Playwright

log = logging.getLogger(__name__)

DEVTOOLS_PORT = 9222
"""OSWorld's ``chromium_port``: where the guest's browser listens for DevTools clients."""

PAGE_TIMEOUT_MS = 60_000
"""How long a page may take to settle (OSWorld's 60 s)."""

_ADDRESS_BARS = (
    # OSWorld reads Google Chrome's address bar on x86 machines and Chromium's on ARM ones; a guest
    # runs one of the two, so both are tried, Chrome first.
    "application[name=Google\\ Chrome] entry[name=Address\\ and\\ search\\ bar]",
    "application[name=Chromium] entry[name=Address\\ and\\ search\\ bar]",
)


async def devtools_url(ctx: GetterContext) -> str:
    """The guest browser's DevTools endpoint (port 9222 of the guest, unless the context names one)."""
    return await ctx.service_url(DEVTOOLS_PORT, ctx.devtools_url)


def address_bar_url(tree: str, goto_prefix: str = "https://") -> str | None:
    """The address bar's text with ``goto_prefix`` in front, or None when there is no address bar.

    >>> xml = ('<desktop-frame><application name="Google Chrome"><entry name="Address and search bar">'
    ...        'example.com/a?q=1</entry></application></desktop-frame>')
    >>> address_bar_url(xml)
    'https://example.com/a?q=1'
    >>> address_bar_url("<desktop-frame/>") is None
    True
    """
    try:
        root = lxml.etree.fromstring(tree.encode("utf-8"))
    except (ValueError, lxml.etree.XMLSyntaxError):
        return None
    for selector in _ADDRESS_BARS:
        elements = CSSSelector(selector, namespaces=NAMESPACES)(root)
        if elements:
            if not elements[-1].text:
                return None
            return f"{goto_prefix}{elements[0].text}"
    return None


@getter("active_url_from_accessTree")
async def get_active_url_from_access_tree(ctx: GetterContext, spec: dict[str, Any]) -> str | None:
    """The active tab's URL, read from the address bar (``goto_prefix``, default ``https://``, in front)."""
    tree = await ctx.guest.accessibility_tree()
    if tree is None:
        return None
    return address_bar_url(tree, spec.get("goto_prefix", "https://"))


def parse_query(url: str, spec: dict[str, Any]) -> dict[str, Any]:
    """The first value of each of ``parse_keys`` in the URL's query (``""`` when absent).

    ``replace`` renames keys; ``split_list`` splits every value at commas.

    >>> spec = {"parse_keys": ["q", "tbs", "n"], "replace": {"q": "query"}}
    >>> parse_query("https://x.org/s?q=coffee&tbs=a,b", spec)
    {'tbs': 'a,b', 'n': '', 'query': 'coffee'}
    """
    params = parse_qs(urlparse(url).query)
    values: dict[str, Any] = {key: params.get(key, [""])[0] for key in spec["parse_keys"]}
    for old, new in spec.get("replace", {}).items():
        values[new] = values.pop(old)
    if spec.get("split_list", False):
        values = {key: value.split(",") for key, value in values.items()}
    return values


@getter("active_tab_url_parse")
async def get_active_tab_url_parse(ctx: GetterContext, spec: dict[str, Any]) -> dict[str, Any] | None:
    """Query parameters of the active tab's URL (see :func:`parse_query`), or None without a URL."""
    url = await get_active_url_from_access_tree(ctx, spec)
    return None if url is None else parse_query(url, spec)


def url_part(url: str, spec: dict[str, Any]) -> Any:
    """The ``partIndex``-th ``/``-separated part of ``url`` as a string or ``{key: part}``, or None.

    >>> spec = {"partIndex": 4, "needDeleteId": True, "returnType": "string"}
    >>> url_part("https://a.org/x/item-42?id=7", spec)
    'item-42'
    >>> url_part("https://a.org/x", {"partIndex": 9, "returnType": "string"}) is None
    True
    """
    try:
        index = int(spec["partIndex"])
    except (ValueError, TypeError):
        return None
    parts = url.split("/")
    if index >= len(parts):
        return None
    part = parts[index]
    if spec.get("needDeleteId", False):
        part = part.split("?")[0]
    if spec["returnType"] == "string":
        return part
    if spec["returnType"] == "json":
        return {spec["key"]: part}
    return None


@getter("url_dashPart")
async def get_url_dash_part(ctx: GetterContext, spec: dict[str, Any]) -> Any:
    """One ``/``-separated part of the active tab's URL (see :func:`url_part`)."""
    url = await get_active_url_from_access_tree(ctx, spec)
    return None if url is None else url_part(url, spec)


_DISCOUNT_50 = "50_PERCENT_ off & more"


def product_path_facets(url: str, parse_keys: list[str]) -> dict[str, Any]:
    """Facets of a shop's product-listing path (OSWorld's Macy's parser).

    The path holds ``key1,key2/value1,value2`` segments; ``mens_clothing``, ``shirts`` and
    ``short_sleeve`` say whether the path names them; ``Price_discount_range`` is reduced to whether only
    the 50 % band is chosen.

    >>> product_path_facets("https://www.macys.com/shop/mens-clothing/shirts/Sleeve_length,Men_regular_size_t/"
    ...     "Short%20Sleeve,M", ["Men_regular_size_t"])
    {'mens_clothing': True, 'shirts': True, 'short_sleeve': True, 'Men_regular_size_t': 'M'}
    """
    path = unquote(urlparse(url).path)
    segments = path.strip("/").split("/")
    facets: dict[str, Any] = {}
    shirts = "shirts" in path
    short_sleeve = "short-sleeve" in path
    for here, after in itertools.pairwise(segments):
        if "," in here and "," in after:
            for key, value in zip(
                [k.strip() for k in here.split(",")], [v.strip() for v in after.split(",")], strict=False
            ):
                if key == "Price_discount_range":
                    facets[key] = [item.strip() for item in value.split("|")] if value else None
                else:
                    facets[key] = value or None
                shirts = shirts or (key == "Product_department" and value in ("shirts", "Shirts", "Shirt"))
                short_sleeve = short_sleeve or (
                    key == "Sleeve_length" and value in ("short-sleeve", "Short Sleeve")
                )
            break
    for key in ("Men_regular_size_t", "Price_discount_range"):
        facets.setdefault(key, None)
    result: dict[str, Any] = {
        "mens_clothing": True if "mens-clothing" in path else None,
        "shirts": shirts or None,
        "short_sleeve": short_sleeve or None,
    }
    for key in parse_keys:
        if key not in facets:
            continue
        if key == "Price_discount_range":
            bands = facets[key]
            only_50 = (
                bands is not None
                and _DISCOUNT_50 in bands
                and "30_PERCENT_ off & more" not in bands
                and "20_PERCENT_ off & more" not in bands
            )
            result[key] = _DISCOUNT_50 if only_50 else f"not_{_DISCOUNT_50}"
        else:
            result[key] = facets[key]
    return result


@getter("url_path_parse")
async def get_url_path_parse(ctx: GetterContext, spec: dict[str, Any]) -> dict[str, Any] | None:
    """Facets of the active tab's product-listing path (see :func:`product_path_facets`)."""
    url = await get_active_url_from_access_tree(ctx, spec)
    return None if url is None else product_path_facets(url, list(spec["parse_keys"]))


# --- over the DevTools protocol ---------------------------------------------------------------------


async def _connect(playwright: Playwright, ctx: GetterContext) -> Browser:
    return await playwright.chromium.connect_over_cdp(await devtools_url(ctx), timeout=30_000)


OPEN_TABS_TIMEOUT_MS = 30_000
"""How long each open tab may take to settle when the tabs are listed (OSWorld's 30 s)."""

SETTLE_FAILED = "Error encountered"
"""The title OSWorld gives a page that did not settle or could not be read. (Its ``Load timeout`` title
is never given: Playwright's timeout is not Python's ``TimeoutError``, which is what it catches.)"""


async def _settled(page: Page, timeout_ms: float = PAGE_TIMEOUT_MS, content: bool = True) -> dict[str, str]:
    """Title, URL (and HTML) of a page once its network is idle; :data:`SETTLE_FAILED` as the title else."""
    from playwright.async_api import Error as PlaywrightError

    try:
        await page.wait_for_load_state("networkidle", timeout=timeout_ms)
        info = {"title": await page.title(), "url": page.url}
    except PlaywrightError as exc:
        log.warning("page %s did not settle: %s", page.url, exc)
        info = {"title": SETTLE_FAILED, "url": page.url}
    if content:
        info["content"] = await page.content()
    return info


async def visit(ctx: GetterContext, url: str) -> dict[str, str] | None:
    """Open ``url`` in a new tab of the guest's browser; its title, final URL and HTML (None on failure)."""
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import async_playwright

    try:
        async with async_playwright() as playwright:
            browser = await _connect(playwright, ctx)
            try:
                page = await browser.new_page()
                page.set_default_timeout(PAGE_TIMEOUT_MS)
                await page.goto(url, wait_until="networkidle", timeout=PAGE_TIMEOUT_MS)
                info = await _settled(page)
                await page.close()
                return info
            finally:
                await browser.close()
    except PlaywrightError as exc:
        log.warning("cannot read %s through the guest's browser: %s", url, exc)
        return None


@getter("active_tab_info")
async def get_active_tab_info(ctx: GetterContext, spec: dict[str, Any]) -> dict[str, str] | None:
    """``{"title", "url", "content"}`` of the active tab's URL loaded again in a new tab, or None."""
    url = await get_active_url_from_access_tree(ctx, spec)
    if url is None:
        return None
    return await visit(ctx, url)


@getter("page_info")
async def get_page_info(ctx: GetterContext, spec: dict[str, Any]) -> dict[str, str]:
    """``{"title", "url", "content"}`` of ``url`` loaded in the guest's browser."""
    info = await visit(ctx, spec["url"])
    return info if info is not None else {"title": "Connection failed", "url": spec["url"], "content": ""}


@getter("open_tabs_info")
async def get_open_tabs_info(ctx: GetterContext, spec: dict[str, Any]) -> list[dict[str, str]]:
    """``{"title", "url"}`` of every open tab, in the browser's order (``[]`` when it cannot be reached)."""
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import async_playwright

    tabs: list[dict[str, str]] = []
    try:
        async with async_playwright() as playwright:
            browser = await _connect(playwright, ctx)
            try:
                for context in browser.contexts:
                    for page in context.pages:
                        tabs.append(await _settled(page, OPEN_TABS_TIMEOUT_MS, content=False))
            finally:
                await browser.close()
    except PlaywrightError as exc:
        log.warning("cannot list the tabs of the guest's browser: %s", exc)
        return []
    return tabs


@getter("pdf_from_url")
async def get_pdf_from_url(ctx: GetterContext, spec: dict[str, Any]) -> str:
    """``path`` printed to PDF by the guest's browser, saved as ``dest`` (an empty PDF when that fails)."""
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import async_playwright

    target = ctx.cache_dir / spec["dest"]
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        async with async_playwright() as playwright:
            browser = await _connect(playwright, ctx)
            try:
                page = await browser.new_page()
                page.set_default_timeout(PAGE_TIMEOUT_MS)
                await page.goto(spec["path"], wait_until="networkidle", timeout=PAGE_TIMEOUT_MS)
                await page.pdf(path=str(target))
                await page.close()
            finally:
                await browser.close()
    except PlaywrightError as exc:
        log.warning("cannot print %s to PDF: %s", spec["path"], exc)
        target.write_text("%PDF-1.4\n%EOF\n")  # OSWorld's stand-in: the metric then compares an empty PDF
    return str(target)


@getter("info_from_website")
async def get_info_from_website(ctx: GetterContext, spec: dict[str, Any]) -> Any:
    """Texts or attributes of elements of ``url`` (``infos``), or the task's ``backups`` when that fails."""
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import async_playwright

    url = spec["url"]
    infos: list[Any] = []
    try:
        async with async_playwright() as playwright:
            browser = await _connect(playwright, ctx)
            try:
                page = await browser.contexts[0].new_page()
                await page.goto(url)
                await page.wait_for_load_state("load")
                for info in spec.get("infos", []):
                    if page.url != url:
                        await page.goto(url)
                        await page.wait_for_load_state("load")
                    action = info.get("action", "inner_text")
                    selectors = info["selector"]
                    if action in ("click_and_inner_text", "click_and_attribute"):
                        for selector in selectors[:-1]:
                            link = await page.wait_for_selector(selector, state="attached", timeout=10_000)
                            assert link is not None
                            await link.click()
                            await page.wait_for_load_state("load")
                        selectors = selectors[-1]
                    elif action not in ("inner_text", "attribute"):
                        raise ValueError(f"info_from_website action {action!r} is not defined")
                    element = await page.wait_for_selector(selectors, state="attached", timeout=10_000)
                    assert element is not None
                    if action.endswith("inner_text"):
                        infos.append(await element.inner_text())
                    else:
                        infos.append(await element.get_attribute(info["attribute"]))
                await page.close()
            finally:
                await browser.close()
    except (PlaywrightError, ValueError, KeyError, IndexError, AssertionError) as exc:
        log.warning("cannot read %s through the guest's browser: %s", url, exc)
        return spec.get("backups")
    return infos
