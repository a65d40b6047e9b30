"""The house's shape, read from the import graph: the engine never imports a surface, no module waits on itself
through a cycle, and the surfaces use only the engine's public API."""
from __future__ import annotations

import ast
from pathlib import Path

from support import REPO

PACKAGES = ("indexer", "webapp")
WEB_LIBRARIES = {"flask", "werkzeug", "jinja2", "htmx_flask", "markupsafe"}  # the engine returns data, not markup
# What a surface may import of the engine (indexer/__init__.py says the same).
PUBLIC = {"indexer", "indexer.engine", "indexer.home", "indexer.config", "indexer.errors", "indexer.limits"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for package in PACKAGES for p in sorted((REPO / package).rglob("*.py"))}


def _type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def imports(name: str, path: Path, known: set[str]) -> list[tuple[str, bool]]:
    """(imported module, imported at module level) for every import in a file; relative imports resolved, and
    `from package import module` counted as the module. Imports only for type checkers are left out."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, top: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                continue
            inner = top and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((alias.name, top) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                for alias in child.names:
                    sub = f"{base}.{alias.name}"
                    found.append((sub if sub in known else base, top))
            visit(child, inner)

    visit(ast.parse(path.read_text(), str(path)), True)
    return found


def graph() -> dict[str, list[tuple[str, bool]]]:
    mods = modules()
    return {name: imports(name, path, set(mods)) for name, path in mods.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the directed graph (as the list of its modules, first repeated last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := walk(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := walk(node)):
            return found
    return None


def test_the_engine_never_imports_a_surface_or_a_web_library():
    wrong = [(name, target) for name, targets in graph().items() if name.split(".")[0] == "indexer"
             for target, _ in targets
             if target.split(".")[0] == "webapp" or target.split(".")[0] in WEB_LIBRARIES]
    assert wrong == [], "indexer/ is pure Python: " + ", ".join(f"{a} imports {b}" for a, b in wrong)


def test_no_module_imports_itself_through_a_cycle():
    edges = {name: {t for t, top in targets if top and t in modules() and t != name}
             for name, targets in graph().items()}
    cycle = find_cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "d": {"a", "c"}}) is None


def test_surfaces_use_only_the_engines_public_api():
    wrong = sorted({(name, target) for name, targets in graph().items() if name.split(".")[0] == "webapp"
                    for target, _ in targets if target.split(".")[0] == "indexer" and target not in PUBLIC})
    assert wrong == [], ("webapp/ reaches into the engine; import from indexer (or its engine, home, config, "
                         "errors, limits modules): " + ", ".join(f"{a} imports {b}" for a, b in wrong))


def test_the_graph_sees_every_kind_of_import():
    """The checks above pass only on a graph that holds the imports they judge."""
    g = graph()
    assert ("indexer.search.index", True) in g["indexer.engine"]  # a relative import at module level
    assert ("indexer.mindmap.mindmaps", False) in g["indexer.engine"]  # a lazy import inside a method
    assert ("webapp.api.search", True) in g["webapp.api"]  # `from . import search`: the module, not the package
    assert ("indexer", False) in g["webapp.cli"]  # absolute, inside a command


def test_tests_take_their_helpers_from_support_only():
    """One import path for test helpers: tests/support.py (conftest holds fixtures, which pytest hands out)."""
    wrong = sorted({f"{path.name} imports {target}" for path in (REPO / "tests").glob("*.py")
                    for target, _ in imports(path.stem, path, set()) if target.split(".")[0] in ("conftest", "tests")})
    assert wrong == [], "import helpers from support: " + ", ".join(wrong)
