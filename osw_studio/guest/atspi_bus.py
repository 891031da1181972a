"""The AT-SPI tree read with many D-Bus calls in flight at once; run by the system Python (``gi``).

pyatspi asks each application one question at a time and waits for each answer: a desktop of a
thousand nodes costs some ten thousand round trips. Here the tree is read a level at a time. For
every node of a level, the questions that need nothing else (name and child count, states,
attributes, interfaces, role) go out together; then those that depend on the answers (extents of
showing nodes, text, value, actions, children); then the next level. The application answers
them in a row, so the walk costs two round trips per level, not a dozen per node.

The answers are those pyatspi gives (the same D-Bus methods of the same objects, and the role names
libatspi derives from role numbers), so :mod:`osw_studio.guest.atspi_dump` writes the same XML. It
needs dbus-python and ``gi`` of the system Python; this file runs as part of that helper script.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_ROOT = "/org/a11y/atspi/accessible/root"
_REGISTRY = "org.a11y.atspi.Registry"
_IFACE = "org.a11y.atspi."
_TIMEOUT_MS = 5000


@dataclass
class Node:
    """What the XML needs of one accessible object."""

    target: tuple[str, str]
    depth: int
    name: str = ""
    child_count: int = 0
    states: list[int] = field(default_factory=list)
    attributes: dict[str, str] = field(default_factory=dict)
    interfaces: frozenset[str] = frozenset()
    role: str = ""
    extents: tuple[int, int, int, int] | None = None
    text: str = ""
    values: dict[str, str] = field(default_factory=dict)
    actions: list[tuple[str, str, str]] = field(default_factory=list)
    children: list[Node] = field(default_factory=list)
    child_targets: list[tuple[str, str]] = field(default_factory=list)
    huge: bool = False
    """More children than the walk reads: only the showing ones are kept."""
    failed: bool = False

    def has(self, interface: str) -> bool:
        """Whether the object implements ``org.a11y.atspi.<interface>``."""
        return _IFACE + interface in self.interfaces


class Bus:
    """A connection to the accessibility bus that sends calls without waiting for their answers.

    dbus-python (Debian's ``python3-dbus``) builds and reads messages in C; with GLib's main loop
    it hands each reply to a callback while :meth:`wait` iterates the loop.
    """

    def __init__(self) -> None:
        import dbus
        import dbus.lowlevel
        import gi
        from dbus.mainloop.glib import DBusGMainLoop

        gi.require_version("Atspi", "2.0")
        from gi.repository import Atspi, GLib

        self.Atspi = Atspi
        self._dbus = dbus
        loop = DBusGMainLoop()
        address = os.environ.get("AT_SPI_BUS_ADDRESS") or self._address(dbus, loop)
        self.connection = dbus.bus.BusConnection(address, mainloop=loop)
        self.context = GLib.MainContext.default()
        self.pending = 0
        self._roles = {
            int(role): str(Atspi.role_get_name(role))
            for role in (Atspi.Role(i) for i in range(int(Atspi.Role.LAST_DEFINED)))
            if role != Atspi.Role.EXTENDED
        }

    @staticmethod
    def _address(dbus: Any, loop: Any) -> str:
        session = dbus.SessionBus(mainloop=loop)
        bus = session.get_object("org.a11y.Bus", "/org/a11y/bus")
        return str(bus.GetAddress(dbus_interface="org.a11y.Bus", timeout=_TIMEOUT_MS / 1000))

    @property
    def closed(self) -> bool:
        """Whether the bus went away (the helper then connects again)."""
        return not bool(self.connection.get_is_connected())

    def call(
        self,
        target: tuple[str, str],
        interface: str,
        method: str,
        args: tuple[str, tuple[Any, ...]] | None,
        done: Callable[[Any], None],
    ) -> None:
        """Send one call; ``done`` gets its reply (one value, or a tuple) or error in :meth:`wait`."""
        bus_name, path = target
        lowlevel = self._dbus.lowlevel
        interface_name = interface if "." in interface else _IFACE + interface
        # Messages built by hand: dbus-python's call_async adds a layer of Python per call.
        message = lowlevel.MethodCallMessage(bus_name, path, interface_name, method)
        if args is not None:
            message.append(*args[1], signature=args[0].strip("()"))

        def reply(answer: Any) -> None:
            self.pending -= 1
            if isinstance(answer, lowlevel.ErrorMessage):  # no such object, interface or method; timeout
                done(RuntimeError(answer.get_error_name()))
                return
            out = answer.get_args_list()
            done(out[0] if len(out) == 1 else tuple(out))

        self.pending += 1
        self.connection.send_message_with_reply(message, reply, _TIMEOUT_MS / 1000, require_main_loop=True)

    def wait(self) -> None:
        """Dispatch answers until every call sent has one."""
        while self.pending:
            self.context.iteration(True)

    def role_name(self, role: int) -> str | None:
        """The name libatspi gives a role number, as pyatspi's ``getRoleName`` (None: ask the app)."""
        return self._roles.get(role)


def _states(words: Any) -> list[int]:
    bits = [int(w) for w in words]
    return [i for i in range(64) if i // 32 < len(bits) and bits[i // 32] >> (i % 32) & 1]


def _first(fill: Callable[[Any], None], node: Node, required: bool = False) -> Callable[[Any], None]:
    """``done`` for a call whose reply's first value ``fill`` stores; a failed call marks ``node``."""

    def done(value: Any) -> None:
        if isinstance(value, Exception):
            if required:
                node.failed = True
            return
        try:
            fill(value)
        except Exception:
            if required:
                node.failed = True

    return done


def _ask_core(bus: Bus, node: Node) -> None:
    t = node.target

    def basics(props: dict[str, Any]) -> None:
        node.name = str(props.get("Name") or "")
        node.child_count = int(props.get("ChildCount") or 0)

    bus.call(
        t,
        "org.freedesktop.DBus.Properties",
        "GetAll",
        ("(s)", (_IFACE + "Accessible",)),
        _first(basics, node, True),
    )
    bus.call(
        t, "Accessible", "GetState", None, _first(lambda v: setattr(node, "states", _states(v)), node, True)
    )
    bus.call(
        t,
        "Accessible",
        "GetAttributes",
        None,
        _first(lambda v: node.attributes.update({str(k): str(x) for k, x in v.items()}), node),
    )
    bus.call(
        t,
        "Accessible",
        "GetInterfaces",
        None,
        _first(lambda v: setattr(node, "interfaces", frozenset(str(i) for i in v)), node, True),
    )

    def role(number: int) -> None:
        name = bus.role_name(int(number))
        if name is not None:
            node.role = name
        else:
            bus.call(
                t, "Accessible", "GetRoleName", None, _first(lambda v: setattr(node, "role", str(v)), node)
            )

    bus.call(t, "Accessible", "GetRole", None, _first(role, node, True))


_VISIBLE, _SHOWING = 30, 25  # AT-SPI state numbers (ATSPI_STATE_VISIBLE, ATSPI_STATE_SHOWING)
_VALUES = (
    ("value", "CurrentValue"),
    ("min", "MinimumValue"),
    ("max", "MaximumValue"),
    ("step", "MinimumIncrement"),
)


def _ask_details(bus: Bus, node: Node, max_depth: int, max_width: int) -> None:
    t = node.target
    if _VISIBLE in node.states and _SHOWING in node.states and node.has("Component"):
        bus.call(
            t,
            "Component",
            "GetExtents",
            ("(u)", (0,)),
            _first(lambda v: setattr(node, "extents", tuple(int(n) for n in v)), node),
        )
    if node.has("Text"):
        bus.call(
            t, "Text", "GetText", ("(ii)", (0, -1)), _first(lambda v: setattr(node, "text", str(v)), node)
        )
    if node.has("Value"):

        def values(props: dict[str, Any]) -> None:
            node.values = {key: str(float(props[name])) for key, name in _VALUES if name in props}

        bus.call(
            t, "org.freedesktop.DBus.Properties", "GetAll", ("(s)", (_IFACE + "Value",)), _first(values, node)
        )
    if node.has("Action"):
        bus.call(t, "Action", "GetActions", None, _first(lambda v: _ask_action_names(bus, node, v), node))
    if node.depth >= max_depth or node.child_count <= 0:
        return
    if node.child_count <= max_width:
        bus.call(
            t,
            "Accessible",
            "GetChildren",
            None,
            _first(lambda v: setattr(node, "child_targets", [(str(c[0]), str(c[1])) for c in v]), node),
        )
        return
    # Huge containers (spreadsheet tables have millions of cells): only the showing ones of the first few.
    node.huge = True
    slots: list[tuple[str, str] | None] = [None] * min(node.child_count, max_width * 4)

    def keep(index: int) -> Callable[[Any], None]:
        return _first(lambda v: slots.__setitem__(index, (str(v[0]), str(v[1]))), node)

    for index in range(len(slots)):
        bus.call(t, "Accessible", "GetChildAtIndex", ("(i)", (index,)), keep(index))
    node.child_targets = slots  # type: ignore[assignment]  # filled in by the replies, Nones dropped later


def _ask_action_names(bus: Bus, node: Node, actions: list[Any]) -> None:
    """Keep descriptions and key bindings; ask for the names (``GetActions`` gives localized ones)."""
    node.actions = [("", str(description), str(binding)) for _, description, binding in actions]

    def name(index: int) -> Callable[[Any], None]:
        def fill(value: Any) -> None:
            node.actions[index] = (str(value), *node.actions[index][1:])

        return _first(fill, node)

    for index in range(len(node.actions)):
        bus.call(node.target, "Action", "GetName", ("(i)", (index,)), name(index))


def walk(
    bus: Bus, roots: list[tuple[str, str]], *, max_depth: int, max_width: int, max_nodes: int
) -> list[Node]:
    """The trees under ``roots`` (applications, at depth 1), read level by level."""
    tops = [Node(target, 1) for target in roots]
    level = tops
    seen = 0
    while level:
        seen += len(level)
        for node in level:
            _ask_core(bus, node)
        bus.wait()
        level = [node for node in level if not node.failed]
        for node in level:
            _ask_details(bus, node, max_depth, max_width)
        bus.wait()
        following: list[Node] = []
        for node in level:
            node.children = [
                Node(t, node.depth + 1)
                for t in node.child_targets
                if t is not None and t[1] != "/org/a11y/atspi/null"
            ]
            following += node.children
        level = following if seen < max_nodes else []
    return [node for node in tops if not node.failed]


def desktop_apps(bus: Bus) -> list[tuple[str, str]]:
    """The applications on the desktop, in the registry's order."""
    found: list[tuple[str, str]] = []
    holder = Node((_REGISTRY, _ROOT), 0)
    bus.call(
        (_REGISTRY, _ROOT),
        "Accessible",
        "GetChildren",
        None,
        _first(lambda v: found.extend((str(c[0]), str(c[1])) for c in v), holder, True),
    )
    bus.wait()
    if holder.failed:
        raise RuntimeError("the AT-SPI registry did not list the applications")
    return found
