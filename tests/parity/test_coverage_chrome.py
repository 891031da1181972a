"""Differential tests: the browser metrics and getters against OSWorld's own (desktop_env 1.0.2).

Each case feeds both sides the same values (metrics) or the same guest files (getters) and requires the
same answer. Equal and near-miss variants come from the options the OSWorld chrome tasks pass.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import pytest

from osw_studio.core.errors import EvaluationError
from osw_studio.envs.guest_client import GuestClient
from osw_studio.evaluation.registry import GETTERS, METRICS, GetterContext
from tests.fakes.desktop import Desktop
from tests.parity.guest_env import call_getter, stub_missing
from tests.parity.reference import Reference, ReferenceError

REF_METRICS = "desktop_env.evaluators.metrics.chrome"
REF_GETTERS = "desktop_env.evaluators.getters.chrome"


@pytest.fixture(scope="module")
def ref(reference: Reference) -> Reference:
    stub_missing(reference)
    return reference


def _both(ref: Reference, name: str, *args: Any) -> tuple[Any, Any]:
    ours: Any
    try:
        ours = float(METRICS.get(name)(*args))
    except Exception as exc:
        ours = f"raises {type(exc).__name__}"
    try:
        theirs: Any = float(ref.call(REF_METRICS, name, *args))
    except ReferenceError as exc:
        theirs = f"raises {exc.error.split(':')[0]}"
    return ours, theirs


TAB = "https://www.airbnb.com/s/homes?adults=2"
URL_CASES = [
    (TAB, "airbnb.com/s/homes?adults=2"),
    (TAB, "https://airbnb.com.sg/s/homes?adults=2"),
    (TAB, "https://www.airbnb.com/s/homes?adults=3"),
    (TAB, "http://www.airbnb.com/s/homes?adults=2"),
    ("https://www.google.com/", "google.com"),
    ("https://www.google.com/", "https://maps.google.com/"),
    ("https://WWW.Example.org/a/", "https://example.org/a/"),
    ("https://example.org/a", "https://example.org/a/"),
    ("chrome://settings/", "chrome://settings"),
    ("https://www.drugs.com/npc/", "https://www.drugs.com/npc"),
]


@pytest.mark.parametrize(("actual", "expected"), URL_CASES)
@pytest.mark.parametrize("shape", ["dict", "str"])
def test_is_expected_active_tab(ref: Reference, actual: str, expected: str, shape: str) -> None:
    value: Any = {"url": actual, "title": "t"} if shape == "dict" else actual
    rule = {"type": "url", "url": expected}
    ours, theirs = _both(ref, "is_expected_active_tab", value, rule)
    assert ours == theirs
    ours, theirs = _both(ref, "is_expected_active_tab_approximate", value, rule)
    assert ours == theirs


@pytest.mark.parametrize(
    "value", [None, {}, "", {"url": "x"}], ids=["none", "empty-dict", "empty-str", "other-type"]
)
def test_is_expected_active_tab_edges(ref: Reference, value: Any) -> None:
    for rule in ({"type": "url", "url": "x"}, {"type": "title", "url": "x"}):
        assert (
            _both(ref, "is_expected_active_tab", value, rule)[0]
            == _both(ref, "is_expected_active_tab", value, rule)[1]
        )


TABS = [
    {"title": "a", "url": "https://www.lonelyplanet.com/"},
    {"title": "b", "url": "https://www.airbnb.com/"},
    {"title": "c", "url": "https://www.tripadvisor.com/"},
]
TAB_RULES = [
    ["lonelyplanet.com", "airbnb.com", "tripadvisor.com"],
    ["https://www.tripadvisor.com/", "https://www.lonelyplanet.com", "https://airbnb.com"],
    ["lonelyplanet.com", "airbnb.com"],
    ["lonelyplanet.com", "airbnb.com", "tripadvisor.com", "google.com"],
    ["lonelyplanet.com", "airbnb.com", "booking.com"],
    ["lonelyplanet.com", "lonelyplanet.com", "lonelyplanet.com"],
]


@pytest.mark.parametrize("urls", TAB_RULES)
@pytest.mark.parametrize("tabs", [TABS, TABS[:2], [], None], ids=["3", "2", "empty", "none"])
def test_is_expected_tabs(ref: Reference, urls: list[str], tabs: Any) -> None:
    ours, theirs = _both(ref, "is_expected_tabs", tabs, {"type": "url", "urls": urls})
    assert ours == theirs


def _bookmarks(bar: list[dict[str, Any]]) -> dict[str, Any]:
    return {"bookmark_bar": {"children": bar, "type": "folder", "name": "Bookmarks bar"}, "other": {}}


def _site(url: str) -> dict[str, Any]:
    return {"type": "url", "url": url, "name": url}


def _folder(name: str, children: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "folder", "name": name, "children": children}


AUTHORS = [
    "https://jimfan.me/",
    ["https://ai.stanford.edu/~dorsa/", "https://dorsa.fyi/"],
    "https://www.cs.cmu.edu/~sherryw/",
]
BOOKMARK_CASES = [
    (
        _bookmarks([_folder("Favorites", []), _folder("Liked Authors", [])]),
        {"type": "bookmark_bar_folders_names", "names": ["Favorites", "Liked Authors"]},
    ),
    (
        _bookmarks([_folder("Favorites", [])]),
        {"type": "bookmark_bar_folders_names", "names": ["Favorites", "Liked Authors"]},
    ),
    (
        _bookmarks([_site("https://a.org/"), _site("https://b.org/")]),
        {"type": "bookmark_bar_websites_urls", "urls": ["https://b.org/", "https://a.org/"]},
    ),
    (
        _bookmarks([_site("https://a.org/")]),
        {"type": "bookmark_bar_websites_urls", "urls": ["https://a.org"]},
    ),
    (
        _bookmarks(
            [
                _folder(
                    "Liked Authors",
                    [
                        _site("https://jimfan.me/"),
                        _site("https://dorsa.fyi/"),
                        _site("https://www.cs.cmu.edu/~sherryw/"),
                    ],
                )
            ]
        ),
        {"type": "liked_authors_websites_urls", "urls": AUTHORS},
    ),
    (
        _bookmarks(
            [
                _folder(
                    "Liked Authors",
                    [
                        _site("https://jimfan.me/"),
                        _site("https://ai.stanford.edu/~dorsa/"),
                        _site("https://www.cs.cmu.edu/~sherryw/"),
                    ],
                )
            ]
        ),
        {"type": "liked_authors_websites_urls", "urls": AUTHORS},
    ),
    (
        _bookmarks([_folder("Liked Authors", [_site("https://jimfan.me/"), _site("https://dorsa.fyi/")])]),
        {"type": "liked_authors_websites_urls", "urls": AUTHORS},
    ),
    (
        _bookmarks([_folder("Authors", [_site("https://jimfan.me/")])]),
        {"type": "liked_authors_websites_urls", "urls": AUTHORS},
    ),
    ([], {"type": "bookmark_bar_folders_names", "names": []}),
]


@pytest.mark.parametrize(("bookmarks", "rule"), BOOKMARK_CASES)
def test_is_expected_bookmarks(ref: Reference, bookmarks: Any, rule: dict[str, Any]) -> None:
    ours, theirs = _both(ref, "is_expected_bookmarks", bookmarks, json.loads(json.dumps(rule)))
    assert ours == theirs


@pytest.mark.parametrize(
    ("name", "value", "rule"),
    [
        (
            "is_expected_search_query",
            {"url": "https://www.google.com/search?q=drip+coffee"},
            {"expect": {"pattern": r"q=drip\+coffee"}},
        ),
        (
            "is_expected_search_query",
            {"url": "https://www.google.com/search?q=tea"},
            {"expect": {"pattern": r"q=drip\+coffee"}},
        ),
        ("is_expected_search_query", None, {"expect": {"pattern": "x"}}),
        ("is_expected_installed_extensions", ["Todoist", "Dark Reader"], {"expected": ["Todoist"]}),
        ("is_expected_installed_extensions", ["Dark Reader"], {"expected": ["Todoist"]}),
        ("is_expected_installed_extensions", "Google", {"expected": ["Todoist"]}),
        ("is_expected_installed_extensions", [], {"expected": []}),
        (
            "is_expected_installed_extensions",
            ["Zoom for Google Chrome"],
            {"expected": ["Zoom Chrome Extension"]},
        ),
        (
            "is_expected_installed_extensions",
            ["Zoom Chrome Extension"],
            {"expected": ["Zoom for Google Chrome"]},
        ),
        (
            "is_cookie_deleted",
            [[1, ".amazon.com", "x"], [2, "www.google.com", "y"]],
            {"type": "domains", "domains": [".amazon.com"]},
        ),
        ("is_cookie_deleted", [[2, "www.google.com", "y"]], {"type": "domains", "domains": [".amazon.com"]}),
        ("is_cookie_deleted", [[2, "amazon.co.uk", "y"]], {"type": "domains", "domains": ["amazon.com"]}),
        ("is_cookie_deleted", [], {"type": "domains", "domains": ["amazon.com"]}),
        ("is_cookie_deleted", [], {"type": "names", "domains": []}),
        (
            "check_history_deleted",
            [["https://www.amazon.com/x", "A", 1]],
            {"type": "keywords", "keywords": ["amazon"]},
        ),
        (
            "check_history_deleted",
            [["https://www.ebay.com/x", "A", 1]],
            {"type": "keywords", "keywords": ["amazon"]},
        ),
        ("check_history_deleted", [], {"type": "keywords", "keywords": ["amazon"]}),
        ("check_history_deleted", [], {"type": "domains"}),
        (
            "is_shortcut_on_desktop",
            {"a.desktop": "[Desktop Entry]\nName=Google Scholar\nExec=x\n"},
            {"type": "name", "name": "Google Scholar"},
        ),
        (
            "is_shortcut_on_desktop",
            {"a.desktop": "[Desktop Entry]\nName=Google Scholar Labs\n"},
            {"type": "name", "name": "Google Scholar"},
        ),
        (
            "is_shortcut_on_desktop",
            {"a.desktop": "Exec=/opt/x --app=https://scholar.google.com\n"},
            {"type": "exec", "exec": "/opt/x --app=https://scholar.google.com"},
        ),
        (
            "is_shortcut_on_desktop",
            {"a.desktop": "Name=google scholar\n"},
            {"type": "name", "name": "Google Scholar"},
        ),
        (
            "is_shortcut_on_desktop",
            {"a.desktop": "Name=Scholar\r\n"},
            {"type": "name", "name": "Google Scholar"},
        ),
        ("is_shortcut_on_desktop", {"a.desktop": "GenericName=Maps\n"}, {"type": "name", "name": "Maps"}),
        ("is_shortcut_on_desktop", {"a.desktop": "Name=Mail\n"}, {"type": "name", "name": "Maps"}),
        (
            "is_shortcut_on_desktop",
            {"a.desktop": "Exec=/opt/x --app=u %U"},
            {"type": "exec", "exec": "/opt/x"},
        ),
        ("is_shortcut_on_desktop", {"a.desktop": "Exec=/opt/X\n"}, {"type": "exec", "exec": "/opt/x"}),
        ("is_shortcut_on_desktop", {}, {"type": "name", "name": "x"}),
        ("is_shortcut_on_desktop", {}, {"type": "url", "url": "x"}),
        ("check_font_size", {"default_font_size": 16}, {"type": "value", "value": 16}),
        ("check_font_size", {"default_font_size": 16}, {"type": "value", "value": 20}),
        ("check_font_size", {"default_font_size": 22}, {"type": "range", "min": 16, "max": 99999999}),
        ("check_font_size", {"default_font_size": 16}, {"type": "range", "min": 16, "max": 99999999}),
        ("check_font_size", {"default_font_size": 16}, {"type": "ratio"}),
        (
            "is_added_to_steam_cart",
            {"content": "<div>Dota 2</div><div>Portal 2</div>"},
            {"items": ["Dota 2", "Portal 2"]},
        ),
        ("is_added_to_steam_cart", {"content": "<div>Dota 2</div>"}, {"items": ["Dota 2", "Portal 2"]}),
    ],
)
def test_browser_rule_metrics(ref: Reference, name: str, value: Any, rule: dict[str, Any]) -> None:
    ours, theirs = _both(ref, name, value, rule)
    # Unknown rule types raise on both sides (a task error); the exception types are ours.
    if isinstance(theirs, str):
        assert isinstance(ours, str), f"OSWorld {theirs}, ours gave {ours}"
    else:
        assert ours == theirs


# --- getters, on the tests' guest ------------------------------------------------------------------


@pytest.fixture
async def ctx(desktop: Desktop, tmp_path: Path) -> AsyncIterator[GetterContext]:
    async with GuestClient(desktop.url, desktop.token) as guest:
        yield GetterContext(guest=guest, cache_dir=tmp_path / "ours")


@pytest.fixture
def profile(desktop: Desktop) -> Iterator[Path]:
    folder = desktop.home / ".config" / "google-chrome"
    (folder / "Default").mkdir(parents=True, exist_ok=True)
    yield folder
    shutil.rmtree(folder)


PREF_GETTERS = {
    "default_search_engine": "get_default_search_engine",
    "profile_name": "get_profile_name",
    "chrome_font_size": "get_chrome_font_size",
    "enable_do_not_track": "get_enable_do_not_track",
    "enable_safe_browsing": "get_enable_safe_browsing",
    "new_startup_page": "get_new_startup_page",
    "data_delete_automacally": "get_data_delete_automacally",
    "find_unpacked_extension_path": "get_find_unpacked_extension_path",
    "find_installed_extension_name": "get_find_installed_extension_name",
}

PREFERENCES: dict[str, str | None] = {
    "absent": None,
    "not-json": "{not json",
    "a-list": "[1, 2]",
    "empty": "{}",
    "set": json.dumps(
        {
            "default_search_provider_data": {"template_url_data": {"short_name": "Bing"}},
            "profile": {"name": "Thomas", "default_content_setting_values": {"cookies": 4}},
            "webkit": {"webprefs": {"default_font_size": 20, "minimum_font_size": 10}},
            "enable_do_not_track": True,
            "safebrowsing": {"enabled": False, "enhanced": True},
            "session": {"restore_on_startup": 5},
            "extensions": {
                "settings": {
                    "abc": {"path": "/home/user/Desktop/helloExtension", "manifest": {"name": "Hello"}},
                    "def": {"path": "def/1.0", "manifest": {"name": "Todoist"}},
                }
            },
        }
    ),
    "partly": json.dumps(
        {
            "profile": {"name": None},
            "safebrowsing": {"enabled": True},
            "session": {"restore_on_startup": 1},
            "extensions": {"settings": {"abc": {"manifest": {"name": "No path"}}}},
            "enable_do_not_track": False,
        }
    ),
    "session-without-mode": json.dumps({"session": {}, "profile": {}}),
}


@pytest.mark.xvfb
@pytest.mark.parametrize("prefs", list(PREFERENCES))
async def test_preference_getters(
    ref: Reference, ctx: GetterContext, desktop: Desktop, profile: Path, tmp_path: Path, prefs: str
) -> None:
    content = PREFERENCES[prefs]
    if content is not None:
        (profile / "Default" / "Preferences").write_text(content)
    for ours_name, ref_name in PREF_GETTERS.items():
        ours = await GETTERS.get(ours_name)(ctx, {})
        theirs = call_getter(ref, REF_GETTERS, ref_name, str(desktop.home), str(tmp_path), {})
        assert ours == theirs, ours_name


def _sqlite(path: Path, schema: str, rows: list[tuple[Any, ...]]) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(schema)
        for row in rows:
            conn.execute(f"INSERT INTO {schema.split()[2]} VALUES ({','.join('?' * len(row))})", row)
    conn.close()


@pytest.mark.xvfb
async def test_bookmarks_history_cookies_and_shortcuts(
    ref: Reference, ctx: GetterContext, desktop: Desktop, profile: Path, tmp_path: Path
) -> None:
    cases: list[tuple[str, str, dict[str, Any]]] = [
        ("bookmarks", "get_bookmarks", {}),
        ("history", "get_history", {"dest": "History"}),
        ("cookie_data", "get_cookie_data", {"dest": "Cookies"}),
        ("shortcuts_on_desktop", "get_shortcuts_on_desktop", {}),
    ]

    async def compare() -> None:
        for ours_name, ref_name, config in cases:
            ours = await GETTERS.get(ours_name)(ctx, dict(config))
            theirs = call_getter(ref, REF_GETTERS, ref_name, str(desktop.home), str(tmp_path), dict(config))
            assert json.loads(json.dumps(ours)) == theirs, ours_name

    desktop_dir = desktop.home / "Desktop"
    desktop_dir.mkdir(exist_ok=True)
    await compare()  # nothing there
    (profile / "Default" / "Bookmarks").write_text(
        json.dumps({"roots": _bookmarks([_site("https://a.org/")])})
    )
    _sqlite(
        profile / "Default" / "History",
        "CREATE TABLE urls (id INTEGER, url TEXT, title TEXT, last_visit_time INTEGER)",
        [(1, "https://www.amazon.com/", "Amazon", 13350000000000000), (2, "https://ebay.com/", "eBay", 1)],
    )
    _sqlite(
        profile / "Default" / "Cookies",
        "CREATE TABLE cookies (creation_utc INTEGER, host_key TEXT, name TEXT)",
        [(1, ".amazon.com", "session"), (2, "www.google.com", "NID")],
    )
    (desktop_dir / "Scholar.desktop").write_text(
        "[Desktop Entry]\nName=Google Scholar\nExec=chrome --app=x\n"
    )
    (desktop_dir / "notes.txt").write_text("not a launcher")
    try:
        await compare()
        (profile / "Default" / "History").write_text("not a database")
        await compare()
    finally:
        shutil.rmtree(desktop_dir)


def _tree(app: str, address: str | None) -> str:
    entry = "" if address is None else f'<entry name="Address and search bar">{escape(address)}</entry>'
    return (
        '<desktop-frame xmlns:st="https://accessibility.ubuntu.example.org/ns/state">'
        f'<application name="{app}"><frame name="w">{entry}</frame></application></desktop-frame>'
    )


URL_GETTER_CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("active_url_from_accessTree", "get_active_url_from_accessTree", {"goto_prefix": "https://www."}),
    ("active_url_from_accessTree", "get_active_url_from_accessTree", {}),
    (
        "active_tab_url_parse",
        "get_active_tab_url_parse",
        {"goto_prefix": "https://www.", "parse_keys": ["q", "tbm"]},
    ),
    (
        "active_tab_url_parse",
        "get_active_tab_url_parse",
        {"parse_keys": ["origin", "dest"], "replace": {"origin": "from"}},
    ),
    ("active_tab_url_parse", "get_active_tab_url_parse", {"parse_keys": ["tags"], "split_list": True}),
    (
        "url_dashPart",
        "get_url_dashPart",
        {"goto_prefix": "https://www.", "partIndex": 2, "needDeleteId": False, "returnType": "string"},
    ),
    (
        "url_dashPart",
        "get_url_dashPart",
        {"goto_prefix": "", "partIndex": 2, "needDeleteId": True, "returnType": "json", "key": "time"},
    ),
    ("url_dashPart", "get_url_dashPart", {"partIndex": 40, "returnType": "string"}),
    ("url_dashPart", "get_url_dashPart", {"partIndex": "x", "returnType": "string"}),
    (
        "url_path_parse",
        "get_url_path_parse",
        {
            "goto_prefix": "https://www.",
            "parse_keys": ["mens_clothing", "shirts", "Men_regular_size_t", "Price_discount_range"],
        },
    ),
]
ADDRESSES = [
    "google.com/search?q=drip+coffee&tbm=shop",
    "delta.com/flight-search/book-a-flight?origin=JFK&dest=ORD&tags=a,b",
    "macys.com/shop/mens-clothing/mens-dress-shirts/Men_regular_size_t,Price_discount_range,Sleeve_length/L,50_PERCENT_%20off%20%26%20more,Short%20Sleeve?id=20635",
    "macys.com/shop/mens-clothing/shirts/Price_discount_range,Product_department/50_PERCENT_%20off%20%26%20more|30_PERCENT_%20off%20%26%20more,Shirts",
    "drugs.com/npc/2023-12-01?id=3",
    "",
]


@pytest.mark.parametrize("address", ADDRESSES)
@pytest.mark.parametrize(("ours_name", "ref_name", "config"), URL_GETTER_CASES)
def test_url_getters_on_an_accessibility_tree(
    ref: Reference, tmp_path: Path, address: str, ours_name: str, ref_name: str, config: dict[str, Any]
) -> None:
    tree = _tree("Google Chrome", address or None)
    theirs = call_getter(ref, REF_GETTERS, ref_name, str(tmp_path), str(tmp_path), dict(config), tree=tree)
    ours = _ours_on_tree(ours_name, dict(config), tree, tmp_path)
    assert ours == theirs


def _ours_on_tree(name: str, config: dict[str, Any], tree: str, tmp_path: Path) -> Any:
    import asyncio

    class TreeGuest:
        # Only the accessibility tree is read by these getters; the guest server side is tested in
        # tests/evaluation (this keeps hundreds of cases off the X server).
        base_url = "http://127.0.0.1:9"

        async def accessibility_tree(self) -> str:
            return tree

    ctx = GetterContext(guest=TreeGuest(), cache_dir=tmp_path)  # type: ignore[arg-type]
    return json.loads(json.dumps(asyncio.run(GETTERS.get(name)(ctx, config))))


@pytest.mark.xvfb
async def test_a_broken_bookmarks_file_is_a_clear_error(
    ref: Reference, ctx: GetterContext, desktop: Desktop, profile: Path, tmp_path: Path
) -> None:
    # Deliberate deviation: OSWorld's getter crashes (JSONDecodeError); ours names the file.
    (profile / "Default" / "Bookmarks").write_text("{half")
    with pytest.raises(EvaluationError, match="Bookmarks"):
        await GETTERS.get("bookmarks")(ctx, {})
    with pytest.raises(ReferenceError, match="JSONDecodeError"):
        call_getter(ref, REF_GETTERS, "get_bookmarks", str(desktop.home), str(tmp_path), {})
