"""Browser metrics: tabs, the active URL, bookmarks, cookies, history, desktop shortcuts, font size.

URLs compare as OSWorld compares them (:func:`same_site_url`): the scheme is lower-cased, a bare host
gets ``http://``, a lone ``www`` and the public suffix are dropped (``airbnb.com`` and ``airbnb.com.sg``
are the same site) and a path of ``/`` is empty. The public suffix list is the one bundled with
``tldextract``; nothing is fetched.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from itertools import product
from typing import Any
from urllib.parse import ParseResult, urlparse, urlunparse

from osw_studio.core import untrusted_regex
from osw_studio.evaluation.registry import metric

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+\-.]*://")


@cache
def _extractor() -> Any:
    import tldextract

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


def normalize_url(url: str, full: bool = True) -> str:
    """The form in which two URLs of the same page are equal (see the module docs).

    >>> normalize_url("WWW.Airbnb.com.sg/")
    'http://airbnb'
    >>> normalize_url("https://maps.google.com/x?q=1")
    'https://maps.google/x?q=1'
    """
    if not _SCHEME.match(url):
        url = f"http://{url}"
    parsed = urlparse(url)
    parts = _extractor()(parsed.netloc.lower())
    subdomain = "" if parts.subdomain == "www" else parts.subdomain
    netloc = f"{subdomain}.{parts.domain}" if subdomain else parts.domain
    return urlunparse(
        ParseResult(
            scheme=parsed.scheme.lower(),
            netloc=netloc,
            path=parsed.path if parsed.path != "/" else "",
            params=parsed.params if full else "",
            query=parsed.query if full else "",
            fragment=parsed.fragment if full else "",
        )
    )


def same_site_url(a: str | None, b: str | None) -> bool:
    """Whether two URLs name the same page (None equals only None)."""
    if a is None or b is None:
        return a == b
    return normalize_url(a) == normalize_url(b)


def same_items(expected: list[Any], actual: list[Any], equal: Callable[[Any, Any], bool]) -> bool:
    """Same length, and every expected item equals some actual item."""
    return len(expected) == len(actual) and all(any(equal(e, a) for a in actual) for e in expected)


def _url_of(info: Any) -> Any:
    return info.get("url", None) if isinstance(info, dict) else info


@metric("is_expected_active_tab")
def is_expected_active_tab(active_tab: Any, rule: dict[str, Any]) -> float:
    """1 when the active tab (a URL or ``{"url"}``) is ``rule["url"]`` (``type: url``)."""
    if not active_tab:
        return 0.0
    if rule["type"] != "url":
        return 0.0
    return float(same_site_url(rule["url"], _url_of(active_tab)))


@metric("is_expected_active_tab_approximate")
def is_expected_active_tab_approximate(active_tab: Any, rule: dict[str, Any]) -> float:
    """1 when the active tab's URL equals ``rule["url"]`` once both lose their query string."""
    if not active_tab:
        return 0.0
    if rule["type"] != "url":
        return 0.0

    def bare(url: str) -> str:
        return urlunparse(urlparse(url)._replace(query=""))

    return float(bare(rule["url"]) == bare(_url_of(active_tab)))


@metric("is_expected_tabs")
def is_expected_tabs(open_tabs: list[dict[str, str]] | None, rule: dict[str, Any]) -> float:
    """1 when the open tabs' URLs are ``rule["urls"]`` (as many, each found; order free)."""
    if not open_tabs:
        return 0.0
    if rule["type"] != "url":
        return 0.0
    return float(same_items(rule["urls"], [tab["url"] for tab in open_tabs], same_site_url))


