"""What the Forge Graph is drawn from: a project's documents, tags, resolved links and document vectors."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..text.boilerplate import blank_shared, only_shared
from ..search import chunk_reads, note_reads
from ..search.index import ProjectIndex
from ..search.links import LinkResolver

HEAD_CHARS = 400  # of each document's first chunk, for cluster labels
READ_CHARS = 4000  # read of it, so that a paragraph many notes share is whole when it is left out


@dataclass
class GraphSource:
    """One project's documents in path order (ids are random, paths are what two indexes of a vault share),
    with everything the graph needs about each."""

    project: str
    ids: list[str]
    paths: list[str]
    titles: list[str]
    tags: list[list[str]]
    chunks: list[int]
    heads: list[str]
    links: list[tuple[int, int, str]]  # (from row, to row, kind), resolved, no self links, no repeats
    vectors: np.ndarray | None  # (n, dim) unit rows; zero rows for documents with no embedded chunk
    has_vector: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    @cached_property
    def folders(self) -> list[str]:
        return [p.rsplit("/", 1)[0] if "/" in p else "" for p in self.paths]


def fingerprint(index: ProjectIndex, version: int) -> str:
    """A digest of what the graph depends on: every document's id, path and content, and the embedded chunks."""
    digest = hashlib.sha1(str(version).encode())
    for r in note_reads.content_digest_rows(index):
        digest.update(f"{r[0]}\0{r[1]}\0{r[2]}\n".encode())
    embedded = chunk_reads.embedded_count(index)
    digest.update(f"embedded:{embedded}".encode())
    return digest.hexdigest()


def read_source(index: ProjectIndex) -> GraphSource:
    """Read one project's documents, tags, links and mean stored chunk vectors."""
    rows = note_reads.documents_by_path(index)
    ids = [r[0] for r in rows]
    row_of = {d: i for i, d in enumerate(ids)}
    tags: list[list[str]] = [[] for _ in ids]
    for d, tag in note_reads.all_tags(index):
        tags[row_of[d]].append(tag)
    chunks, heads = [0] * len(ids), [""] * len(ids)
    shared = chunk_reads.shared_paragraphs(index)  # a badge a third of the notes carry names no cluster
    for d, count, head in chunk_reads.chunk_counts_and_heads(index, READ_CHARS):
        own = "" if only_shared(head or "", shared) else blank_shared(head or "", shared)  # a stub: its title alone
        chunks[row_of[d]], heads[row_of[d]] = count, own[:HEAD_CHARS]
    source = GraphSource(index.name, ids, [r[1] for r in rows], [r[2] for r in rows], tags, chunks, heads, [], None)
    source.links = resolve_links(index, source, row_of)
    source.vectors, source.has_vector = document_vectors(index, row_of)
    return source


def resolve_links(index: ProjectIndex, source: GraphSource, row_of: dict[str, int]) -> list[tuple[int, int, str]]:
    """Every wikilink, local file link and related_to of the project that points at one of its documents."""
    resolver = LinkResolver(source.paths, source.titles)
    seen: set[tuple[int, int]] = set()
    out = []
    rows = sorted((row_of[d], target, kind) for d, target, kind in note_reads.all_links(index))
    for a, target, kind in rows:
        b = resolver.resolve(target, source.paths[a])
        if b is None or b == a or (a, b) in seen or (b, a) in seen:
            continue
        seen.add((a, b))
        out.append((a, b, kind))
    return out


def document_vectors(index: ProjectIndex, row_of: dict[str, int]) -> tuple[np.ndarray | None, np.ndarray]:
    """Each document's vector, the normalised mean of its stored chunk vectors; None when none has one. The model
    is not needed (only a query needs embedding): in the first seconds after a start, while it loads, the graph is
    laid out by meaning already."""
    has = np.zeros(len(row_of), dtype=bool)
    if not row_of:
        return None, has
    owner = {cid: d for cid, d in chunk_reads.embedded_owners(index) if d in row_of}
    ids, vectors = index.cache.vectors(list(owner))  # one read, not one per chunk
    if not ids:
        return None, has
    sums = np.zeros((len(row_of), vectors.shape[1]), dtype=np.float32)
    np.add.at(sums, [row_of[owner[cid]] for cid in ids], vectors)
    norms = np.linalg.norm(sums, axis=1)
    has = norms > 0
    sums[has] /= norms[has, None]
    return sums, has
