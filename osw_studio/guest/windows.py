"""Top-level windows through EWMH (what ``wmctrl`` does, without needing wmctrl installed).

Matching follows ``wmctrl``'s rules, which OSWorld's server relies on: by default a case-insensitive
substring of the title; ``strict`` compares the whole title case-sensitively; ``by_class`` matches the
``WM_CLASS`` (instance or class, or ``instance.class``) instead of the title.

The windows are those the window manager lists (``_NET_CLIENT_LIST``), then any other top-level window
that is on screen with a title: one the window manager has not taken yet (it lists a window a moment
after it maps, later on a loaded machine) or that nothing manages (the window manager is gone). Those
are raised and given the focus directly, as the window manager would.

Examples:
    >>> w = WindowInfo(1, "notes.txt - Mousepad", "mousepad", "Mousepad")
    >>> matches(w, "MOUSEPAD"), matches(w, "Mousepad", strict=True), matches(w, "mousepad", by_class=True)
    (True, False, True)
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import Any

from Xlib import X, Xatom
from Xlib import display as xdisplay
from Xlib.protocol import event as xevent


@dataclass(frozen=True)
class WindowInfo:
    """One top-level window."""

    id: int
    title: str
    instance: str
    wm_class: str
    managed: bool = True
    """Whether the window manager lists it (else it is a mapped top-level window it has not taken)."""


def matches(window: WindowInfo, name: str, *, strict: bool = False, by_class: bool = False) -> bool:
    """Whether ``window`` matches ``name`` by wmctrl's rules."""
    if by_class:
        candidates = [window.instance, window.wm_class, f"{window.instance}.{window.wm_class}"]
        if strict:
            return name in candidates
        return any(name.lower() in c.lower() for c in candidates)
    if strict:
        return window.title == name
    return name.lower() in window.title.lower()


class Windows:
    """Lists, activates, closes and measures top-level windows on one display.

    Args:
        display_name: The X display, e.g. ``":1"``.
    """

    def __init__(self, display_name: str) -> None:
        self._display_name = display_name
        self._kept: Any = None  # one connection kept for the frequent active_class
        self._kept_lock = threading.Lock()

    def _open(self) -> Any:
        return xdisplay.Display(self._display_name)

    def all(self) -> list[WindowInfo]:
        """The windows the window manager manages (``_NET_CLIENT_LIST``), then unmanaged mapped ones."""
        display = self._open()
        try:
            clients = _client_ids(display)
            found = [info for info in (_info(display, wid) for wid in clients) if info]
            for wid in _mapped_top_level_ids(display):
                if wid not in clients:
                    info = _info(display, wid, managed=False)
                    if info and info.title:
                        found.append(info)
            return found
        finally:
            display.close()

    def active_class(self) -> str | None:
        """The ``WM_CLASS`` of the active window, lower case, or None when no window manager says.

        Instance and class are joined by a space (``"gnome-terminal-server gnome-terminal-server"``).
        One X connection is kept for it: ``/terminal`` asks at the start of every OSWorld task setup.
        """
        with self._kept_lock:
            try:
                if self._kept is None:
                    self._kept = self._open()
                display = self._kept
                root = display.screen().root
                prop = root.get_full_property(display.intern_atom("_NET_ACTIVE_WINDOW"), Xatom.WINDOW)
                if prop is None or not prop.value or not prop.value[0]:
                    return None
                wm_class = display.create_resource_object("window", prop.value[0]).get_wm_class()
                return " ".join(wm_class).lower() if wm_class else ""
            except Exception:
                # The window went away while we looked, or the connection broke: open a new one next time.
                if self._kept is not None:
                    with contextlib.suppress(Exception):
                        self._kept.close()
                self._kept = None
                return None

    def pids(self) -> set[int]:
        """The ``_NET_WM_PID`` of every window :meth:`all` lists (windows that name no PID are left out)."""
        display = self._open()
        try:
            atom = display.intern_atom("_NET_WM_PID")
            found: set[int] = set()
            for wid in {*_client_ids(display), *_mapped_top_level_ids(display)}:
                window = display.create_resource_object("window", wid)
                try:
                    prop = window.get_full_property(atom, Xatom.CARDINAL)
                except Exception:
                    continue  # gone while we looked
                if prop is not None and len(prop.value):
                    found.add(int(prop.value[0]))
            return found
        finally:
            display.close()

    def find(self, name: str, *, strict: bool = False, by_class: bool = False) -> list[WindowInfo]:
        """Windows that match ``name``."""
        return [w for w in self.all() if matches(w, name, strict=strict, by_class=by_class)]

    def activate(self, window: WindowInfo) -> None:
        """Raise and focus ``window`` (``_NET_ACTIVE_WINDOW``; directly too if no manager has it yet)."""
        self._message(window, "_NET_ACTIVE_WINDOW", [2, X.CurrentTime, 0, 0, 0])
        if not window.managed:
            # No window manager acts on the message for a window it does not manage: do its job.
            display = self._open()
            try:
                target = display.create_resource_object("window", window.id)
                target.configure(stack_mode=X.Above)
                target.set_input_focus(X.RevertToParent, X.CurrentTime)
                display.sync()
            except Exception:
                pass  # the window went away meanwhile
            finally:
                display.close()

    def close(self, window: WindowInfo) -> None:
        """Ask the app to close ``window`` (``_NET_CLOSE_WINDOW``)."""
        self._message(window, "_NET_CLOSE_WINDOW", [X.CurrentTime, 2, 0, 0, 0])

    def size(self, window: WindowInfo) -> tuple[int, int]:
        """The window's width and height in pixels."""
        display = self._open()
        try:
            geometry = display.create_resource_object("window", window.id).get_geometry()
            return int(geometry.width), int(geometry.height)
        finally:
            display.close()

    def _message(self, window: WindowInfo, atom: str, data: list[int]) -> None:
        display = self._open()
        try:
            root = display.screen().root
            target = display.create_resource_object("window", window.id)
            message = xevent.ClientMessage(
                window=target, client_type=display.intern_atom(atom), data=(32, data)
            )
            mask = X.SubstructureRedirectMask | X.SubstructureNotifyMask
            root.send_event(message, event_mask=mask)
            display.sync()
        finally:
            display.close()


def _client_ids(display: Any) -> list[int]:
    prop = display.screen().root.get_full_property(display.intern_atom("_NET_CLIENT_LIST"), Xatom.WINDOW)
    return list(prop.value) if prop is not None else []


def _mapped_top_level_ids(display: Any) -> list[int]:
    """The root's children that are on screen and not override-redirect (menus, tooltips), bottom first.

    A window manager's frames are among them too; they have no title, so :meth:`Windows.all` skips them.
    """
    ids: list[int] = []
    for child in display.screen().root.query_tree().children:
        try:
            attributes = child.get_attributes()
        except Exception:
            continue  # gone while we looked
        if attributes.map_state == X.IsViewable and not attributes.override_redirect:
            ids.append(int(child.id))
    return ids


def _info(display: Any, window_id: int, *, managed: bool = True) -> WindowInfo | None:
    window = display.create_resource_object("window", window_id)
    try:
        prop = window.get_full_property(
            display.intern_atom("_NET_WM_NAME"), display.intern_atom("UTF8_STRING")
        )
        title = prop.value.decode("utf-8", "replace") if prop is not None else window.get_wm_name() or ""
        wm_class = window.get_wm_class() or ("", "")
    except Exception:
        return None  # the window went away while we looked
    if isinstance(title, bytes):
        title = title.decode("latin-1")
    return WindowInfo(window_id, str(title), str(wm_class[0]), str(wm_class[1]), managed)
