r"""Print the desktop's accessibility tree as OSWorld's XML; run by the system Python, which has pyatspi.

pyatspi comes from the distribution (Debian's ``python3-pyatspi``), not from PyPI, so the guest server
runs this file as a script with ``/usr/bin/python3`` in the desktop's D-Bus session. It uses only the
standard library besides pyatspi and prints one XML document: a ``desktop-frame`` root with one element
per application, element names from AT-SPI roles, and OSWorld's namespaced attributes (``st`` states,
``attr`` attributes, ``cp`` screen coordinates and sizes, ``val`` values, ``act`` actions).

Examples:
    >>> _tag("push button"), _tag(""), _tag("3d thing")
    ('push-button', 'unknown', 'tag-3d-thing')
    >>> _clean("a\x00b\ufffcc")
    'abc'
"""

from __future__ import annotations

import contextlib
import re
import sys
import xml.etree.ElementTree as ET
from typing import Any

NAMESPACES = {
    "st": "https://accessibility.ubuntu.example.org/ns/state",
    "attr": "https://accessibility.ubuntu.example.org/ns/attributes",
    "cp": "https://accessibility.ubuntu.example.org/ns/component",
    "doc": "https://accessibility.ubuntu.example.org/ns/document",
    "docattr": "https://accessibility.ubuntu.example.org/ns/document/attributes",
    "txt": "https://accessibility.ubuntu.example.org/ns/text",
    "val": "https://accessibility.ubuntu.example.org/ns/value",
    "act": "https://accessibility.ubuntu.example.org/ns/action",
}
MAX_DEPTH = 50
MAX_WIDTH = 1024
MAX_NODES = 20000
TERMINAL_APPS = frozenset(
    {
        "gnome-terminal-server",
        "gnome-terminal",
        "kgx",
        "xfce4-terminal",
        "mate-terminal",
        "tilix",
        "terminator",
        "lxterminal",
        "qterminal",
        "konsole",
        "guake",
        "sakura",
        "terminology",
        "roxterm",
    }
)
"""Applications whose windows hold terminals AT-SPI can read: ``/terminal`` walks only theirs
(OSWorld's server looks at gnome-terminal-server alone)."""
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffb\ufffe\U00010000-\U0010ffff]|\ufffd")
_NOT_NAME = re.compile(r"[^A-Za-z0-9_.-]")


def _tag(role: str) -> str:
    name = _NOT_NAME.sub("-", role.strip().replace(" ", "-")) or "unknown"
    return name if name[0].isalpha() else "tag-" + name


def _clean(text: str) -> str:
    return _NOT_XML.sub("", text)


def _q(prefix: str, name: str) -> str:
    return "{%s}%s" % (NAMESPACES[prefix], _NOT_NAME.sub("-", name))  # noqa: UP031


