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
_NULL_PATH = "/org/a11y/atspi/null"


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


class _Line:
    """One D-Bus connection (the accessibility bus, or an application's own) and its calls in flight."""

    def __init__(self, connection: Any, lowlevel: Any) -> None:
        self.connection = connection
        self.waiting: dict[int, Callable[[Any], None]] = {}
        self._lowlevel = lowlevel
        connection.add_message_filter(self._on_message)

    def _on_message(self, _connection: Any, message: Any) -> int:
        done = self.waiting.pop(message.get_reply_serial(), None)  # signals and calls have none
        if done is None:
            return int(self._lowlevel.HANDLER_RESULT_NOT_YET_HANDLED)
        if isinstance(message, self._lowlevel.ErrorMessage):  # no such object, interface or method
            done(RuntimeError(message.get_error_name()))
        else:
            out = message.get_args_list()
            done(out[0] if len(out) == 1 else tuple(out))
        return int(self._lowlevel.HANDLER_RESULT_HANDLED)


class Bus:
    """Connections to the accessibility bus and the applications, sending calls without waiting.

    dbus-python (Debian's ``python3-dbus``) builds and reads messages in C. Replies are matched to
    their calls by serial in one message filter per connection, not through a pending call each
    (which costs a GLib timeout source per call, more than the message itself); :meth:`wait`
    iterates GLib's main loop until every call has its answer, or fails those still unanswered after
    :data:`_TIMEOUT_MS`. Applications whose bridge offers a connection of their own
    (``GetApplicationBusAddress``, as libatspi uses) are asked through it (:meth:`connect_directly`):
    their calls skip the bus daemon, which otherwise relays every call and reply.
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
        self._glib = GLib
        self._loop = DBusGMainLoop()
        address = os.environ.get("AT_SPI_BUS_ADDRESS") or self._address(dbus, self._loop)
        self.connection = dbus.bus.BusConnection(address, mainloop=self._loop)
        self.context = GLib.MainContext.default()
        self._bus_line = _Line(self.connection, dbus.lowlevel)
        self._direct: dict[str, _Line] = {}
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

    @property
    def pending(self) -> int:
        """Calls sent that have no answer yet."""
        return sum(len(line.waiting) for line in self._lines())

    def _lines(self) -> list[_Line]:
        return [self._bus_line, *self._direct.values()]

    def connect_directly(self, apps: list[tuple[str, str]]) -> None:
        """Open (or keep) a connection of its own to each of ``apps`` that offers one; forget the rest."""
        names = {name for name, _ in apps}
        for name in [n for n, line in self._direct.items() if n not in names or not _connected(line)]:
            self._direct.pop(name).connection.close()
        addresses: dict[str, str] = {}

        def keep(name: str) -> Callable[[Any], None]:
            return lambda v: addresses.__setitem__(name, "" if isinstance(v, Exception) else str(v))

        for app in apps:
            if app[0] not in self._direct:
                self.call(app, "Application", "GetApplicationBusAddress", None, keep(app[0]))
        self.wait()
        for name, address in addresses.items():
            if not address:
                continue
            try:
                connection = self._dbus.connection.Connection(address, mainloop=self._loop)
            except Exception:  # a socket gone or refused: ask through the bus
                continue
            self._direct[name] = _Line(connection, self._dbus.lowlevel)

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
        interface_name = interface if "." in interface else _IFACE + interface
        message = self._dbus.lowlevel.MethodCallMessage(bus_name, path, interface_name, method)
        if args is not None:
            message.append(*args[1], signature=args[0][1:-1])
        line = self._direct.get(bus_name, self._bus_line)
        line.waiting[line.connection.send_message(message)] = done

    def wait(self) -> None:
        """Dispatch answers until every call sent has one; calls unanswered in time fail."""
        if not self.pending:
            return
        late = [False]

        def give_up() -> bool:
            late[0] = True
            return False

        timer = self._glib.timeout_add(_TIMEOUT_MS, give_up)
        try:
            while not late[0] and any(line.waiting for line in self._lines()):
                self.context.iteration(True)
        finally:
            if not late[0]:
                self._glib.source_remove(timer)
        for line in self._lines():  # an application that never answered (hung, or gone with its calls)
            while line.waiting:
                _, done = line.waiting.popitem()
                done(RuntimeError("org.freedesktop.DBus.Error.NoReply"))

    def role_name(self, role: int) -> str | None:
        """The name libatspi gives a role number, as pyatspi's ``getRoleName`` (None: ask the app)."""
        return self._roles.get(role)


