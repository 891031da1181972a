"""Differential test: ``active_tab_html_parse`` and OSWorld's getter read the same live tab of one real
Chromium (Debian's, headless, DevTools on 127.0.0.1), each through its own Playwright connection.

The page mixes what the OSWorld tasks query: repeated classes, own text nodes beside child elements,
``h3`` children, ``li.catAllProducts`` spans, XPaths, input fields filled in by a script, and a URL with
words in its path and query.
"""

from __future__ import annotations

import json
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
    run_chromium,
    serve_site,
)
from tests.parity.guest_env import stub_missing
from tests.parity.reference import Reference

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (make setup)")

SHOP = """<html><head><title>Shop</title></head><body>
<div class="crumb">Spider-Man</div><div class="crumb">Toys</div><div class="crumb"> Kids </div>
<div class="sep">SEA<div class="aura-separator"></div>NYC</div><div class="sep">LAX<span>x</span>SFO</div>
<div class="date">Mon, Mar 04, 2024</div>
<div class="card"><h3>Charlie Card</h3><p>10:15 AM</p></div><div class="card"><h3>10:30 AM</h3></div>
<div class="card"><p>no heading</p></div>
<button class="filter">Black</button><button class="filter">$25 - $60</button>
<button class="filter">On sale</button>
<ul class="pmpSearch_breadcrumb"><li class="catAllProducts"><span>Spider-Man</span></li>
<li class="catAllProducts"><span>Toys</span></li><li class="other"><span>Hidden</span></li></ul>
<form><div><input id="name" value=""><input id="mail" value="a@b.c"></div></form>
<h2 data-automation="title">New York City Hotels</h2><p id="empty"></p>
<script>document.getElementById("name").value = "  Jane Doe ";</script>
</body></html>"""

CONFIGS: list[dict[str, Any]] = [
    {
        "category": "class",
        "class_singleObject": {"date": "time", "nothing": "none"},
        "class_multiObject": {"crumb": {"0": "first", "2": "third", "5": "sixth"}},
    },
    {"category": "class", "class_multiObject_child": {"sep": {"0": "start", "1": "end", "2": "more"}}},
    {"category": "class", "class_multiObject_only_child": {"card": {"0": "content", "1": "time", "2": "x"}}},
    {
        "category": "class",
        "class_multiObject_search_exist": {"filter": ["Black", "$25 - $60", "On sale", "is_other_exist"]},
    },
    {"category": "class", "class_multiObject_search_exist": {"filter": ["Black", "Red", "is_other_exist"]}},
    {"category": "class", "class_multiObject_search_exist": {"filter": ["Black", "Red"]}},
    {
        "category": "xpath",
        "xpathObject": {
            "//h2[@data-automation='title']": "city",
            "/html/body/div[7]": "date",
            "//p[@id='empty']": "empty",
            "//nothing": "none",
        },
    },
    {
        "category": "input",
        "inputObject": {
            "//input[@id='name']": "name",
            "//input[@id='mail']": "mail",
            "//input[@id='none']": "none",
        },
    },
    {
        "category": "class&url",
        "class_multiObject": {"crumb": ["Spider-Man", "Toys", "Kids"]},
        "url_include_expected": ["shop", "Toys", "nike"],
    },
    {
        "category": "class&url",
        "class_multiObject": {"filter": ["black", "on sale"]},
        "url_include_expected_multichoice": {
            "Spider-Man": "Spider-Man",
            "S=4": "Price Low-High",
            "kids": "Kids",
        },
    },
    {
        "category": "class&url",
        "class_multiObject_li": {"pmpSearch_breadcrumb": ["Spider-Man", "Toys", "Kids"]},
        "url_include_expected_multichoice": {"spider-man": "Spider-Man"},
    },
    {"category": "label", "labelObject": {"Charlie": "card"}},
    {"category": "unknown"},
]


@pytest.fixture(scope="module")
def ref(reference: Reference) -> Reference:
    stub_missing(reference)
    return reference


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serve_site(tmp_path_factory.mktemp("site"), {"shop.html": SHOP}) as url:
        yield url


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with run_chromium(tmp_path_factory.mktemp("profile")) as url:
        yield url


@pytest.fixture(scope="module")
def tab(browser: str, site: str) -> Iterator[str]:
    """The active tab's address (without its scheme), as the address bar shows it."""
    url = f"{site}/shop.html?q=Spider-Man&S=4"
    tab_id = open_tab(browser, url)
    yield url.removeprefix("http://")
    close_tab(browser, tab_id)


REFERENCE = """
class _Controller:
    def get_accessibility_tree(self):
        return TREE
class _Env:
    vm_ip = "127.0.0.1"
    vm_machine = "x86_64"  # upstream getters read the guest's architecture
    chromium_port = PORT
    server_port = 9
    controller = _Controller()
result = m0.get_active_tab_html_parse(_Env(), CONFIG)
"""


def theirs(ref: Reference, browser: str, address: str, config: dict[str, Any]) -> Any:
    code = (
        REFERENCE.replace("TREE", repr(address_bar_tree(address)))
        .replace("PORT", repr(urlsplit(browser).port))
        .replace("CONFIG", repr(json.loads(json.dumps(config))))
    )
    return ref.exec(code, modules=("desktop_env.evaluators.getters.chrome",))


async def ours(browser: str, address: str, config: dict[str, Any], tmp_path: Path) -> Any:
    ctx = GetterContext(guest=AddressBarGuest(address), cache_dir=tmp_path, devtools_url=browser)  # type: ignore[arg-type]
    return await GETTERS.get("active_tab_html_parse")(ctx, dict(config))


@pytest.mark.parametrize("config", CONFIGS)
async def test_active_tab_html_parse(
    ref: Reference, browser: str, tab: str, tmp_path: Path, config: dict[str, Any]
) -> None:
    spec = {"goto_prefix": "http://", **config}
    assert await ours(browser, tab, spec, tmp_path) == theirs(ref, browser, tab, spec)


async def test_no_tab_with_the_active_url(ref: Reference, browser: str, tab: str, tmp_path: Path) -> None:
    spec = {"goto_prefix": "http://", **CONFIGS[0]}
    other = tab.replace("shop.html", "gone.html")
    assert await ours(browser, other, spec, tmp_path) == theirs(ref, browser, other, spec) == {}
