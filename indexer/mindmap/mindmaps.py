"""The mind maps of a data home: list, open, load and save maps, search the active one's nodes.

Built by the Engine from the two things it needs: the read side of a project, and the writer's way to put a map
file on disk and index it at once (through the running indexer when there is one, the single owner of the index).
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable

from ..errors import NoActiveMap
from ..search.index import ProjectIndex
from ..contract.answers import NodeContextAnswer, NodesAnswer
from ..contract.routes import answers
from ..contract.sibling_requests import NodeSearchRequest
from . import maps
from ..ingest.extract.mindmap_format import MindMap, dumps
from .maps import ActiveMap, MapRef
from .nodes import describe, index_state, node_context, search_nodes

# Write a map file into a project and index it before returning: (the project's read side, path, file bytes).
WriteMap = Callable[[ProjectIndex, str, bytes], None]


class MindMaps:
    """The mind map operations every surface calls; the active map is shared by every surface of the data home."""

    def __init__(self, index: Callable[[str | None], ProjectIndex], write: WriteMap, home: Path):
        self._index = index
        self._write = write
        self._active = ActiveMap(home)
        self._save_lock = threading.Lock()

    def list(self, project: str | None = None) -> dict:
        """The maps of a project and the active map."""
        index = self._index(project)
        active = self._active.get()
        return {"project": index.name, "maps": maps.list_maps(index),
                "active": describe_ref(active) if active else None}

    def load(self, project: str | None = None, document_id: str | None = None, path: str | None = None) -> dict:
        """A live map in full (the editor's copy), by document id or path, with the state of its node index."""
        index = self._index(project)
        ref = maps.resolve(index, document_id, path)
        live, data = maps.read_live(index.root, ref.rel_path)
        return {"map": describe(ref, live), **index_state(index, ref, live, data), "content": live.to_json()}

    def open(self, project: str | None = None, document_id: str | None = None, path: str | None = None) -> dict:
        """Make a map the active one (the one node search and node context work on); it must exist and be readable."""
        index = self._index(project)
        ref = maps.resolve(index, document_id, path)
        maps.read_live(index.root, ref.rel_path)
        self._active.set(ref)
        return self.active()

    def active(self) -> dict:
        """The active map and the state of its node index ({"map": None} when none is open)."""
        if self._active.get() is None:
            return {"map": None, "message": no_active_message()}
        index, ref, live, data = self._current()
        return {"map": describe(ref, live), **index_state(index, ref, live, data)}

    def _current(self, project: str | None = None, path: str | None = None) -> tuple[ProjectIndex, MapRef, MindMap,
                                                                                      bytes]:
        """A map's index, reference and live content: the one named by path (in project), else the active map,
        else the project's only map; raise NoActiveMap when none of these names one."""
        active = self._active.get()
        if path:
            index = self._index(project)
            ref = maps.resolve(index, path=path)
        elif active is not None and (not project or self._index(project).name == active.project):
            index = self._index(active.project)
            ref = maps.refresh(index, active)
            if ref != active:
                self._active.set(ref)
        else:
            index = self._index(project)
            found = maps.list_maps(index)
            if len(found) != 1:
                raise NoActiveMap(no_active_message(index.name, [m["path"] for m in found]))
            ref = maps.resolve(index, path=found[0]["path"])
        live, data = maps.read_live(index.root, ref.rel_path)
        return index, ref, live, data

    @answers("search_nodes")
    def search_nodes(self, request: NodeSearchRequest) -> NodesAnswer:
        """Search a map's nodes (the map at its path, else the active map, else the project's only map): best chunk
        per node, live titles and paths, index staleness."""
        index, ref, live, data = self._current(request.project, request.map_path)
        return NodesAnswer(**search_nodes(index, ref, live, data, request.query, request.limit))

    @answers("node_context")
    def node_context(self, node_id: str, project: str | None = None, path: str | None = None) -> NodeContextAnswer:
        """A node of a map (chosen as search_nodes chooses) with its ancestors, children, siblings and
        relationships."""
        index, ref, live, data = self._current(project, path)
        return NodeContextAnswer(map=describe(ref, live), **index_state(index, ref, live, data),
                                 **node_context(live, node_id))

    def save(self, path: str, content: object, project: str | None = None) -> dict:
        """Write a map file (its revision plus one) and refresh its node index before answering."""
        index = self._index(project)
        rel = maps.check_map_path(path)
        with self._save_lock:
            mind_map = maps.prepare_save(index.root, rel, content)
            data = dumps(mind_map).encode("utf-8")
            self._write(index, rel, data)
        ref = maps.resolve(index, path=rel)
        active = self._active.get()
        if active and ref.document_id and active.document_id == ref.document_id:
            self._active.set(ref)
        return {"map": describe(ref, mind_map), **index_state(index, ref, mind_map, data)}


def no_active_message(project: str | None = None, paths: list[str] | None = None) -> str:
    """No map is named: say which maps there are to name."""
    if project is not None and not paths:
        return f"No mind map is active, and project '{project}' has no mind maps (.mmdata files)."
    named = f" Project '{project}' has {len(paths)}: {', '.join(paths[:10])}." if paths else ""
    return ("No mind map is active. Name one by its path (map=\"Maps/Example.mmdata\" in the MCP tools, ?path= in "
            "the API), or open one on the Mind Map page." + named)


def describe_ref(ref: MapRef) -> dict:
    return {"project": ref.project, "document_id": ref.document_id, "path": ref.rel_path}