def _connected(line: _Line) -> bool:
    return bool(line.connection.get_is_connected())


def _states(words: Any) -> list[int]:
    """The state numbers set in AT-SPI's state words (32 states a word), smallest first.

    Examples:
        >>> _states([(1 << 25) | (1 << 30) | 2, 1])
        [1, 25, 30, 32]
    """
    bits = 0
    for shift, word in enumerate(words):
        bits |= int(word) << (32 * shift)
    bits &= (1 << 64) - 1
    found = []
    while bits:
        lowest = bits & -bits
        found.append(lowest.bit_length() - 1)
        bits ^= lowest
    return found


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
    _ask_state_and_role(bus, node)
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


def _ask_state_and_role(bus: Bus, node: Node) -> None:
    t = node.target
    bus.call(
        t, "Accessible", "GetState", None, _first(lambda v: setattr(node, "states", _states(v)), node, True)
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


# AT-SPI state numbers (ATSPI_STATE_VISIBLE, ATSPI_STATE_SHOWING, ATSPI_STATE_MANAGES_DESCENDANTS)
_VISIBLE, _SHOWING, _MANAGES_DESCENDANTS = 30, 25, 31
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
    _ask_children(bus, node, max_depth, max_width)


def _ask_children(bus: Bus, node: Node, max_depth: int, max_width: int) -> None:
    t = node.target
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
    _walk_levels(bus, tops, max_depth=max_depth, max_width=max_width, max_nodes=max_nodes)
    return [node for node in tops if not node.failed]


def _walk_levels(bus: Bus, level: list[Node], *, max_depth: int, max_width: int, max_nodes: int) -> None:
    """Read ``level`` (nodes known by their targets alone) and the levels below it."""
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
        level = _children_of(level) if seen < max_nodes else []


def _children_of(parents: list[Node]) -> list[Node]:
    """Nodes for the ``child_targets`` of ``parents``, attached to them (null references dropped)."""
    following: list[Node] = []
    for node in parents:
        node.children = [
            Node(t, node.depth + 1) for t in node.child_targets if t is not None and t[1] != _NULL_PATH
        ]
        following += node.children
    return following


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


_TREE_ARGS: tuple[str, tuple[Any, ...]] = (
    "((aiia{ss}iaiiasib)as)",
    (([], 0, {}, 0, [], 0, [], 0, False), []),
)
"""``Collection.GetTree``'s arguments: a match rule (which the bridge ignores) and no property names
(all of them)."""

_TREE_INTERFACES = {
    "Action.": "Action",
    "Component.": "Component",
    "Image.": "Image",
    "Selection.": "Selection",
    "Text.": "Text",
    "Value.": "Value",
}
"""The prefix of an interface's properties in a ``GetTree`` listing: a node lists them if it has it."""


class _Unlisted(Exception):
    """An application's ``GetTree`` listing does not line up with the children its nodes report."""


def walk_trees(
    bus: Bus, roots: list[tuple[str, str]], *, max_depth: int, max_width: int, max_nodes: int
) -> list[Node]:
    """The trees under ``roots``, as :func:`walk` reads them, each in one listing where the app has one.

    ATK's bridge (GTK and other ATK toolkits) answers ``org.a11y.atspi.Collection.GetTree`` on an
    application with every node below it, in the order a depth-first walk meets them, each with its
    properties: name, child count, parent, attributes, extents (``Component.ScreenExtents``), values,
    number of actions and of characters, and which interfaces it has (the prefixes of its property
    names). What that leaves (states, role, action names, text) is asked of all nodes at once. The
    bridge lists no children of a node that manages its descendants (huge tables): those, and
    applications without ``GetTree`` (Qt) or whose listing does not line up with the child counts, are
    read level by level as :func:`walk` does.
    """
    listings: dict[tuple[str, str], Any] = {}

    def keep(root: tuple[str, str]) -> Callable[[Any], None]:
        return lambda listing: listings.__setitem__(root, listing)

    for root in roots:
        bus.call(root, "Collection", "GetTree", _TREE_ARGS, keep(root))
    bus.wait()
    listed: dict[tuple[str, str], tuple[list[Node], list[tuple[str, str]]]] = {}
    for root in roots:
        listing = listings.get(root)
        if isinstance(listing, Exception) or not listing or len(listing) > 2 * max_nodes:
            continue
        nodes, parents = [], []
        for reference, props in listing:
            node = _listed_node((str(reference[0]), str(reference[1])), props)
            nodes.append(node)
            parent = props.get("Parent") or ("", "")
            parents.append((str(parent[0]), str(parent[1])))
            _ask_listed(bus, node, props)
        listed[root] = (nodes, parents)
    bus.wait()
    tops: dict[tuple[str, str], Node] = {}
    managing: list[Node] = []
    for root, (nodes, parents) in listed.items():
        try:
            top, unlisted = _assemble(nodes, parents, max_depth, max_width)
        except (_Unlisted, RecursionError):
            continue
        if top.target == root:
            tops[root] = top
            managing += unlisted
    for node in managing:
        _ask_children(bus, node, max_depth, max_width)
    bus.wait()
    unread = {root: Node(root, 1) for root in roots if root not in tops}
    level = _children_of(managing) + list(unread.values())
    _walk_levels(bus, level, max_depth=max_depth, max_width=max_width, max_nodes=max_nodes)
    ordered = [tops.get(root) or unread[root] for root in roots]
    return [node for node in ordered if not node.failed]


def _listed_node(target: tuple[str, str], props: dict[str, Any]) -> Node:
    """A node with what a ``GetTree`` listing says of it (its extents are dropped later unless showing)."""
    node = Node(target, 0, name=str(props.get("Name") or ""), child_count=int(props.get("ChildCount") or 0))
    node.attributes = {str(k): str(x) for k, x in (props.get("Attributes") or {}).items()}
    prefixes = {key[: key.find(".") + 1] for key in props}
    node.interfaces = frozenset(_IFACE + _TREE_INTERFACES[p] for p in prefixes if p in _TREE_INTERFACES)
    extents = props.get("Component.ScreenExtents")
    if extents is not None:  # unsigned on the wire: positions left of or above the screen wrap around
        node.extents = tuple(int(n) - (1 << 32) if int(n) >= 1 << 31 else int(n) for n in extents)  # type: ignore[assignment]
    if node.has("Value"):
        node.values = {
            key: str(float(props["Value." + name])) for key, name in _VALUES if "Value." + name in props
        }
    return node


def _ask_listed(bus: Bus, node: Node, props: dict[str, Any]) -> None:
    """Ask what a listing does not say: states and role; the text and actions, if it has any."""
    t = node.target
    _ask_state_and_role(bus, node)
    if node.has("Text") and int(props.get("Text.CharacterCount") or 0) > 0:
        bus.call(
            t, "Text", "GetText", ("(ii)", (0, -1)), _first(lambda v: setattr(node, "text", str(v)), node)
        )
    if node.has("Action") and int(props.get("Action.NActions") or 0) > 0:
        bus.call(t, "Action", "GetActions", None, _first(lambda v: _ask_action_names(bus, node, v), node))


def _assemble(
    nodes: list[Node], parents: list[tuple[str, str]], max_depth: int, max_width: int
) -> tuple[Node, list[Node]]:
    """The tree a listing describes, and its nodes whose children it does not list (they manage them).

    Raises:
        _Unlisted: If a node's listed children are not the number it reports (a child the toolkit
            could not give, a listing taken while the tree changed).
    """
    index = 0
    managing: list[Node] = []

    def take(depth: int) -> Node:
        nonlocal index
        node = nodes[index]
        index += 1
        node.depth = depth
        if node.extents is not None and not (_VISIBLE in node.states and _SHOWING in node.states):
            node.extents = None
        if _MANAGES_DESCENDANTS in node.states:
            if depth < max_depth and node.child_count > 0:
                managing.append(node)
            return node
        children: list[Node] = []
        while len(children) < node.child_count and index < len(nodes) and parents[index] == node.target:
            children.append(take(depth + 1))
        if len(children) != node.child_count:
            raise _Unlisted(f"{node.target} lists {len(children)} of its {node.child_count} children")
        if depth < max_depth:
            node.huge = node.child_count > max_width
            node.children = children[: max_width * 4] if node.huge else children
        return node

    top = take(1)
    if index != len(nodes):
        raise _Unlisted(f"{len(nodes) - index} nodes listed outside the tree")
    return top, managing