class _Walker:
    def __init__(self, pyatspi: Any) -> None:
        self.pyatspi = pyatspi
        self.count = 0

    def node(self, acc: Any, depth: int) -> ET.Element | None:
        self.count += 1
        if self.count > MAX_NODES:
            return None
        attrs: dict[str, str] = {"name": _clean(acc.name or "")}
        states = acc.getState().getStates()
        for state in states:
            state_name = self.pyatspi.StateType._enum_lookup[state].split("_", 1)[1].lower()
            if state_name:
                attrs[_q("st", state_name)] = "true"
        try:
            for key, value in acc.get_attributes().items():
                if key:
                    attrs[_q("attr", key)] = _clean(str(value))
        except Exception:
            pass
        if attrs.get(_q("st", "visible")) == "true" and attrs.get(_q("st", "showing")) == "true":
            try:
                x, y, w, h = acc.queryComponent().getExtents(self.pyatspi.XY_SCREEN)
                attrs[_q("cp", "screencoord")] = str((x, y))
                attrs[_q("cp", "size")] = str((w, h))
            except NotImplementedError:
                pass
        text = ""
        try:
            text_iface = acc.queryText()
            text = _clean(text_iface.getText(0, text_iface.characterCount))
        except NotImplementedError:
            pass
        for flag, query in (("image", "queryImage"), ("selection", "querySelection")):
            try:
                getattr(acc, query)()
                attrs[flag] = "true"
            except NotImplementedError:
                pass
        try:
            value = acc.queryValue()
            for key, getter in (
                ("value", "currentValue"),
                ("min", "minimumValue"),
                ("max", "maximumValue"),
                ("step", "minimumIncrement"),
            ):
                with contextlib.suppress(Exception):
                    attrs[_q("val", key)] = str(getattr(value, getter))
        except NotImplementedError:
            pass
        try:
            action = acc.queryAction()
            for i in range(action.nActions):
                name = action.getName(i).replace(" ", "-")
                attrs[_q("act", name + "_desc")] = _clean(action.getDescription(i) or "")
                attrs[_q("act", name + "_kb")] = _clean(action.getKeyBinding(i) or "")
        except NotImplementedError:
            pass
        element = ET.Element(_tag(acc.getRoleName() or ""), attrs)
        if text:
            element.text = text
        if depth < MAX_DEPTH:
            self.children(acc, element, depth)
        return element

    def children(self, acc: Any, element: ET.Element, depth: int) -> None:
        showing = self.pyatspi.STATE_SHOWING
        try:
            count = acc.childCount
        except Exception:
            return
        # Huge containers (spreadsheet tables have millions of cells): only the cells on screen.
        huge = count > MAX_WIDTH
        for i in range(min(count, MAX_WIDTH * 4 if huge else MAX_WIDTH)):
            try:
                child = acc.getChildAtIndex(i)
                if child is None or (huge and not child.getState().contains(showing)):
                    continue
                sub = self.node(child, depth + 1)
            except Exception:
                continue  # the app removed the node while we walked; skip it
            if sub is None:
                return
            element.append(sub)


def dump(*, active_only: bool = False, one_call_at_a_time: bool = False, bus_only: bool = False) -> str:
    """The accessibility tree of the whole desktop as OSWorld's XML text.

    With ``active_only``, only the active top-level frames of terminal applications (what
    ``/terminal`` needs, a small part of the tree). The whole tree is read with many calls in flight
    (:mod:`atspi_bus`); where that cannot run, or with ``one_call_at_a_time``, pyatspi walks it
    one call at a time. With ``bus_only``, a fast walk that cannot run is an error (for tests).
    """
    import pyatspi

    for prefix, uri in NAMESPACES.items():
        ET.register_namespace(prefix, uri)
    root = ET.Element("desktop-frame")
    walker = _Walker(pyatspi)
    fast = None if active_only or one_call_at_a_time else _fast_tree(pyatspi)
    if fast is None and bus_only:
        raise RuntimeError("the accessibility tree cannot be read with calls in flight here")
    if fast is not None:
        root.extend(fast)
    else:
        desktop = pyatspi.Registry.getDesktop(0)
        for i in range(desktop.childCount):
            try:
                app = desktop.getChildAtIndex(i)
                if app is None:
                    continue
                node = _active_frames(walker, app) if active_only else walker.node(app, 1)
            except Exception:
                continue
            if node is not None:
                root.append(node)
    xml = ET.tostring(root, encoding="unicode")
    # OSWorld's server declares every namespace on the root; ElementTree declares only those used.
    missing = "".join(
        f' xmlns:{prefix}="{uri}"' for prefix, uri in NAMESPACES.items() if f"xmlns:{prefix}=" not in xml
    )
    return xml.replace("<desktop-frame", "<desktop-frame" + missing, 1)


_BUS: list[Any] = []
"""The helper's one connection to the accessibility bus (made at the first request)."""


