"""Getters that read the browser's profile files in the guest: preferences, bookmarks, history, cookies.

The profile is OSWorld's, ``~/.config/google-chrome/Default`` on a Linux guest. Each getter answers what
OSWorld's getter of the same name answers, including its fallbacks: a missing or unreadable preferences
file gives the same default value (``"false"``, ``"Google"``, ``None`` ...) OSWorld gives, so a score
never depends on which of the two evaluated the guest.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from typing import Any

from osw_studio.core.errors import EvaluationError
from osw_studio.core.limits import loads_bounded
from osw_studio.evaluation.registry import GetterContext, getter

PROFILE = ".config/google-chrome"
"""The browser's user-data folder under the guest user's home, as OSWorld's getters read it."""

_FONT_DEFAULTS = {"default_fixed_font_size": 13, "default_font_size": 16, "minimum_font_size": 13}


async def home(ctx: GetterContext) -> str:
    """The guest user's home folder."""
    response = await ctx.guest.execute(["sh", "-c", 'printf %s "$HOME"'])
    return response.output.strip()


async def profile_file(ctx: GetterContext, name: str) -> bytes | None:
    """A file of the browser's user-data folder (``Default/Preferences``, ``Local State`` ...), or None."""
    return await ctx.guest.get_file(f"{await home(ctx)}/{PROFILE}/{name}")


async def _preferences(ctx: GetterContext) -> Any:
    """The parsed ``Default/Preferences``; raises when it is missing or not a JSON object."""
    content = await profile_file(ctx, "Default/Preferences")
    if content is None:
        raise FileNotFoundError("Default/Preferences")
    prefs = loads_bounded(content, where="Default/Preferences")
    if not isinstance(prefs, dict):
        raise ValueError("Default/Preferences is not a JSON object")
    return prefs


def _flag(value: Any) -> str:
    return "true" if value else "false"


@getter("default_search_engine")
async def get_default_search_engine(ctx: GetterContext, spec: dict[str, Any]) -> Any:
    """The short name of the default search engine (``"Google"`` when unset or unreadable)."""
    try:
        prefs = await _preferences(ctx)
        return (
            prefs.get("default_search_provider_data", {})
            .get("template_url_data", {})
            .get("short_name", "Google")
        )
    except (OSError, ValueError, AttributeError):
        return "Google"


@getter("profile_name")
async def get_profile_name(ctx: GetterContext, spec: dict[str, Any]) -> Any:
    """The profile's display name, or None."""
    try:
        return (await _preferences(ctx)).get("profile", {}).get("name", None)
    except (OSError, ValueError, AttributeError):
        return None


@getter("chrome_font_size")
async def get_chrome_font_size(ctx: GetterContext, spec: dict[str, Any]) -> Any:
    """The ``webkit.webprefs`` font sizes (Chrome's defaults when unset)."""
    try:
        return (await _preferences(ctx)).get("webkit", {}).get("webprefs", dict(_FONT_DEFAULTS))
    except (OSError, ValueError, AttributeError):
        return {"default_fixed_font_size": 13, "default_font_size": 16}


@getter("enable_do_not_track")
async def get_enable_do_not_track(ctx: GetterContext, spec: dict[str, Any]) -> str:
    """``"true"`` when the Do Not Track request is on, else ``"false"``."""
    try:
        return _flag((await _preferences(ctx)).get("enable_do_not_track", {}))
    except (OSError, ValueError, AttributeError):
        return "false"


@getter("enable_safe_browsing")
async def get_enable_safe_browsing(ctx: GetterContext, spec: dict[str, Any]) -> str:
    """``"true"`` when standard or enhanced Safe Browsing is on, else ``"false"``."""
    try:
        safe = (await _preferences(ctx)).get("safebrowsing", {})
        return _flag(bool(safe.get("enhanced", False)) or bool(safe.get("enabled", False)))
    except (OSError, ValueError, AttributeError):
        return "false"


@getter("new_startup_page")
async def get_new_startup_page(ctx: GetterContext, spec: dict[str, Any]) -> str:
    """``"true"`` when the browser opens the New Tab page on start (no ``session`` or mode 5)."""
    try:
        prefs = await _preferences(ctx)
        if "session" not in prefs:
            return "true"
        return _flag(prefs.get("session", {}).get("restore_on_startup", {}) == 5)
    except (OSError, ValueError, AttributeError):
        return "Google"  # OSWorld's fallback, kept so both evaluators score the same


