"""Node discovery in the active map: the node index's state, node search with live titles, and node context.

Search reads the derived `mindmap-semantic` document; everything it returns about a node (title, path, parent,
tags) comes from the live map file, which is authoritative. A node deleted since the last save is dropped.
"""
from __future__ import annotations

import hashlib
import json

from ..contract.answers import counted
from ..contract.limits import check_number, check_query
from ..text.inline import normalise_tags
from ..text.readable import display_text
from ..search import chunk_reads
from ..search.hits import snippet
from ..search.hybrid import hybrid
from ..search.index import ProjectIndex
from ..search.note_reads import document
from ..search.query import Query
from ..ingest.extract.mindmap import INDEX_FORMAT, relationships_of
from ..ingest.extract.mindmap_format import MindMap, Node
from .maps import MapRef

REFRESH_HINT = "Save the map to refresh its node index, then call mindmap_get_context before editing any node."
MESSAGES = {
    "current": None,
    "missing": "This map has no node index yet. " + REFRESH_HINT,
    "stale": "The node index is older than the live map (it changed since it was last indexed); results show live "
             "titles and paths and leave out deleted nodes, but new or edited text may be missed. " + REFRESH_HINT,
    "older_format": "The node index was written in an older format and cannot be searched. " + REFRESH_HINT,
}


def describe(ref: MapRef, live: MindMap) -> dict:
    """The map as every mind map answer names it."""
    return {"project": ref.project, "document_id": ref.document_id, "path": ref.rel_path, "title": live.title,
            "revision": live.revision}


def index_state(index: ProjectIndex, ref: MapRef, live: MindMap, live_bytes: bytes) -> dict:
    """Compare the node index with the live map: current, stale, missing or older_format, with revisions."""
    state = {"index_state": "missing", "index_stale": True, "indexed_revision": None, "live_revision": live.revision,
             "pending_embeddings": 0}
    doc = document(index, ref.document_id) if ref.document_id else None
    rows = chunk_reads.node_chunk_states(index, ref.document_id) if doc is not None else []
    if rows:
        refs = [json.loads(r["ref"]) if r["ref"] else None for r in rows]
        state["pending_embeddings"] = sum(r["embed_state"] == "pending" for r in rows)
        if any(r is None or r.get("format") != INDEX_FORMAT for r in refs):
            state["index_state"] = "older_format"
        else:
            state["indexed_revision"] = max(r["revision"] for r in refs)
            behind = state["indexed_revision"] < live.revision
            changed = doc["content_hash"] != hashlib.sha256(live_bytes).hexdigest()
            state["index_state"] = "stale" if behind or changed else "current"
    state["index_stale"] = state["index_state"] != "current"
    state["message"] = MESSAGES[state["index_state"]]
    return state


def live_node(live: MindMap, node: Node) -> dict:
    """A node as the live map has it now (attachments and private notes left out)."""
    return {"node_id": node.id, "parent_id": node.parent, "title": node.title, "path": live.path(node.id),
            "level": live.level(node.id), "tags": normalise_tags(node.tags)}


def search_nodes(index: ProjectIndex, ref: MapRef, live: MindMap, live_bytes: bytes, query: str,
                 limit: int = 10) -> dict:
    """Search the active map's node index: the best chunk per node, live nodes only, with live titles and paths."""
    check_query(query, required=True)
    check_number("limit", limit)
    state = index_state(index, ref, live, live_bytes)
    answer = {"query": query, "map": describe(ref, live), **state, "semantic_available": index.semantic_available,
              "total": 0, "total_is_exact": True, "more": False, "limit": limit, "results": []}
    if state["index_state"] in ("missing", "older_format"):
        return answer
    chunks = chunk_reads.node_chunks(index, ref.document_id)
    parsed = Query.parse(query)
    ranking = hybrid(index, parsed, len(chunks), {ref.document_id}, list(chunks))
    scored, answer["semantic_available"], terms = ranking.ranked, ranking.semantic_available, parsed.terms
    if not ranking.semantic_available:
        answer["semantic_reason"] = (f"{index.embedder.now.why_not[:1].upper()}"
                                     f"{index.embedder.now.why_not[1:]}: these nodes hold your words "
                                     "(all of them first, then some), ranked by BM25.")
    results, seen = [], set()
    for chunk_id, score, search_type in scored:
        row = chunks.get(chunk_id)
        if row is None:
            continue
        indexed = json.loads(row["ref"])
        node = live.by_id.get(indexed["node_id"])
        if node is None or node.id in seen:  # deleted since it was indexed, or a weaker chunk of a node we have
            continue
        seen.add(node.id)
        results.append({**live_node(live, node), "score": round(float(score), 4), "search_type": search_type,
                        "chunk_id": chunk_id, "content": row["content"], **snippet(display_text(row["content"]), terms),
                        "indexed_revision": indexed["revision"],
                        "changed_since_indexed": indexed["path"] != live.path(node.id)})
    answer["results"] = results[:limit]  # every live node was ranked: the count is exact
    answer.update(counted(answer["results"], len(results) > limit, len(results)))
    return answer


def node_context(live: MindMap, node_id: str) -> dict:
    """A node of the live map with its ancestors, children, siblings and relationships, for use before editing."""
    node = live.node(node_id)
    siblings = [n for n in live.children(node.parent) if n.id != node.id]
    outgoing = {r["node_id"] for r in relationships_of(live, node) if r["direction"] == "outgoing"}
    return {
        "node": {**live_node(live, node), "body": node.body,
                 "attachments": [{k: v for k, v in a.items() if k in ("path", "name", "type")}
                                 for a in node.attachments],
                 "has_private_notes": bool(node.private_notes.strip())},
        "ancestors": [_brief(live, n) for n in live.ancestors(node.id)],
        "children": [_brief(live, n) for n in live.children(node.id)],
        "siblings": [_brief(live, n) for n in siblings],
        "relationships": relationships_of(live, node) + [
            {"type": r.type, "direction": "outgoing", "node_id": r.target, "title": None, "missing": True}
            for r in node.relationships if r.target not in live.by_id and r.target not in outgoing],
    }


def _brief(live: MindMap, node: Node) -> dict:
    return {"node_id": node.id, "title": node.title, "level": live.level(node.id),
            "children": len(live.children(node.id))}