def _fast_tree(pyatspi: Any) -> list[ET.Element] | None:
    """The applications' elements read through :mod:`atspi_bus`, or None when it cannot run here."""
    try:
        import atspi_bus  # beside this file: the helper runs as a script, its folder on sys.path
    except ImportError:
        try:
            from osw_studio.guest import atspi_bus
        except ImportError:
            return None
    try:
        if not _BUS or _BUS[0].closed:
            _BUS[:] = [atspi_bus.Bus()]
        bus = _BUS[0]
        apps = atspi_bus.desktop_apps(bus)
        bus.connect_directly(apps)
        tops = atspi_bus.walk_trees(bus, apps, max_depth=MAX_DEPTH, max_width=MAX_WIDTH, max_nodes=MAX_NODES)
    except Exception:
        _BUS.clear()
        return None
    builder = _Builder(pyatspi)
    elements = []
    for top in tops:
        element = builder.element(top)
        if element is None:
            break
        elements.append(element)
    return elements


class _Builder:
    """OSWorld's element for each node read by :mod:`atspi_bus`: what :class:`_Walker` writes."""

    def __init__(self, pyatspi: Any) -> None:
        self.state_names = {
            number: name.split("_", 1)[1].lower() for number, name in pyatspi.StateType._enum_lookup.items()
        }
        self.showing = int(pyatspi.STATE_SHOWING)
        self.count = 0

    def element(self, node: Any) -> ET.Element | None:
        self.count += 1
        if self.count > MAX_NODES:
            return None
        attrs: dict[str, str] = {"name": _clean(node.name)}
        for state in node.states:
            state_name = self.state_names.get(state, "")
            if state_name:
                attrs[_q("st", state_name)] = "true"
        for key, value in node.attributes.items():
            if key:
                attrs[_q("attr", key)] = _clean(str(value))
        if node.extents is not None:
            x, y, w, h = node.extents
            attrs[_q("cp", "screencoord")] = str((x, y))
            attrs[_q("cp", "size")] = str((w, h))
        for flag, interface in (("image", "Image"), ("selection", "Selection")):
            if node.has(interface):
                attrs[flag] = "true"
        for key, value in node.values.items():
            attrs[_q("val", key)] = value
        for name, description, binding in node.actions:
            name = name.replace(" ", "-")
            attrs[_q("act", name + "_desc")] = _clean(description or "")
            attrs[_q("act", name + "_kb")] = _clean(binding or "")
        element = ET.Element(_tag(node.role or ""), attrs)
        text = _clean(node.text)
        if text:
            element.text = text
        for child in node.children:
            if child.failed or (node.huge and self.showing not in child.states):
                continue
            sub = self.element(child)
            if sub is None:
                break
            element.append(sub)
        return element


def _active_frames(walker: _Walker, app: Any) -> ET.Element | None:
    """A terminal application's element holding only its active frames (None when it has none)."""
    if (app.name or "").lower() not in TERMINAL_APPS:
        return None
    active = walker.pyatspi.STATE_ACTIVE
    frames = []
    for j in range(min(app.childCount, MAX_WIDTH)):
        child = app.getChildAtIndex(j)
        if child is not None and child.getRoleName() == "frame" and child.getState().contains(active):
            node = walker.node(child, 2)
            if node is not None:
                frames.append(node)
    if not frames:
        return None
    element = ET.Element("application", {"name": _clean(app.name or "")})
    element.extend(frames)
    return element


def serve() -> None:
    """Answer requests on stdin until it closes: one line each, ``tree`` or ``active``.

    Each answer is a line ``ok N`` or ``error N``, then N bytes of UTF-8 (the XML, or the error).
    One long-lived process answers every request of the guest server: starting Python and loading
    pyatspi for each would cost more than the walk itself.
    """
    out = sys.stdout.buffer
    for line in sys.stdin:
        op = line.strip()
        try:
            if op not in ("tree", "active"):
                raise ValueError(f"unknown request {op!r}")
            status, text = "ok", dump(active_only=op == "active")
        except Exception as exc:
            status, text = "error", f"{type(exc).__name__}: {exc}"
        data = text.encode("utf-8", "replace")
        out.write(f"{status} {len(data)}\n".encode() + data)
        out.flush()


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        flags = sys.argv[1:]
        sys.stdout.write(dump(one_call_at_a_time=flags == ["--pyatspi"], bus_only=flags == ["--bus"]))