def _bar_children(bookmarks: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [b for b in bookmarks["bookmark_bar"]["children"] if b["type"] == kind]


@metric("is_expected_bookmarks")
def is_expected_bookmarks(bookmarks: Any, rule: dict[str, Any]) -> float:
    """Bookmarks bar folders by name, its sites by URL, or the sites of its ``Liked Authors`` folder.

    For ``liked_authors_websites_urls``, each item of ``rule["urls"]`` is a URL or a list of accepted
    alternatives; the folder must hold exactly one choice of them.
    """
    if not bookmarks:
        return 0.0
    kind = rule["type"]
    if kind == "bookmark_bar_folders_names":
        return float({b["name"] for b in _bar_children(bookmarks, "folder")} == set(rule["names"]))
    if kind == "bookmark_bar_websites_urls":
        return float({b["url"] for b in _bar_children(bookmarks, "url")} == set(rule["urls"]))
    if kind == "liked_authors_websites_urls":
        folder = next((b for b in _bar_children(bookmarks, "folder") if b["name"] == "Liked Authors"), None)
        if folder is None:
            return 0.0
        urls = {b["url"] for b in folder["children"] if b["type"] == "url"}
        choices = [[u] if isinstance(u, str) else u for u in rule["urls"]]
        return float(any(set(combination) == urls for combination in product(*choices)))
    raise ValueError(f"is_expected_bookmarks type {kind!r} is not defined")


@metric("is_expected_search_query")
def is_expected_search_query(active_tab: dict[str, str] | None, rules: dict[str, Any]) -> float:
    """1 when the active tab's URL matches the regular expression ``rules["expect"]["pattern"]``."""
    if not active_tab:
        return 0.0
    return float(
        untrusted_regex.search(rules["expect"]["pattern"], active_tab["url"], where="expect.pattern")
    )


@metric("is_expected_installed_extensions")
def is_expected_installed_extensions(installed: Any, expected: dict[str, Any]) -> float:
    """1 when every name in ``expected["expected"]`` is among the installed extensions."""
    if not installed:
        return 0.0
    return float(
        {_extension_name(n) for n in expected["expected"]} <= {_extension_name(n) for n in installed}
    )


_EXTENSION_ALIASES = ({"Zoom Chrome Extension", "Zoom for Google Chrome"},)
"""Names one extension has had in the Chrome Web Store (OSWorld takes each group as one name)."""


def _extension_name(name: str) -> str:
    return next((min(group) for group in _EXTENSION_ALIASES if name in group), name)


@metric("is_cookie_deleted")
def is_cookie_deleted(cookies: list[Any], rule: dict[str, Any]) -> float:
    """1 when no cookie's host (column 1 of the ``cookies`` table) is one of ``rule["domains"]``."""
    if rule["type"] != "domains":
        raise ValueError(f"is_cookie_deleted type {rule['type']!r} is not defined")
    hosts = [row[1] for row in cookies]
    return float(not any(same_site_url(domain, host) for domain in rule["domains"] for host in hosts))


@metric("check_history_deleted")
def check_history_deleted(history: list[Any], rule: dict[str, Any]) -> float:
    """1 when no visited URL contains one of ``rule["keywords"]``."""
    if rule["type"] != "keywords":
        raise ValueError(f"check_history_deleted type {rule['type']!r} is not defined")
    urls = [row[0] for row in history]
    return float(not any(keyword in url for keyword in rule["keywords"] for url in urls))


@metric("is_shortcut_on_desktop")
def is_shortcut_on_desktop(shortcuts: dict[str, str], rule: dict[str, Any]) -> float:
    """1 when a desktop launcher is named ``rule["name"]`` (``type: name``) or runs ``rule["exec"]``.

    As OSWorld at the tasks' commit: the text ``Name=<name>`` followed by a line end, or a ``Name=``
    line whose value holds the name or is held by it, case aside (a site's title changes over time);
    for ``exec``, the text ``Exec=<exec>`` and a line end, or an ``Exec=`` line whose value holds the
    command or is held by it.

    >>> is_shortcut_on_desktop({"a.desktop": "Name=GitHub - Home"}, {"type": "name", "name": "github"})
    1.0
    """
    kind = rule["type"]
    if kind not in ("name", "exec"):
        raise ValueError(f"is_shortcut_on_desktop type {kind!r} is not defined")
    want = rule[kind]
    key = f"{kind.capitalize()}="

    def fold(text: str) -> str:
        return text.lower() if kind == "name" else text

    for text in shortcuts.values():
        if f"{key}{want}\n" in text:
            return 1.0
        for line in text.split("\n"):
            if line.startswith(key):
                value = line[len(key) :]
                if value == want or fold(want) in fold(value) or fold(value) in fold(want):
                    return 1.0
    return 0.0


@metric("check_font_size")
def check_font_size(font_size: dict[str, Any], rule: dict[str, Any]) -> float:
    """The browser's default font size equals ``rule["value"]``, or lies strictly in ``(min, max)``."""
    size = font_size["default_font_size"]
    if rule["type"] == "value":
        return float(size == rule["value"])
    if rule["type"] == "range":
        return float(rule["min"] < size < rule["max"])
    raise ValueError(f"check_font_size type {rule['type']!r} is not defined")


@metric("is_added_to_steam_cart")
def is_added_to_steam_cart(active_tab: dict[str, str], rule: dict[str, Any]) -> float:
    """1 when the page's HTML contains every one of ``rule["items"]``."""
    return float(all(item in active_tab["content"] for item in rule["items"]))
