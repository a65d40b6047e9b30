"""The one service object every surface calls: projects, every search mode, documents and status."""
from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import numpy as np

from .errors import DocumentNotFound, InvalidProjectRoot, InvalidQuery, ProjectNotFound, SKMemoryError
from .home import Home
from .store.project import Project
from .graph.source import LinkResolver
from .search.index import ProjectIndex
from .search.keyword import keyword_search
from .search import browse, modes
from .search.context import build_context_all
from .search.memory import memory_search
from .search.rerank import Reranker
from .search.results import chunk_sections, envelope, iso, result_rows
from .search.semantic import HYBRID_THRESHOLD
from .search.tags import tag_counts
from .search.vault import vault_search

logger = logging.getLogger(__name__)


class Engine:
    """Searches and describes the projects of a data home, owned by a running indexer or opened here."""

    def __init__(self, home: Home, background=None, read_only: bool = False):
        self.home = home
        self.background = background  # a BackgroundIndexer when serving; None for a one-off command
        # A one-off command that only searches: projects are read as indexed, beside any writer, never locked.
        self.read_only = read_only
        self._own: dict[str, Project] = {}
        self._indexes: dict[str, ProjectIndex] = {}
        self._lock = threading.Lock()
        self._reranker: Reranker | None = None

    def close(self) -> None:
        for project in self._own.values():
            project.close()
        self._own.clear()
        self._indexes.clear()

    # --- projects -------------------------------------------------------------------------------------------

    def _project(self, name: str) -> Project:
        info = self.home.project(name)
        if self.background is not None:
            project = self.background.projects.get(info.name)
            if project is None and info.name not in self.background.open_errors:
                self.background.follow_registry()  # registered (or renamed) by another process since start
                project = self.background.projects.get(info.name)
            if project is None:
                reason = self.background.open_errors.get(info.name, "it is not open yet")
                raise ProjectNotFound(f"Project '{info.name}' cannot be searched: {reason}")
            return project
        if info.name not in self._own and self.read_only:
            from .store.reader import ProjectReader

            self._own[info.name] = ProjectReader(info, self.home.settings, self.home.embedder, self.home.counter)
        if info.name not in self._own:
            project = self.home.open_project(info.name, role="skmemory search")
            project.reconcile()
            project.sync()
            self._own[info.name] = project
        return self._own[info.name]

    def index(self, name: str | None = None) -> ProjectIndex:
        """The read side of a project (the default project when name is None)."""
        name = self.home.project(name).name if name else self.default_project()
        with self._lock:
            project = self._project(name)
            index = self._indexes.get(name)
            if index is None or index.project is not project:
                index = ProjectIndex(project)
                self._indexes[name] = index
            return index

    def default_project(self) -> str:
        """The project searched when none is named: the first user project, else the first at all."""
        infos = self.home.projects()
        if not infos:
            raise ProjectNotFound("No projects yet; add a folder with `skmemory add PATH`.")
        return next((i.name for i in infos if not i.builtin), infos[0].name)

    def projects(self) -> list[dict]:
        """Every project with its counts (read without opening it when this engine does not own it)."""
        out = []
        for info in self.home.projects():
            entry = info.to_dict()
            try:
                if self.background is None and info.name not in self._own:
                    status = self.home.status(info.name)
                    counts = {k: v for k, v in status.items() if k not in ("project", "root", "errors", "owner")}
                else:
                    counts = self.index(info.name).project.store.counts()
            except Exception as exc:  # a project that cannot open is listed with the reason
                entry["error"] = str(exc)
            else:
                entry.update(counts)
            out.append(entry)
        return out

    def warm(self) -> None:
        """Load every project's vector cache now (server start) instead of on the first search."""
        for info in self.home.projects():
            try:
                index = self.index(info.name)
                if index.embedder.available:
                    index.cache.ensure_loaded()
            except Exception:
                logger.exception("Warming %s failed", info.name)

    # --- search ---------------------------------------------------------------------------------------------

    def search(self, query: str, mode: str = "hybrid", project: str | None = None, scope: str = "project",
               tags_all: list[str] | None = None, tags_any: list[str] | None = None, limit: int = 20) -> dict:
        """Run one search in one project, or in all of them with scope='all'."""
        if scope not in ("project", "all"):
            raise InvalidQuery(f"Unknown scope '{scope}'; use 'project' or 'all'.")
        if scope == "all":
            indexes = [self.index(i.name) for i in self.home.projects()]
            return modes.search_all(indexes, query, mode, limit, tags_all, tags_any)
        return modes.search(self.index(project), query, mode, limit, tags_all, tags_any)

    def memory_search(self, mode: str, query, project: str | None = None) -> dict:
        """Locate documents by frontmatter fields, 1-3 keywords or cross-reference (spec 002), e.g. ("xref", "DEC-42")."""
        return memory_search(self.index(project), mode, query)

    def context(self, query: str, project: str | None = None, token_budget: int = 2000, scope: str = "project") -> dict:
        """Pack the best chunks for query into token_budget tokens, each with its provenance."""
        if scope not in ("project", "all"):
            raise InvalidQuery(f"Unknown scope '{scope}'; use 'project' or 'all'.")
        names = [i.name for i in self.home.projects()] or [None] if scope == "all" else [project]
        return build_context_all([self.index(name) for name in names], query, token_budget)

    @property
    def reranker(self) -> Reranker:
        """The cross-encoder of SKMEMORY_RERANKER, shared by every project and loaded on its first use."""
        with self._lock:
            if self._reranker is None:
                settings = self.home.settings
                self._reranker = Reranker(settings.reranker_path, settings.device)
            return self._reranker

    def vault_search(self, query: str, filters: dict | None = None, limit: int = 20, snippet_tokens: int = 30,
                     include_leading_callout: bool = False, project: str | None = None) -> dict:
        """Find notes by text (BM25 and meaning, fused) narrowed by metadata filters (spec 001)."""
        index = self.index(project)
        return vault_search(index, query, filters, limit, snippet_tokens, include_leading_callout, self.reranker)

    def search_by_tag(self, tags: list[str] | str, match: str = "all", filters: dict | None = None,
                      limit: int = 20, project: str | None = None) -> dict:
        """List notes with all (or any) of the tags, newest first."""
        return browse.search_by_tag(self.index(project), tags, match, filters, limit)

    def search_by_folder(self, folder: str, filters: dict | None = None, limit: int = 50,
                         project: str | None = None) -> dict:
        """List the notes under a folder, by path."""
        return browse.search_by_folder(self.index(project), folder, filters, limit)

    def search_by_property(self, properties: dict, filters: dict | None = None, limit: int = 20,
                           project: str | None = None) -> dict:
        """List notes whose frontmatter has these values, newest first."""
        return browse.search_by_property(self.index(project), properties, filters, limit)

    def recent_notes(self, filters: dict | None = None, limit: int = 20, project: str | None = None) -> dict:
        """List the most recently modified notes."""
        return browse.recent_notes(self.index(project), filters, limit)

    def tags(self, project: str | None = None, prefix: str = "", limit: int = 50) -> dict:
        index = self.index(project)
        return {"project": index.name, "tags": tag_counts(index, prefix, limit)}

    # --- documents ------------------------------------------------------------------------------------------

    def documents(self, project: str | None = None, folder: str = "", tag: str | None = None,
                  limit: int = 200, offset: int = 0) -> dict:
        """List documents, optionally under a folder or with a tag (and its sub-tags)."""
        index = self.index(project)
        where, params = ["1"], []
        folder = folder.strip("/")
        if folder:
            where.append("(rel_path = ? OR substr(rel_path, 1, ?) = ?)")
            params += [folder, len(folder) + 1, folder + "/"]
        if tag:
            t = tag.strip().lstrip("#").lower()
            where.append("document_id IN (SELECT document_id FROM tags WHERE tag = ? OR substr(tag, 1, ?) = ?)")
            params += [t, len(t) + 1, t + "/"]
        total = index.sql(f"SELECT count(*) FROM documents WHERE {' AND '.join(where)}", params)[0][0]
        rows = index.sql(
            f"SELECT * FROM documents WHERE {' AND '.join(where)} ORDER BY rel_path LIMIT ? OFFSET ?",
            params + [limit, offset],
        )
        return {"project": index.name, "total": total, "documents": [self._document_summary(index, r) for r in rows]}

    def _document_summary(self, index: ProjectIndex, r) -> dict:
        tags = [t[0] for t in index.sql("SELECT tag FROM tags WHERE document_id = ? ORDER BY tag", (r["document_id"],))]
        return {
            "document_id": r["document_id"], "title": r["title"], "relative_path": r["rel_path"],
            "absolute_path": str(index.root / r["rel_path"]), "file_type": r["file_type"], "tags": tags,
            "created": r["created"], "modified": iso(r["modified"]), "size": r["size"], "project": index.name,
        }

    def _document_row(self, index: ProjectIndex, document_id: str):
        rows = index.sql("SELECT * FROM documents WHERE document_id = ?", (document_id,))
        if not rows:
            raise DocumentNotFound(f"No document with id '{document_id}' in project '{index.name}'.")
        return rows[0]

    def document(self, document_id: str, project: str | None = None) -> dict:
        """A document's metadata, outline, links both ways and its chunks' text."""
        index = self.index(project)
        r = self._document_row(index, document_id)
        info = self._document_summary(index, r)
        chunks = index.sql("SELECT heading_path, content, start_line, end_line, sections FROM chunks "
                           "WHERE document_id = ? ORDER BY ordinal", (document_id,))
        outline, seen = [], set()
        for section in (s for c in chunks for s in chunk_sections(c)):
            path = tuple(section["heading_path"])
            for depth in range(1, len(path) + 1):
                if path[:depth] not in seen:
                    seen.add(path[:depth])
                    outline.append({"heading": path[depth - 1], "level": depth, "line": section["lines"][0]})
        links = index.sql("SELECT target, kind FROM links WHERE document_id = ? ORDER BY target", (document_id,))
        outgoing = [{"target": l["target"], "kind": l["kind"], **found}
                    for l, found in zip(links, self._resolve(index, [l["target"] for l in links], r["rel_path"]))]
        stem = r["rel_path"].rsplit("/", 1)[-1].rsplit(".", 1)[0]
        names = sorted({stem.lower(), r["title"].lower(), r["rel_path"].lower(), r["rel_path"].lower().rsplit(".", 1)[0]})
        incoming = [
            self._document_summary(index, d) for d in index.sql(
                f"SELECT DISTINCT d.* FROM links l JOIN documents d USING (document_id) "
                f"WHERE lower(l.target) IN ({','.join('?' * len(names))}) AND d.document_id != ? ORDER BY d.rel_path",
                (*names, document_id))
        ]
        info.update({
            "frontmatter": json.loads(r["frontmatter"]), "warnings": json.loads(r["warnings"]),
            "outline": outline, "links": outgoing, "backlinks": incoming,
            "content": "\n\n".join(c["content"] for c in chunks),
        })
        return info

    def _resolve(self, index: ProjectIndex, targets: list[str], from_path: str) -> list[dict]:
        """Find the documents these links point at (by path, relative path, title or file name), if indexed."""
        if not targets:
            return []
        docs = index.sql("SELECT document_id, rel_path, title FROM documents")
        resolver = LinkResolver([d["rel_path"] for d in docs], [d["title"] for d in docs])
        out = []
        for target in targets:
            i = resolver.resolve(target, from_path)
            out.append({"document_id": docs[i]["document_id"], "relative_path": docs[i]["rel_path"]}
                       if i is not None else {"document_id": None})
        return out

    def related(self, document_id: str, project: str | None = None, limit: int = 8) -> dict:
        """Documents like this one: hybrid search on its own content (title as keywords, mean vector for meaning)."""
        index = self.index(project)
        r = self._document_row(index, document_id)
        chunk_ids = [c[0] for c in index.sql("SELECT chunk_id FROM chunks WHERE document_id = ?", (document_id,))]
        scored: dict[str, tuple[str, float, str]] = {}
        semantic = index.semantic_available
        sims: dict[str, float] = {}
        if semantic:
            vectors = [v for v in (index.cache.vector(c) for c in chunk_ids) if v is not None]
            if vectors:
                mean = np.mean(vectors, axis=0)
                mean /= np.linalg.norm(mean) or 1.0
                sims = dict(index.cache.search(mean, HYBRID_THRESHOLD, None))
        for cid, _, _ in keyword_search(index, f'"{r["title"]}"', 500):
            scored[cid] = (cid, 1.0 + sims.pop(cid), "hybrid") if cid in sims else (cid, 1.0, "keyword")
        for cid, sim in sims.items():
            scored[cid] = (cid, sim, "semantic")
        ranked = sorted(scored.values(), key=lambda s: -s[1])
        results, seen = [], {document_id}
        for row in result_rows(index, ranked[: limit * 20], []):
            if row["document_id"] not in seen:
                seen.add(row["document_id"])
                results.append(row)
            if len(results) == limit:
                break
        return envelope(results, "hybrid", r["title"], semantic, limit, project=index.name, document_id=document_id)

    # --- status ---------------------------------------------------------------------------------------------

    def status(self) -> dict:
        """Indexer status: per project counts, pending embeddings with rate and ETA, errors."""
        if self.background is not None:
            return self.background.status()
        return {"projects": [self.home.status(i.name) for i in self.home.projects()],
                "embeddings": self.home.embedder.state}

    # --- managing projects ----------------------------------------------------------------------------------

    def _user_project(self, name: str):
        info = self.home.project(name)
        if info.builtin:
            raise SKMemoryError(f"'{info.name}' is built into SK Memory and cannot be renamed or removed.")
        return info

    def _forget(self, name: str) -> None:
        """Drop every open handle on a project (ours and the indexer's), releasing its lock."""
        self._indexes.pop(name, None)
        own = self._own.pop(name, None)
        if own is not None:
            own.close()
        if self.background is not None:
            self.background.remove_project(name)

    def add_project(self, path: str, name: str | None = None) -> dict:
        """Register a folder (a full path) as a project and, when serving, start indexing and watching it."""
        if not Path(path).expanduser().is_absolute():
            raise InvalidProjectRoot(f"'{path}' is a relative path; give the folder's full path, such as "
                                     f"{Path.home() / 'Documents' / 'notes'} or ~/Documents/notes.")
        info = self.home.add_project(path, name or None)
        if self.background is not None:
            return {**info.to_dict(), "sync_request": self.background.add_project(info.name)}
        return info.to_dict()

    def rename_project(self, old: str, new: str) -> dict:
        """Give a user project a new name; its index is kept and reopened under the new name."""
        info = self._user_project(old)
        with self._lock:
            self._forget(info.name)
            try:
                renamed = self.home.rename_project(info.name, new)
            except Exception:
                if self.background is not None:
                    self.background.add_project(info.name)
                raise
            if self.background is not None:
                self.background.add_project(renamed.name)
        return renamed.to_dict()

    def remove_project(self, name: str) -> dict:
        """Forget a user project and delete its index (after closing it here); the files stay."""
        info = self._user_project(name)
        with self._lock:
            self._forget(info.name)
            return self.home.remove_project(info.name).to_dict()

    def reindex(self, name: str) -> dict:
        """Re-read a project's folder: queued on the running indexer, or done now without one."""
        info = self.home.project(name)
        if self.background is not None:
            if info.name not in self.background.projects:
                self.background.follow_registry(retry=True)
            if info.name not in self.background.projects:
                reason = self.background.open_errors.get(info.name, "it is not open")
                raise ProjectNotFound(f"Project '{info.name}' cannot be re-indexed: {reason}")
            return {"project": info.name, "queued": True, "sync_request": self.background.request_sync(info.name, None)}
        with self._lock:
            project = self._project(info.name)
        return {"project": info.name, "queued": False, **project.sync().to_dict()}

    # --- mind maps (indexer/mindmap) ------------------------------------------------------------------------

    @property
    def mindmaps(self):
        """The mind map operations, with the active map of this data home."""
        with self._lock:
            if getattr(self, "_mindmaps", None) is None:
                from .mindmap.mindmaps import MindMaps

                self._mindmaps = MindMaps(self)
            return self._mindmaps

    def mindmap_list(self, project: str | None = None) -> dict:
        """The maps of a project and the active map."""
        return self.mindmaps.list(project)

    def mindmap_load(self, project: str | None = None, document_id: str | None = None, path: str | None = None) -> dict:
        """A live map in full, by document id or path, with the state of its node index."""
        return self.mindmaps.load(project, document_id, path)

    def mindmap_open(self, project: str | None = None, document_id: str | None = None, path: str | None = None) -> dict:
        """Make a map the active one (the one node search and node context work on)."""
        return self.mindmaps.open(project, document_id, path)

    def mindmap_active(self) -> dict:
        """The active map and the state of its node index ({"map": None} when none is open)."""
        return self.mindmaps.describe_active()

    def mindmap_save(self, path: str, content: dict, project: str | None = None) -> dict:
        """Write a map file (next revision) and refresh its mindmap-semantic document at once."""
        return self.mindmaps.save(project, path, content)

    def mindmap_search_nodes(self, query: str, limit: int = 10) -> dict:
        """Search the active map's nodes: best chunk per node, live titles and paths, index staleness."""
        return self.mindmaps.search(query, limit)

    def mindmap_get_context(self, node_id: str) -> dict:
        """A node of the active map with its ancestors, children, siblings and relationships."""
        return self.mindmaps.context(node_id)

    # --- Cluster View's Forge Graph (indexer/graph) ---------------------------------------------------------

    @property
    def graphs(self):
        """Every project's Forge Graph, built on first request and kept until its documents or vectors change."""
        with self._lock:
            if getattr(self, "_graphs", None) is None:
                from .graph import ForgeGraphs

                self._graphs = ForgeGraphs()
            return self._graphs

    def graph(self, project: str | None = None, scope: str = "project") -> dict:
        """The Forge Graph of a project (or of all with scope='all'): nodes, edges, clusters and positions."""
        if scope not in ("project", "all"):
            raise InvalidQuery(f"Unknown scope '{scope}'; use 'project' or 'all'.")
        names = [i.name for i in self.home.projects()] if scope == "all" else [project]
        return self.graphs.graph([self.index(name) for name in names], scope)

    def graph_search(self, query: str, project: str | None = None, scope: str = "project", limit: int = 50) -> dict:
        """The documents Cluster View lights up for a query: semantic search's, or keyword's without embeddings."""
        from .graph import highlight

        return highlight(self.search, query, project, scope, limit)
