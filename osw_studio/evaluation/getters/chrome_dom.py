"""``active_tab_html_parse``: values read out of the live page of the guest browser's active tab.

The active tab's URL comes from the address bar (as for the other URL getters); the open tab with that
URL is found over the DevTools protocol and queried in place (its DOM as the user left it, scripts and
form input included), as OSWorld's getter does. ``category`` says how:

- ``class``: texts of elements by class name: ``class_singleObject`` (the first), ``class_multiObject``
  (by rank), ``class_multiObject_child`` (the first element's own text nodes, by rank),
  ``class_multiObject_only_child`` (each element's ``h3``, by rank), ``class_multiObject_search_exist``
  (whether each text is present, and ``is_other_exist``);
- ``label``: the text of the first element containing each label text;
- ``xpath``: the text of the first element at each XPath; ``input``: the value of each input field;
- ``class&url``: which expected texts the elements of a class (or their ``li.catAllProducts`` spans)
  show, whether others are shown, and which words the URL contains.

A missing element gives ``""`` (or ``False``), as in OSWorld; no tab with the URL gives ``{}``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from osw_studio.core.errors import GuestError
from osw_studio.evaluation.getters.chrome import (
    PAGE_TIMEOUT_MS,
    devtools_url,
    get_active_url_from_access_tree,
)
from osw_studio.evaluation.registry import GetterContext, getter

if TYPE_CHECKING:
    from playwright.async_api import Browser, Page

log = logging.getLogger(__name__)

_DIRECT_TEXT = """(node) => Array.from(node.childNodes)
    .filter(n => n.nodeType === Node.TEXT_NODE).map(n => n.textContent.trim()).filter(Boolean)"""


def _same_page(a: str, b: str) -> bool:
    return unquote(a).rstrip("/") == unquote(b).rstrip("/")


async def _find_tab(browser: Browser, url: str) -> Page | None:
    # As in OSWorld: the first matching tab of each browser context, the last context's winning.
    found = None
    for context in browser.contexts:
        for page in context.pages:
            try:
                await page.wait_for_load_state("networkidle", timeout=PAGE_TIMEOUT_MS)
                if not page.is_closed() and _same_page(page.url, url):
                    found = page
                    break
            except Exception as exc:  # a tab that navigates or closes meanwhile is skipped
                log.debug("skipping a tab: %s", exc)
    return found


async def _texts(page: Page, selector: str) -> list[str]:
    texts = []
    try:
        for element in await page.query_selector_all(selector):
            text = await element.text_content()
            if text is None:
                return []  # OSWorld's list comprehension fails as a whole on such a node
            texts.append(text.strip())
    except Exception:
        return []
    return texts


async def _direct_texts(page: Page, selector: str) -> list[str]:
    try:
        elements = await page.query_selector_all(selector)
        return list(await elements[0].evaluate(_DIRECT_TEXT)) if elements else []
    except Exception:
        return []


async def _child_texts(page: Page, selector: str, child: str, inner: bool) -> list[str]:
    texts = []
    try:
        for element in await page.query_selector_all(selector):
            found = await element.query_selector(child)
            if found is not None:
                text = await found.inner_text() if inner else await found.text_content()
                if text is None:
                    return []
                texts.append(text.strip())
    except Exception:
        return []
    return texts


def _by_rank(out: dict[str, Any], texts: list[str], ranks: dict[str, str]) -> None:
    for rank, key in ranks.items():
        index = int(rank)
        out[key] = texts[index] if len(texts) > index else ""


async def _class(page: Page, spec: dict[str, Any], out: dict[str, Any]) -> None:
    sources: list[tuple[str, Callable[[str], Awaitable[list[str]]]]] = [
        ("class_multiObject", lambda s: _texts(page, s)),
        ("class_multiObject_child", lambda s: _direct_texts(page, s)),
        ("class_multiObject_only_child", lambda s: _child_texts(page, s, "h3", inner=False)),
    ]
    for option, read in sources:
        for name, ranks in spec.get(option, {}).items():
            _by_rank(out, await read("." + name), ranks)
    for name, wanted in spec.get("class_multiObject_search_exist", {}).items():
        texts = await _texts(page, "." + name)
        for item in wanted:
            if item != "is_other_exist":
                out[item] = item in texts
        if "is_other_exist" in wanted:
            if any(text not in wanted for text in texts):
                out["is_other_exist"] = True
            out.setdefault("is_other_exist", False)
    for name, key in spec.get("class_singleObject", {}).items():
        texts = await _texts(page, "." + name)
        out[key] = texts[0] if texts else ""


async def _first_text(page: Page, selector: str) -> str:
    try:
        locator = page.locator(selector)
        if await locator.count() == 0:
            return ""
        text = await locator.first.text_content()
        return text.strip() if text else ""
    except Exception:
        return ""


async def _xpath(page: Page, spec: dict[str, Any], out: dict[str, Any]) -> None:
    for xpath, key in spec.get("xpathObject", {}).items():
        text = ""
        try:
            if await page.locator(f"xpath={xpath}").count() > 0:
                text = await _first_text(page, f"xpath={xpath}")
            else:
                text = await _first_text(page, xpath)
        except Exception:
            text = ""
        out[key] = text


async def _input(page: Page, spec: dict[str, Any], out: dict[str, Any]) -> None:
    for xpath, key in spec.get("inputObject", {}).items():
        try:
            inputs = page.locator(f"xpath={xpath}")
            value = await inputs.first.input_value() if await inputs.count() > 0 else ""
            out[key] = value.strip() if value else ""
        except Exception:
            out[key] = ""


async def _label(page: Page, spec: dict[str, Any], out: dict[str, Any]) -> None:
    for label, key in spec.get("labelObject", {}).items():
        try:
            text = await page.locator(f"text={label}").first.text_content()
            out[key] = text.strip() if text else ""
        except Exception:
            out[key] = ""


def _shown(out: dict[str, Any], texts: list[str], wanted: list[str]) -> None:
    for item in wanted:
        if any(item.lower() == text.lower() for text in texts):
            out[item.lower()] = True
    if any(all(text.lower() not in item.lower() for item in wanted) for text in texts):
        out["is_other_exist"] = True
    out.setdefault("is_other_exist", False)


async def _class_and_url(page: Page, spec: dict[str, Any], out: dict[str, Any]) -> None:
    for name, wanted in spec.get("class_multiObject", {}).items():
        _shown(out, await _texts(page, "." + name), wanted)
    for name, wanted in spec.get("class_multiObject_li", {}).items():
        _shown(out, await _child_texts(page, "." + name + " li.catAllProducts", "span", inner=True), wanted)
    url = page.url.lower()
    for word in spec.get("url_include_expected", []):
        out.setdefault(word.lower(), word.lower() in url)
    for word, value in spec.get("url_include_expected_multichoice", {}).items():
        out.setdefault(value.lower(), word.lower() in url)


_CATEGORIES = {
    "class": _class,
    "label": _label,
    "xpath": _xpath,
    "input": _input,
    "class&url": _class_and_url,
}


@getter("active_tab_html_parse")
async def get_active_tab_html_parse(ctx: GetterContext, spec: dict[str, Any]) -> dict[str, Any] | None:
    """Values read from the active tab's page (see the module docs); None without an active tab URL.

    Raises:
        GuestError: The guest's browser cannot be reached over its DevTools endpoint.
    """
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import async_playwright

    url = await get_active_url_from_access_tree(ctx, spec)
    if url is None:
        return None
    out: dict[str, Any] = {}
    endpoint = await devtools_url(ctx)
    async with async_playwright() as playwright:
        try:
            browser = await playwright.chromium.connect_over_cdp(endpoint, timeout=30_000)
        except PlaywrightError as exc:
            raise GuestError(
                f"cannot reach the guest's browser to read the active tab: {exc.message.splitlines()[0]}",
                where=endpoint,
                hint="the task's browser must run with --remote-debugging-port and the port be reachable",
            ) from None
        try:
            page = await _find_tab(browser, url)
            if page is None:
                return {}
            read = _CATEGORIES.get(str(spec.get("category")))
            if read is not None:
                await read(page, spec, out)
        finally:
            await browser.close()
    return out
