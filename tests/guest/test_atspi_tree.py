"""An application's ``Collection.GetTree`` listing put back into its tree (``atspi_bus._assemble``)."""

from __future__ import annotations

import pytest

from osw_studio.guest.atspi_bus import _MANAGES_DESCENDANTS, _SHOWING, _VISIBLE, Node, _assemble, _Unlisted

APP = ":1.5"


def _listing(*rows: tuple[str, str, int, list[int]]) -> tuple[list[Node], list[tuple[str, str]]]:
    """Nodes in listing order from ``(path, parent path, child count, states)`` rows."""
    nodes = [
        Node((APP, path), 0, name=path, child_count=count, states=states) for path, _, count, states in rows
    ]
    return nodes, [(APP, parent) for _, parent, _, _ in rows]


def _shape(node: Node) -> object:
    return (node.name, node.depth, [_shape(child) for child in node.children])


def test_a_depth_first_listing_becomes_the_tree() -> None:
    nodes, parents = _listing(
        ("root", "desktop", 2, []),
        ("frame", "root", 2, []),
        ("menu", "frame", 0, []),
        ("panel", "frame", 1, []),
        ("label", "panel", 0, []),
        ("dialog", "root", 0, []),
    )
    top, managing = _assemble(nodes, parents, max_depth=50, max_width=1024)
    assert _shape(top) == (
        "root",
        1,
        [("frame", 2, [("menu", 3, []), ("panel", 3, [("label", 4, [])])]), ("dialog", 2, [])],
    )
    assert managing == []


def test_children_of_a_node_that_manages_them_are_left_to_read_level_by_level() -> None:
    nodes, parents = _listing(
        ("root", "desktop", 2, []),
        ("table", "root", 1_000_000, [_MANAGES_DESCENDANTS]),  # the bridge lists none of its cells
        ("status", "root", 0, []),
    )
    top, managing = _assemble(nodes, parents, max_depth=50, max_width=1024)
    assert [child.name for child in top.children] == ["table", "status"]
    assert [node.name for node in managing] == ["table"]
    assert top.children[0].children == []


def test_a_listing_short_of_a_child_is_refused() -> None:
    """A child the toolkit could not give leaves a gap the depth-first order cannot place: not guessed."""
    nodes, parents = _listing(
        ("root", "desktop", 2, []),
        ("frame", "root", 2, []),  # says 2 children, lists 1
        ("button", "frame", 0, []),
        ("dialog", "root", 0, []),
    )
    with pytest.raises(_Unlisted):
        _assemble(nodes, parents, max_depth=50, max_width=1024)
    extra, extra_parents = _listing(("root", "desktop", 0, []), ("stray", "root", 0, []))
    with pytest.raises(_Unlisted):
        _assemble(extra, extra_parents, max_depth=50, max_width=1024)


def test_depth_width_and_extents_follow_the_level_walk() -> None:
    nodes, parents = _listing(
        ("root", "desktop", 1, []),
        ("list", "root", 5, []),
        *((f"item{i}", "list", 0, [_VISIBLE, _SHOWING] if i == 0 else [_VISIBLE]) for i in range(5)),
    )
    for node in nodes:
        node.extents = (1, 2, 3, 4)
    top, _ = _assemble(nodes, parents, max_depth=50, max_width=2)
    listed = top.children[0]
    assert listed.huge and [child.name for child in listed.children] == [f"item{i}" for i in range(5)]
    assert [child.extents for child in listed.children] == [(1, 2, 3, 4)] + [None] * 4  # showing ones only
    shallow, _ = _assemble(
        *_listing(("root", "desktop", 1, []), ("list", "root", 0, [])), max_depth=1, max_width=9
    )
    assert shallow.children == []  # below the depth limit: read, not kept
