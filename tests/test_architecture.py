"""The house's shape, read from the import graph: the engine never imports a surface, no module waits on itself
through a cycle, and the surfaces use only the engine's public API."""
from __future__ import annotations

import ast
import re
from pathlib import Path

from support import REPO

PACKAGES = ("indexer", "webapp")
WEB_LIBRARIES = {"flask", "werkzeug", "jinja2", "htmx_flask", "markupsafe"}  # the engine returns data, not markup
# What a surface may import of the engine (indexer/__init__.py says the same).
PUBLIC = {"indexer", "indexer.engine", "indexer.home", "indexer.config", "indexer.errors", "indexer.contract"}
CONTRACT = "indexer.contract"  # requests, answers, rows, filters, limits and the route table: any surface reads them


def public(module: str) -> bool:
    return module in PUBLIC or module.startswith(CONTRACT + ".")


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
                    for target, _ in targets if target.split(".")[0] == "indexer" and not public(target)})
    assert wrong == [], ("webapp/ reaches into the engine; import from indexer (or its engine, home, config, "
                         "errors modules, or the contract): " + ", ".join(f"{a} imports {b}" for a, b in wrong))


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


# --- what the search request, the one parse and the reads modules make true ---------------------------------

def all_imports(name: str, path: Path, known: set[str]) -> list[str]:
    """Every module a file imports: at module level, inside functions and for type checkers alike."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            found += [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
    return found


def test_no_import_cycle_at_any_level():
    """Not even through an import inside a function or one for type checkers: two modules that need each other
    are one module, or a third is missing."""
    mods = modules()
    edges = {name: {t for t in all_imports(name, path, set(mods)) if t in mods and t != name}
             for name, path in mods.items()}
    cycle = find_cycle(edges)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


ROOMS = ("indexer.contract", "indexer.text", "indexer.model", "indexer.ingest", "indexer.store", "indexer.search",
         "indexer.graph", "indexer.mindmap", "indexer.content")


def test_the_contract_is_the_ground_floor():
    """indexer/contract/ imports nothing of the house but the errors: every room and surface may read it, and it
    reads none of them."""
    mods = modules()
    wrong = sorted({f"{name} imports {target}" for name, path in mods.items() if name.startswith(CONTRACT)
                    for target in all_imports(name, path, set(mods))
                    if target.split(".")[0] in PACKAGES and not target.startswith(CONTRACT)
                    and target != "indexer.errors"})
    assert wrong == [], "the contract reaches up: " + ", ".join(wrong)


def test_no_cycle_between_the_engines_rooms():
    """text/, model/, ingest/, store/, search/, graph/, mindmap/ and content/ depend on each other one way."""
    mods = modules()

    def room(module: str) -> str | None:
        return next((r for r in ROOMS if module == r or module.startswith(r + ".")), None)

    edges: dict[str, set[str]] = {}
    for name, path in mods.items():
        for target in all_imports(name, path, set(mods)):
            a, b = room(name), room(target)
            if a and b and a != b:
                edges.setdefault(a, set()).add(b)
    cycle = find_cycle(edges)
    assert cycle is None, "rooms that import each other: " + " -> ".join(cycle)


READS = {"indexer.search.chunk_reads", "indexer.search.note_reads"}
SQL = re.compile(r"^\s*(SELECT|WITH|INSERT|UPDATE|DELETE)\b|\bFROM\s+(chunks|documents|tags|links|json_each)\b")
# The read side's connections: they run a SELECT given to them, and ask none of their own.
ADAPTERS = {"indexer.search.index", "indexer.search.hnsw"}
READ_SIDE = ("indexer.search", "indexer.graph", "indexer.mindmap", "indexer.engine")


def sql_in(path: Path) -> list[str]:
    """The SQL a module holds (string constants that begin a SELECT) and the queries it runs itself."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.search(node.value):
            found.append(f"line {node.lineno}: {node.value.strip()[:50]!r}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("sql", "sql_in", "execute", "executemany", "rows_in"):
            found.append(f"line {node.lineno}: .{node.func.attr}(...)")
    return found


def test_the_read_side_asks_its_questions_only_through_the_reads_modules():
    """Every SELECT of search, explain, Cluster View and mind-map node search is a named function of chunk_reads.py
    or note_reads.py; no leg holds SQL or runs a query, and none imports an SQL helper of the store."""
    mods = modules()
    wrong = {}
    for name, path in mods.items():
        if not name.startswith(READ_SIDE) or name in READS:
            continue
        held = [f for f in sql_in(path) if name not in ADAPTERS or not f.endswith("(...)")]
        helpers = [t for t in all_imports(name, path, set(mods)) if t == "indexer.store.database"
                   and name not in ADAPTERS]
        if held or helpers:
            wrong[name] = held + [f"imports {h}" for h in helpers]
    assert wrong == {}, "SQL outside the reads modules: " + "; ".join(f"{k}: {v[:3]}" for k, v in wrong.items())
    assert sql_in(mods["indexer.search.chunk_reads"]), "the check reads SQL where it is"


# (the /api door builds each request with its route's reader, SearchRequest.from_params or a sibling: test_contract)
SURFACE_SEARCHES = ("webapp.ui.search", "webapp.ui.strip", "webapp.ui.help", "webapp.cli",
                    "webapp.client", "webapp.mcp_tools.search", "webapp.mcp_link")


def test_surfaces_hand_the_engine_a_search_request():
    """Every surface that searches builds one SearchRequest and passes it whole: no call to a search with loose
    keyword arguments (mode=, tags_all=, ...), and each imports SearchRequest."""
    mods = modules()
    loose = {"mode", "tags_all", "tags_any", "scope", "explain", "explain_document", "group", "filters"}
    wrong = []
    for name in SURFACE_SEARCHES:
        tree = ast.parse(mods[name].read_text())
        if "indexer" not in [t for t in all_imports(name, mods[name], set(mods))] and \
                "SearchRequest" not in {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                                        for a in n.names}:
            wrong.append(f"{name} does not import SearchRequest")
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                    "search", "vault_search") and {k.arg for k in node.keywords} & loose:
                wrong.append(f"{name} line {node.lineno}: {node.func.attr}() with loose arguments")
    assert wrong == [], "; ".join(wrong)


