"""The `.mmdata` mind map file: reading, checking and writing it, and walking its tree of nodes.

The file is JSON (see docs/mindmap-format.md). It is the live, authoritative map: the index only holds a derived
copy of its searchable parts, never its attachments or private notes.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ...errors import MapFormatError, NodeNotFound

SUFFIX = ".mmdata"
FORMAT_NAME = "skmemory-mindmap"
MAX_NODES = 10_000  # a map larger than this is several maps; the bounds keep saving and indexing fast
MAX_DEPTH = 100
FORMAT_VERSION = 1  # the newest version of the file this code reads and writes
_NODE_KEYS = ("id", "parent", "title", "body", "tags", "relationships", "attachments", "private_notes")
_MAP_KEYS = ("format", "version", "title", "revision", "nodes")


@dataclass
class Relationship:
    """A typed edge from one node to another node of the same map, such as 'depends on'."""

    type: str
    target: str


@dataclass
class Node:
    """One node of a map. Attachments and private notes belong to the map file only, never to the index."""

    id: str
    parent: str | None
    title: str
    body: str = ""
    tags: list[str] = field(default_factory=list)
    relationships: list[Relationship] = field(default_factory=list)
    attachments: list[dict] = field(default_factory=list)
    private_notes: str = ""
    extra: dict = field(default_factory=dict)  # keys another tool wrote, kept on save

    def to_json(self) -> dict:
        return {"id": self.id, "parent": self.parent, "title": self.title, "body": self.body, "tags": self.tags,
                "relationships": [{"type": r.type, "target": r.target} for r in self.relationships],
                "attachments": self.attachments, "private_notes": self.private_notes, **self.extra}


@dataclass
class MindMap:
    """A whole map: title, revision and nodes in outline order (a parent's children in list order)."""

    title: str
    revision: int
    nodes: list[Node]
    version: int = FORMAT_VERSION
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_id = {n.id: n for n in self.nodes}
        self._children: dict[str | None, list[Node]] = {}
        self.incoming: dict[str, list[tuple[Node, Relationship]]] = {}  # target id -> (source, relationship)
        for node in self.nodes:
            self._children.setdefault(node.parent, []).append(node)
            for rel in node.relationships:
                if rel.target != node.id:
                    self.incoming.setdefault(rel.target, []).append((node, rel))

    def node(self, node_id: str) -> Node:
        """Return a node by id, or raise NodeNotFound saying which map lacks it."""
        try:
            return self.by_id[node_id]
        except KeyError:
            raise NodeNotFound(f"The mind map '{self.title}' has no node '{node_id}' (it may have been deleted); "
                               "search again with mindmap_search_nodes for current node ids.") from None

    def children(self, node_id: str | None) -> list[Node]:
        """The children of a node in outline order; node_id None gives the roots."""
        return list(self._children.get(node_id, []))

    def ancestors(self, node_id: str) -> list[Node]:
        """The nodes from the root down to the node's parent."""
        chain: list[Node] = []
        parent = self.by_id[node_id].parent
        while parent is not None:
            chain.append(self.by_id[parent])
            parent = self.by_id[parent].parent
        return chain[::-1]

    def path(self, node_id: str) -> list[str]:
        """The titles from the root to the node, the node's own title last."""
        return list(self._path(node_id))

    def _path(self, node_id: str) -> tuple[str, ...]:
        # Each node's path is its parent's plus its title: built once per node, not once per ancestor.
        paths = self.__dict__.setdefault("_paths", {})
        pending = []
        current: str | None = node_id
        while current is not None and current not in paths:
            pending.append(current)
            current = self.by_id[current].parent
        base = paths[current] if current is not None else ()
        for nid in reversed(pending):
            base = paths[nid] = base + (self.by_id[nid].title,)
        return paths[node_id]

    def level(self, node_id: str) -> int:
        """The depth of a node: 0 for a root."""
        return len(self._path(node_id)) - 1

    def walk(self) -> list[Node]:
        """Every node depth-first in outline order (parents before their children)."""
        out: list[Node] = []
        stack = list(reversed(self.children(None)))
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(reversed(self.children(node.id)))
        return out

    def to_json(self) -> dict:
        return {"format": FORMAT_NAME, "version": FORMAT_VERSION, "title": self.title, "revision": self.revision,
                **self.extra, "nodes": [n.to_json() for n in self.nodes]}


def dumps(mind_map: MindMap) -> str:
    """The file text of a map: indented JSON, one key per line, so a diff shows what changed."""
    return json.dumps(mind_map.to_json(), ensure_ascii=False, indent=2) + "\n"


def loads(text: str | bytes, where: str = "The map") -> MindMap:
    """Parse file text into a MindMap, raising MapFormatError with a sentence that says what to fix."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise MapFormatError(f"{where} is not valid JSON ({exc}).") from None
    return from_json(value, where)


def from_json(value: Any, where: str = "The map") -> MindMap:
    """Check a decoded JSON value against the format and build the MindMap it describes."""
    if not isinstance(value, dict):
        raise MapFormatError(f"{where} must be a JSON object with 'title', 'revision' and 'nodes'.")
    if value.get("format", FORMAT_NAME) != FORMAT_NAME:
        raise MapFormatError(f"{where} has format {value.get('format')!r}; a mind map has format '{FORMAT_NAME}'.")
    version = value.get("version", FORMAT_VERSION)
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= FORMAT_VERSION:
        raise MapFormatError(f"{where} is format version {version!r}; this SK Memory reads versions 1 to "
                             f"{FORMAT_VERSION}. Update SK Memory to open it.")
    title = _text(value.get("title", ""), f"{where}: 'title'")
    revision = value.get("revision", 0)
    if not isinstance(revision, int) or isinstance(revision, bool) or revision < 0:
        raise MapFormatError(f"{where}: 'revision' must be a whole number of at least 0, not {revision!r}.")
    raw_nodes = value.get("nodes")
    if not isinstance(raw_nodes, list):
        raise MapFormatError(f"{where} needs a 'nodes' list (a map has at least one root node).")
    if len(raw_nodes) > MAX_NODES:
        raise MapFormatError(f"{where} has {len(raw_nodes):,} nodes; a map may have at most {MAX_NODES:,}. "
                             "Split it into several maps.")
    nodes = [_node(raw, f"{where}: node {i + 1}") for i, raw in enumerate(raw_nodes)]
    _check_tree(nodes, where)
    extra = {k: v for k, v in value.items() if k not in _MAP_KEYS}
    return MindMap(title=title or (nodes[0].title if nodes else ""), revision=revision, nodes=nodes, version=version,
                   extra=extra)


def _text(value: Any, what: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MapFormatError(f"{what} must be a string.")
    return value


def _node(raw: Any, where: str) -> Node:
    if not isinstance(raw, dict):
        raise MapFormatError(f"{where} must be an object with at least 'id' and 'title'.")
    node_id = raw.get("id")
    if not isinstance(node_id, str) or not node_id.strip():
        raise MapFormatError(f"{where} needs an 'id' that is a non-empty string.")
    where = f"{where} ('{node_id}')"
    parent = raw.get("parent")
    if parent is not None and not isinstance(parent, str):
        raise MapFormatError(f"{where}: 'parent' must be a node id or null.")
    tags = raw.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise MapFormatError(f"{where}: 'tags' must be a list of strings.")
    relationships = []
    for rel in raw.get("relationships") or []:
        if not (isinstance(rel, dict) and isinstance(rel.get("target"), str) and isinstance(rel.get("type", ""), str)):
            raise MapFormatError(f"{where}: each relationship must be an object with 'type' and 'target' strings.")
        relationships.append(Relationship(rel.get("type") or "related to", rel["target"]))
    attachments = raw.get("attachments") or []
    if not isinstance(attachments, list) or not all(isinstance(a, (dict, str)) for a in attachments):
        raise MapFormatError(f"{where}: 'attachments' must be a list of file references.")
    attachments = [{"path": a} if isinstance(a, str) else a for a in attachments]
    return Node(id=node_id, parent=parent, title=_text(raw.get("title"), f"{where}: 'title'"),
                body=_text(raw.get("body"), f"{where}: 'body'"), tags=list(tags), relationships=relationships,
                attachments=attachments, private_notes=_text(raw.get("private_notes"), f"{where}: 'private_notes'"),
                extra={k: v for k, v in raw.items() if k not in _NODE_KEYS})


def _check_tree(nodes: list[Node], where: str) -> None:
    """Refuse duplicate ids, parents that do not exist and cycles (a relationship to a missing node is ignored)."""
    ids: dict[str, Node] = {}
    for node in nodes:
        if node.id in ids:
            raise MapFormatError(f"{where} has two nodes with id '{node.id}'; give each node its own id.")
        ids[node.id] = node
    if nodes and not any(n.parent is None for n in nodes):
        raise MapFormatError(f"{where} has no root node; one node needs \"parent\": null.")
    for node in nodes:
        if node.parent is not None and node.parent not in ids:
            raise MapFormatError(f"{where}: node '{node.id}' has parent '{node.parent}', which is not in the map.")
    levels: dict[str, int] = {}  # each node's depth, found in one pass (a chain of thousands stays linear)
    for node in nodes:
        chain, on_chain, current = [], set(), node
        while current.id not in levels:
            if current.id in on_chain:
                raise MapFormatError(f"{where}: node '{node.id}' is its own ancestor; parents must form a tree.")
            on_chain.add(current.id)
            chain.append(current)
            if current.parent is None:
                levels[current.id] = 0
                chain.pop()
                break
            current = ids[current.parent]
        level = levels[current.id]
        for below in reversed(chain):
            level += 1
            levels[below.id] = level
            if level > MAX_DEPTH:
                raise MapFormatError(f"{where}: node '{below.id}' is {level} levels deep; a map may be at most "
                                     f"{MAX_DEPTH} levels deep. Move that branch into a map of its own.")
