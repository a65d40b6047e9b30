"""The graphs Cluster View shows, kept between requests, and the documents a query lights up on them."""
from __future__ import annotations

import threading
from collections import Counter
from typing import Callable

from ..errors import EmbeddingsUnavailable
from ..search.index import ProjectIndex
from ..contract.answers import LightAnswer
from ..contract.request import SearchRequest
from ..contract.routes import answers
from ..contract.sibling_requests import LightRequest
from .build import SavePositions, build_graph
from .layout import SPACING
from .source import fingerprint

PROJECT_GAP = 12 * SPACING  # between the projects of the All projects view, side by side
KEYWORD_NOTICE = "Embeddings are unavailable, so these are keyword matches, not semantic ones."
SOME_KEYWORD = "Keyword matches only in {names}: embeddings are unavailable there."


def node_id(scope: str, project: str, document_id: str) -> str:
    """A node's id: the document id, prefixed by its project in the All projects view."""
    return f"{project}:{document_id}" if scope == "all" else document_id


# The read sides of one project (project=None: the default one) or, with scope='all', of every project.
Indexes = Callable[[str | None, str], list[ProjectIndex]]


class ForgeGraphs:
    """Each project's graph, built when first asked for and again only after what it is drawn from changed.

    `indexes` gives the read sides to draw; `save_positions` (optional) keeps node positions through the project's
    writer; `search` is the engine's search, for the documents a query lights up.
    """

    def __init__(self, indexes: Indexes, search: Callable[..., dict], save_positions: SavePositions | None = None):
        self._indexes = indexes
        self._search = search
        self._save_positions = save_positions
        self._lock = threading.Lock()
        self._built: dict[str, tuple[ProjectIndex, str, dict]] = {}

    def project_graph(self, index: ProjectIndex) -> dict:
        """One project's graph, from the cache when neither its documents nor its vectors changed."""
        with self._lock:
            digest = fingerprint(index, index.cache.version)
            built = self._built.get(index.name)
            if built and built[0] is index and built[1] == digest:
                return {**built[2], "cached": True}
            graph = build_graph(index, self._save_positions)
            self._built[index.name] = (index, digest, graph)
            return {**graph, "cached": False}

    def refresh(self, index: ProjectIndex) -> None:
        """Build again, now, a graph that was built before and has gone stale (the server does this in the background
        after notes change, so that the next open of Cluster View draws at once instead of building)."""
        with self._lock:
            if index.name not in self._built:
                return
        self.project_graph(index)

    def graph(self, project: str | None = None, scope: str = "project") -> dict:
        """The graph of a project, or with scope='all' every project's side by side (no edges between them)."""
        indexes = self._indexes(project, scope)
        if scope != "all":
            return self.project_graph(indexes[0])
        out = {"project": None, "scope": "all", "projects": [], "semantic": True, "layout": "semantic",
               "notice": None, "nodes": [], "edges": [], "clusters": [], "cached": True,
               "stats": Counter()}
        notices, left, semantic = [], 0.0, 0
        for index in indexes:
            g = self.project_graph(index)
            name = g["project"]
            out["projects"].append(name)
            semantic += g["semantic"]
            out["cached"] &= g["cached"]
            if g["notice"]:
                notices.append(f"{name}: {g['notice']}")
            xs = [n["x"] for n in g["nodes"]] or [0.0]
            shift = left - min(xs)
            left += max(xs) - min(xs) + PROJECT_GAP
            first = len(out["clusters"])
            out["clusters"] += [{**c, "id": first + c["id"], "label": f"{name}: {c['label']}", "project": name}
                                for c in g["clusters"]]
            out["nodes"] += [{**n, "id": node_id("all", name, n["document_id"]), "cluster": first + n["cluster"],
                              "x": round(n["x"] + shift, 3)} for n in g["nodes"]]
            out["edges"] += [{**e, "source": node_id("all", name, e["source"]),
                              "target": node_id("all", name, e["target"])}
                             for e in g["edges"]]
            out["stats"].update({k: v for k, v in g["stats"].items() if k in ("documents", "embedded_documents",
                                                                             "link_edges", "semantic_edges")})
        out["semantic"] = semantic == len(indexes)
        out["layout"] = "semantic" if out["semantic"] else "folder" if not semantic else "mixed"
        out["notice"] = " ".join(notices) or None
        out["stats"] = dict(out["stats"])
        return out


    @answers("light")
    def search(self, request: LightRequest) -> LightAnswer:
        """The documents Cluster View lights up for a query: semantic search's, or keyword's without embeddings."""
        return LightAnswer(**highlight(self._search, request.query, request.project, request.scope, request.limit))


def highlight(search: Callable[..., dict], query: str, project: str | None, scope: str, limit: int) -> dict:
    """The documents a Cluster View query lights up: those semantic search returns, best first, each with its
    best similarity; keyword search's, labelled as such, where there are no embeddings."""
    request = SearchRequest(query, "semantic", project=project, scope=scope, limit=limit)
    try:
        found = search(request)
    except EmbeddingsUnavailable:
        found = search(request.but(mode="keyword"))
    keyword_only = found.get("keyword_only_projects") or []
    partly = scope == "all" and len(keyword_only) < len(found.get("projects", []))  # some projects have vectors
    mode = "semantic" if found["semantic_available"] or partly else "keyword"
    notice = None
    if not found["semantic_available"]:
        notice = KEYWORD_NOTICE if mode == "keyword" else SOME_KEYWORD.format(names=", ".join(keyword_only))
    matches, seen = [], set()
    for r in found["results"]:
        key = node_id(scope, r["project"], r["document_id"])
        if key in seen:
            continue
        seen.add(key)
        matches.append({"id": key, "document_id": r["document_id"], "project": r["project"],
                        "title": r["title"], "path": r["path"], "score": r["score"],
                        "search_type": r["search_type"]})
    return {"query": query, "scope": scope, "project": found.get("project"), "mode": mode,
            "semantic_available": found["semantic_available"], "notice": notice, "matches": matches,
            "limit": limit}