def test_no_class_name_is_defined_twice_in_the_engine_and_the_surfaces():
    """Issue 60: four answers and DocumentRow were each defined twice with different fields (the contract's and
    MCP's, the contract's row and the ingest side's); one name, one class, so a reader never meets the wrong one."""
    import ast
    import collections

    defined = collections.defaultdict(list)
    for path in sorted([*(REPO / "indexer").rglob("*.py"), *(REPO / "webapp").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                defined[node.name].append(str(path.relative_to(REPO)))
    twice = {name: paths for name, paths in defined.items() if len(paths) > 1}
    assert not twice, f"rename one of each (MCP's output shapes are Compact*, the stored rows Stored*): {twice}"


def test_the_questions_never_import_the_files_in():
    """Issue 60: ingest/ held three concerns under "files in" (30 import lines of search/, store/, graph/ and
    mindmap/ reached into it for text analysis and the models). What the index and the questions share is text/,
    the models model/; search/ reads neither files nor extractors, and text/ and model/ import no room above them."""
    mods = modules()
    wrong = sorted({f"{name} imports {target}" for name, path in mods.items()
                    if name.startswith(("indexer.search", "indexer.text", "indexer.model"))
                    for target in all_imports(name, path, set(mods)) if target.startswith("indexer.ingest")})
    assert wrong == [], "put what both sides need in indexer/text/ or indexer/model/: " + ", ".join(wrong)
    above = sorted({f"{name} imports {target}" for name, path in mods.items() if name.startswith("indexer.text")
                    for target in all_imports(name, path, set(mods))
                    if target.startswith("indexer.") and not target.startswith(("indexer.text", "indexer.errors"))})
    assert above == [], "text/ is the ground the rooms stand on: " + ", ".join(above)
