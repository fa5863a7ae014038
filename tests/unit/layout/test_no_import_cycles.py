"""No import cycles in the approval layer: every strongly connected component of its imports is one module.

The graph's nodes are the modules of `hitl/` and `server/` (a package's `__init__.py` is the module
named after the package). It has an edge A -> B for every import of B written in A, wherever it
stands: at the top, under `if TYPE_CHECKING:`, or inside a function. `from P import name` imports
the module `P.name` when the layer has one, else `P`; relative imports are resolved the same way.
Importing `P.M` is not counted as importing `P`'s `__init__`: Python runs it first, but
`hitl/__init__.py` names its public API's modules (for type checkers only; it loads them on first
use), so every module of `hitl` would be one cycle with it; an `__init__`'s own imports do count.
Every cycle is reported with the import lines that close it; none is allowed.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
LAYER = ("hitl", "server")


def module_name(path: Path) -> str:
    """`hitl/gate/gate.py` -> `hitl.gate.gate`; `hitl/gate/__init__.py` -> `hitl.gate`."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer_modules() -> dict[str, Path]:
    """Every module of the layer, by dotted name (the scaffold's templates are not modules)."""
    return {
        module_name(path): path
        for folder in LAYER
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "templates" not in path.relative_to(ROOT).parts
    }


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, int]]:
    """The layer modules `name` imports, each with the line of its import statement."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                found.append((submodule if submodule in modules else source, node.lineno))
    return [(target, line) for target, line in found if target in modules and target != name]


def import_graph() -> dict[str, dict[str, int]]:
    """For each layer module, the layer modules it imports and the first line importing each."""
    modules = layer_modules()
    graph: dict[str, dict[str, int]] = defaultdict(dict)
    for name, path in modules.items():
        graph[name] = {}
        for target, line in imports_of(name, path, modules):
            graph[name].setdefault(target, line)
    return graph


def reachable(graph: dict[str, dict[str, int]], start: str) -> set[str]:
    """Every module `start` imports, directly or through others."""
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += graph.get(module, {})
    return seen


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The graph's strongly connected components: modules that reach each other, each with itself."""
    reach = {module: reachable(graph, module) for module in graph}
    components: list[list[str]] = []
    placed: set[str] = set()
    for module in sorted(graph):
        if module not in placed:
            component = sorted({module} | {other for other in reach[module] if module in reach[other]})
            placed.update(component)
            components.append(component)
    return components


def describe(component: list[str], graph: dict[str, dict[str, int]]) -> str:
    """A cycle in words: its modules, and each import inside it (`a -> b (a.py:12)`)."""
    members, paths = set(component), layer_modules()
    edges = [
        f"  {source} -> {target} ({paths[source].relative_to(ROOT)}:{line})"
        for source in component
        for target, line in sorted(graph[source].items())
        if target in members
    ]
    return " <-> ".join(component) + "\n" + "\n".join(edges)


def test_the_graph_sees_every_kind_of_import():
    """the graph counts top-level, `TYPE_CHECKING` and function-local imports, and `from P import module`."""
    graph = import_graph()
    assert "hitl.policy.gates" in graph["hitl.gate.gate"]  # top level, `from M import name`
    assert "hitl.gate.batched" in graph["hitl.gate.gate"]  # `from hitl.gate import batched`
    assert "hitl.deep_agent" in graph["hitl"]  # under `if TYPE_CHECKING:`
    assert "hitl.policy.served" in graph["hitl.cli.main"]  # inside a function


def test_the_search_finds_a_cycle_when_there_is_one():
    """a made-up graph with a cycle of three, a module importing into it and one alone: one cycle found."""
    graph = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}, "e": {}}
    assert sorted(c for c in strongly_connected(graph) if len(c) > 1) == [["a", "b", "c"]]


def test_no_module_of_the_layer_imports_itself_back():
    """no strongly connected component of hitl/ and server/ holds two modules; every cycle is listed."""
    graph = import_graph()
    cycles = [describe(c, graph) for c in strongly_connected(graph) if len(c) > 1]
    assert cycles == [], "import cycles in the approval layer:\n" + "\n".join(cycles)
