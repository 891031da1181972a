"""No module of the package imports itself back, directly or through others.

``lint-imports`` enforces the same with its ``acyclic_siblings`` contract (packages squashed); this test
looks at single modules, so a circle inside one package is named module by module.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]


def _contract() -> dict[str, object]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in contracts if c["type"] == "acyclic_siblings"]
    return dict(contract)


def _circles(graph: grimp.ImportGraph, ignored: set[tuple[str, str]]) -> list[list[str]]:
    """The module groups that import each other (strongly connected, more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if not imported.startswith("osw_studio") or (module, imported) in ignored:
                continue
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for module in sorted(graph.modules):
        if module.startswith("osw_studio") and module not in index:
            visit(module)
    return circles


def test_the_contract_forbids_circles_across_the_whole_package() -> None:
    contract = _contract()
    assert contract["ancestors"] == ["osw_studio"]
    assert "depth" not in contract  # every level down


def test_no_module_imports_itself_back() -> None:
    ignored = {
        (a.strip(), b.strip())
        for a, b in (line.split("->") for line in _contract().get("ignore_imports", []))  # type: ignore[attr-defined]
    }
    graph = grimp.build_graph("osw_studio")
    assert _circles(graph, ignored) == []
