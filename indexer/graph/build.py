"""The Forge Graph of one project: nodes, link and semantic edges, clusters, and positions that stay put."""
from __future__ import annotations

import logging
import math
import time
from collections import Counter
from typing import Callable

import numpy as np

from ..search import note_reads
from ..search.index import ProjectIndex
from . import clusters as cl
from .layout import update_layout
from .source import GraphSource, read_source

logger = logging.getLogger(__name__)

SEMANTIC_NEIGHBOURS = 3  # semantic edges per document, to its most similar others...
SEMANTIC_THRESHOLD = 0.55  # ...that are at least this similar (cosine of document vectors)
NO_MODEL = "Embeddings are unavailable, so there are no semantic edges and documents are grouped by folder."
PARTLY = "{missing} of {total} documents have no embedding yet; they are grouped with their folder until they do."


def semantic_edges(vectors: np.ndarray, has: np.ndarray, k: int = SEMANTIC_NEIGHBOURS,
                   threshold: float = SEMANTIC_THRESHOLD, block: int = 1024) -> list[tuple[int, int, float]]:
    """Each document's k most similar others at or above threshold, exactly (blockwise matrix products);
    an undirected pair appears once, as (smaller row, larger row, similarity)."""
    rows = np.flatnonzero(has)
    if len(rows) < 2 or k < 1:
        return []
    matrix = vectors[rows]
    pairs: dict[tuple[int, int], float] = {}
    take = min(k, len(rows) - 1)
    for start in range(0, len(rows), block):
        sims = matrix[start:start + block] @ matrix.T
        local = np.arange(sims.shape[0])
        sims[local, start + local] = -np.inf  # not itself
        top = np.argpartition(-sims, take - 1, axis=1)[:, :take]
        for i, js in zip(local, top):
            a = int(rows[start + i])
            for j in js:
                sim = float(sims[i, j])
                if sim >= threshold:
                    b = int(rows[j])
                    pairs[(min(a, b), max(a, b))] = round(sim, 4)
    return [(a, b, s) for (a, b), s in sorted(pairs.items())]


def assign_clusters(src: GraphSource) -> tuple[list[int], list[str]]:
    """Cluster labels and names: k-means on vectors (others join their folder's commonest cluster), or folders."""
    if src.vectors is None or not src.has_vector.any():
        return cl.folder_clusters(src.folders)
    rows = np.flatnonzero(src.has_vector)
    raw = cl.kmeans(src.vectors[rows], cl.cluster_count(len(rows)))
    labels = [-1] * len(src.ids)
    for r, c in zip(rows, raw):
        labels[r] = int(c)
    by_folder: dict[str, Counter] = {}
    for i, c in enumerate(labels):
        if c >= 0:
            by_folder.setdefault(src.folders[i], Counter())[c] += 1
    fallback = Counter(c for c in labels if c >= 0).most_common(1)[0][0]
    for i, c in enumerate(labels):
        if c < 0:
            near = by_folder.get(src.folders[i])
            labels[i] = min(near.items(), key=lambda kv: (-kv[1], kv[0]))[0] if near else fallback
    labels = cl.by_size(labels)
    pieces = cl.fragments(cl.readable_head(t, h) for t, h in zip(src.titles, src.heads))
    names = cl.describe(labels, [cl.terms_of(t, g, h, pieces) for t, g, h in zip(src.titles, src.tags, src.heads)])
    return labels, names


def stored_positions(index: ProjectIndex) -> dict[str, tuple[float, float, str]]:
    return {r[0]: (r[1], r[2], r[3]) for r in note_reads.graph_positions(index)}


# Keeps positions: (project name, positions that changed as (id, x, y, how), ids gone, laid out afresh).
SavePositions = Callable[[str, list[tuple[str, float, float, str]], list[str], bool], None]


def position_changes(ids: list[str], pos: np.ndarray, how: list[str], stored: dict[str, tuple[float, float, str]],
                     afresh: bool) -> tuple[list[tuple[str, float, float, str]], list[str]]:
    """The positions that changed (all of them after a fresh layout) and the documents no longer drawn."""
    changed = [(d, float(x), float(y), h) for d, (x, y), h in zip(ids, pos, how)
               if afresh or stored.get(d) != (float(x), float(y), h)]
    present = set(ids)
    return changed, [d for d in stored if d not in present]


def build_graph(index: ProjectIndex, save_positions: SavePositions | None = None) -> dict:
    """Build one project's graph: {nodes, edges, clusters, ...}; positions come from its index and, when
    save_positions is given, go back through the project's writer."""
    started = time.perf_counter()
    src = read_source(index)
    n = len(src.ids)
    labels, names = assign_clusters(src) if n else ([], [])
    stored = stored_positions(index)
    if n:
        pos, how, afresh = update_layout(src, labels, stored)
        pos = np.round(pos, 3)
    else:
        pos, how, afresh = np.zeros((0, 2)), [], False
    changed, gone = position_changes(src.ids, pos, how, stored, afresh)
    if save_positions is not None and (changed or gone):
        save_positions(index.name, changed, gone, afresh)
    written = len(changed) if save_positions is not None else 0
    semantic = src.vectors is not None and bool(src.has_vector.any())
    scale = getattr(index.embedder, "scale", None)  # the model's cosines on the shared scale (model/scale.py)
    threshold = scale.raw(SEMANTIC_THRESHOLD) if scale is not None else SEMANTIC_THRESHOLD
    near = semantic_edges(src.vectors, src.has_vector, threshold=threshold) if semantic else []
    if scale is not None and not scale.identity:
        near = [(a, b, round(float(scale.shown(sim)), 4)) for a, b, sim in near]
    linked = {(min(a, b), max(a, b)) for a, b, _ in src.links}
    degree = Counter()
    for a, b, _ in src.links:
        degree[a] += 1
        degree[b] += 1
    nodes = [{
        "id": src.ids[i], "document_id": src.ids[i], "project": src.project, "title": src.titles[i],
        "path": src.paths[i], "folder": src.folders[i], "tags": src.tags[i], "cluster": labels[i],
        "chunks": src.chunks[i], "links": degree[i], "size": round(1 + math.sqrt(src.chunks[i] + degree[i]), 2),
        "x": float(pos[i][0]), "y": float(pos[i][1]),
    } for i in range(n)]
    edges = [{"source": src.ids[a], "target": src.ids[b], "kind": "link", "link_kind": kind, "weight": 1.0}
             for a, b, kind in src.links]
    edges += [{"source": src.ids[a], "target": src.ids[b], "kind": "semantic", "weight": sim}
              for a, b, sim in near if (a, b) not in linked]
    sizes = Counter(labels)
    missing = int(n - src.has_vector.sum()) if semantic else n
    notice = NO_MODEL if not semantic else (PARTLY.format(missing=missing, total=n) if missing else None)
    seconds = time.perf_counter() - started
    logger.info("Built the graph of %s: %d documents, %d edges in %.2f s", index.name, n, len(edges), seconds)
    return {
        "project": index.name, "scope": "project", "semantic": semantic, "layout": "semantic" if semantic else "folder",
        "notice": notice, "nodes": nodes, "edges": edges,
        "clusters": [{"id": c, "label": names[c], "color": cl.colour(c), "size": sizes[c]} for c in range(len(names))],
        "stats": {"documents": n, "embedded_documents": n - missing, "link_edges": len(src.links),
                  "semantic_edges": len(edges) - len(src.links), "laid_out_afresh": afresh,
                  "positions_written": written, "build_seconds": round(seconds, 3)},
    }