@getter("data_delete_automacally")
async def get_data_delete_automatically(ctx: GetterContext, spec: dict[str, Any]) -> str:
    """``"true"`` when the profile has content settings (on-exit data deletion), else ``"false"``."""
    try:
        prefs = await _preferences(ctx)
        return _flag(prefs["profile"].get("default_content_setting_values", None) is not None)
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return "Google"  # OSWorld's fallback


def _extension_field(prefs: Any, *keys: str) -> list[Any]:
    values = []
    for settings in prefs.get("extensions", {}).get("settings", {}).values():
        value = settings
        for key in keys:
            value = value[key]
        values.append(value)
    return values


@getter("find_unpacked_extension_path")
async def get_find_unpacked_extension_path(ctx: GetterContext, spec: dict[str, Any]) -> Any:
    """The folder of every extension in the profile (an extension without one makes it ``"Google"``)."""
    try:
        return _extension_field(await _preferences(ctx), "path")
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return "Google"  # OSWorld's fallback


@getter("find_installed_extension_name")
async def get_find_installed_extension_name(ctx: GetterContext, spec: dict[str, Any]) -> Any:
    """The manifest name of every extension in the profile."""
    try:
        return _extension_field(await _preferences(ctx), "manifest", "name")
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return "Google"  # OSWorld's fallback


@getter("bookmarks")
async def get_bookmarks(ctx: GetterContext, spec: dict[str, Any]) -> Any:
    """The ``roots`` of the profile's ``Bookmarks`` file (``[]`` without one)."""
    content = await profile_file(ctx, "Default/Bookmarks")
    if not content:
        return []
    try:
        return loads_bounded(content, where="Default/Bookmarks").get("roots", {})
    except (ValueError, AttributeError) as exc:  # OSWorld's getter crashes here
        raise EvaluationError(
            f"the browser's Bookmarks file is not a JSON object: {exc}",
            where=f"~/{PROFILE}/Default/Bookmarks",
            hint="the browser may have been writing it; let it close before the evaluation",
        ) from None


async def _query_profile_db(
    ctx: GetterContext, name: str, dest: str, query: str
) -> list[tuple[Any, ...]] | None:
    content = await profile_file(ctx, name)
    if content is None:
        return None
    target = ctx.cache_dir / dest
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    try:
        with closing(sqlite3.connect(target)) as conn:
            return list(conn.execute(query).fetchall())
    except sqlite3.Error:
        return None


@getter("history")
async def get_history(ctx: GetterContext, spec: dict[str, Any]) -> list[tuple[Any, ...]] | None:
    """``(url, title, last_visit_time)`` of every row of the profile's ``History`` (copied to ``dest``)."""
    return await _query_profile_db(
        ctx, "Default/History", spec["dest"], "SELECT url, title, last_visit_time FROM urls"
    )


@getter("cookie_data")
async def get_cookie_data(ctx: GetterContext, spec: dict[str, Any]) -> list[tuple[Any, ...]] | None:
    """Every row of the profile's ``Cookies`` table (the database is copied to ``dest``)."""
    return await _query_profile_db(ctx, "Default/Cookies", spec["dest"], "SELECT * FROM cookies")


@getter("shortcuts_on_desktop")
async def get_shortcuts_on_desktop(ctx: GetterContext, spec: dict[str, Any]) -> dict[str, str]:
    """``{file name: text}`` of every ``.desktop`` launcher on the guest's desktop."""
    desktop = await ctx.guest.desktop_path()
    tree = await ctx.guest.list_directory(desktop)
    names = [c["name"] for c in tree.get("children", []) if str(c.get("name", "")).endswith(".desktop")]
    user_home = await home(ctx)
    shortcuts: dict[str, str] = {}
    for name in names:
        # OSWorld reads them from ~/Desktop whatever the desktop folder is.
        data = await ctx.guest.get_file(f"{user_home}/Desktop/{name}")
        if data is None:
            raise FileNotFoundError(f"{user_home}/Desktop/{name}")
        shortcuts[name] = data.decode("utf-8")
    return shortcuts
