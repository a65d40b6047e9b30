"""What the Engine's mindmap_* methods do: list, open, load and save maps, search the active one's nodes.

Saving writes the `.mmdata` file and re-indexes it at once: through the running indexer when there is one (the
single owner of the index), or in this process when the Engine owns the project itself.
"""
from __future__ import annotations

import hashlib
import threading
import time
from typing import TYPE_CHECKING

from ..errors import InvalidQuery
from ..search.index import ProjectIndex
from . import maps
from .format import MindMap, dumps
from .maps import ActiveMap, MapRef
from .nodes import describe, index_state, node_context, search_nodes

if TYPE_CHECKING:
    from ..engine import Engine

SYNC_WAIT = 60.0  # seconds a save waits for the running indexer to index the map it wrote
EMBED_WAIT = 30.0  # and then for the map's new chunks to be embedded, so that a search right after finds them


class NoActiveMap(InvalidQuery):
    """A node search or context request while no map is open."""


class MindMaps:
    """The mind map operations of one Engine; the active map is shared by every surface of the data home."""

    def __init__(self, engine: "Engine"):
        self.engine = engine
        self.active = ActiveMap(engine.home.settings.home)
        self._save_lock = threading.Lock()

    def list(self, project: str | None) -> dict:
        index = self.engine.index(project)
        active = self.active.get()
        return {"project": index.name, "maps": maps.list_maps(index),
                "active": describe_ref(active) if active else None}

    def load(self, project: str | None, document_id: str | None, path: str | None) -> dict:
        """The live map in full (the editor's copy) with its index state."""
        index = self.engine.index(project)
        ref = maps.resolve(index, document_id, path)
        live, data = maps.read_live(index.root, ref.rel_path)
        return {"map": describe(ref, live), **index_state(index, ref, live, data), "content": live.to_json()}

    def open(self, project: str | None, document_id: str | None, path: str | None) -> dict:
        """Make a map the active one; it must exist and be readable."""
        index = self.engine.index(project)
        ref = maps.resolve(index, document_id, path)
        maps.read_live(index.root, ref.rel_path)
        self.active.set(ref)
        return self.describe_active()

    def describe_active(self) -> dict:
        if self.active.get() is None:
            return {"map": None, "message": no_active_message()}
        index, ref, live, data = self.current()
        return {"map": describe(ref, live), **index_state(index, ref, live, data)}

    def current(self) -> tuple[ProjectIndex, MapRef, MindMap, bytes]:
        """The active map's index, reference and live content; raise NoActiveMap when none is open."""
        ref = self.active.get()
        if ref is None:
            raise NoActiveMap(no_active_message())
        index = self.engine.index(ref.project)
        fresh = maps.refresh(index, ref)
        if fresh != ref:
            self.active.set(fresh)
        live, data = maps.read_live(index.root, fresh.rel_path)
        return index, fresh, live, data

    def search(self, query: str, limit: int) -> dict:
        index, ref, live, data = self.current()
        return search_nodes(index, ref, live, data, query, limit)

    def context(self, node_id: str) -> dict:
        index, ref, live, data = self.current()
        return {"map": describe(ref, live), **index_state(index, ref, live, data), **node_context(live, node_id)}

    def save(self, project: str | None, path: str, content: object) -> dict:
        """Write a map (its revision plus one) and refresh its node index before answering."""
        index = self.engine.index(project)
        rel = maps.check_map_path(path)
        if index.project.rules.ignores_file(rel):
            raise InvalidQuery(f"'{rel}' is in a hidden or ignored folder (.skmemoryignore), so it would never be "
                               "indexed; save it somewhere else in the project.")
        with self._save_lock:
            mind_map = maps.prepare_save(index.root, rel, content)
            data = dumps(mind_map).encode("utf-8")
            maps.write_atomically(maps.map_file(index.root, rel), data)
        self._reindex(index, rel, data)
        ref = maps.resolve(index, path=rel)
        active = self.active.get()
        if active and ref.document_id and active.document_id == ref.document_id:
            self.active.set(ref)
        return {"map": describe(ref, mind_map), **index_state(index, ref, mind_map, data)}

    def _reindex(self, index: ProjectIndex, rel: str, data: bytes) -> None:
        background = self.engine.background
        if background is None:  # this process owns the project: index and embed here
            index.project.sync([rel])
            if index.embedder.available:
                index.project.embed_pending()
            return
        background.request_sync(index.name, {rel})
        digest = hashlib.sha256(data).hexdigest()
        sync_deadline, embed_deadline = time.monotonic() + SYNC_WAIT, None
        while True:
            now = time.monotonic()
            if index.sql("SELECT 1 FROM file_errors WHERE rel_path = ?", (rel,)):
                return
            row = index.sql("""SELECT d.content_hash, (SELECT count(*) FROM chunks c WHERE c.document_id = d.document_id
                                   AND c.embed_state = 'pending') AS pending FROM documents d WHERE d.rel_path = ?""",
                            (rel,))
            if row and row[0]["content_hash"] == digest:
                if not row[0]["pending"] or index.embedder.state != "ready":
                    return
                embed_deadline = embed_deadline or now + EMBED_WAIT
                if now > embed_deadline:
                    return  # the answer's pending_embeddings says how many are still waiting
            elif now > sync_deadline:
                return  # still queued behind other work: the answer's index_state says so
            time.sleep(0.05)


def no_active_message() -> str:
    return ("No mind map is active. Open one on the Mind Map page, or with POST /api/mindmaps/active "
            "{\"project\": ..., \"path\": \"Maps/Example.mmdata\"}.")


def describe_ref(ref: MapRef) -> dict:
    return {"project": ref.project, "document_id": ref.document_id, "path": ref.rel_path}
