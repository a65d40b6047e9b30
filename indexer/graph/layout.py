"""Positions of the Forge Graph: laid out once per project, stored in its SQLite, then changed only locally.

The first layout puts each cluster in a disc whose area grows with its size, the discs arranged by a PCA of
the cluster centroids (by size, on a spiral, without vectors) and pushed apart until none overlap. Inside a
disc, documents near the centroid sit near the middle and the direction from the middle follows the cluster's
own two principal directions. Afterwards a document that appears is put beside its nearest neighbour (or,
without a vector, beside a document of its folder); one that goes is dropped; every other keeps its place.
A project is laid out afresh only when most of its documents are new to the layout, or when most of those
that have vectors were placed without one (the model was unavailable, or still embedding, at the first look).
"""
from __future__ import annotations

import hashlib
import math

import numpy as np

from .source import GraphSource

SPACING = 1.0  # about the distance between neighbouring documents
GOLDEN = math.pi * (3 - math.sqrt(5))

# How a stored position was made: a whole-project layout (with vectors or by folder), or one document placed
# later beside its nearest neighbour ("near") or, with no vector yet, beside a document of its folder ("beside").
SEMANTIC, FOLDER, NEAR, BESIDE = "semantic", "folder", "near", "beside"


def offset(document_id: str, radius: float = SPACING) -> np.ndarray:
    """A small displacement that depends only on the document id."""
    h = int.from_bytes(hashlib.sha1(document_id.encode()).digest()[:4], "big")
    angle = h / 2**32 * 2 * math.pi
    return np.array([math.cos(angle), math.sin(angle)]) * radius


def free_spot(anchor: np.ndarray, document_id: str, taken: np.ndarray, tries: int = 12) -> np.ndarray:
    """A point SPACING from anchor, in the first direction (from the id's own, turning) that keeps clear of
    the points taken; the clearest one when none does."""
    first = offset(document_id)
    best, best_room = anchor + first, -1.0
    for t in range(tries):
        a = 2 * math.pi * t / tries
        turn = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        spot = anchor + turn @ first
        room = float(np.sqrt(((taken - spot) ** 2).sum(axis=1)).min()) if len(taken) else SPACING
        if room >= 0.8 * SPACING:
            return spot
        if room > best_room:
            best, best_room = spot, room
    return best


def sunflower(m: int, radius: float) -> np.ndarray:
    """m points spread evenly over a disc, in order of distance from its centre."""
    i = np.arange(m) + 0.5
    r = radius * np.sqrt(i / max(m, 1))
    return np.stack([r * np.cos(i * GOLDEN), r * np.sin(i * GOLDEN)], axis=1)


def pca2(x: np.ndarray) -> np.ndarray:
    """Project rows onto their two main directions (zeros where there are too few rows), signs fixed."""
    out = np.zeros((len(x), 2))
    if len(x) < 2:
        return out
    centred = x - x.mean(axis=0)
    _, _, vt = np.linalg.svd(centred.astype(np.float64), full_matrices=False)
    for j in range(min(2, len(vt))):
        axis = vt[j] * (1 if vt[j][np.argmax(np.abs(vt[j]))] >= 0 else -1)  # SVD signs are arbitrary
        out[:, j] = centred @ axis
    return out


def separate(centres: np.ndarray, radii: np.ndarray, gap: float = 2 * SPACING, rounds: int = 400) -> np.ndarray:
    """Push discs apart until none overlap (each pair moved equally), keeping their arrangement."""
    c = centres.astype(np.float64).copy()
    k = len(c)
    for _ in range(rounds):
        diff = c[:, None, :] - c[None, :, :]
        dist = np.sqrt((diff**2).sum(axis=2)) + np.eye(k)
        need = radii[:, None] + radii[None, :] + gap
        overlap = np.clip(need - dist, 0, None) * (1 - np.eye(k))
        if not overlap.any():
            break
        push = (diff / dist[:, :, None]) * (overlap / 2)[:, :, None]
        c += push.sum(axis=1)
    return c


def disc(n_members: int) -> float:
    """The radius of a cluster's disc: its area grows with its number of documents."""
    return SPACING * math.sqrt(n_members) * 1.05


def full_layout(src: GraphSource, labels: list[int]) -> tuple[np.ndarray, list[str]]:
    """Lay out a whole project: (n x 2 positions, how each was made)."""
    n = len(src.ids)
    lab = np.asarray(labels)
    k = int(lab.max()) + 1 if n else 0
    vectors = src.vectors if src.vectors is not None and src.has_vector.any() else None
    sizes = np.bincount(lab, minlength=k)
    radii = np.array([disc(s) for s in sizes])
    if vectors is not None:
        cents = np.stack([vectors[(lab == c) & src.has_vector].mean(axis=0) if ((lab == c) & src.has_vector).any()
                          else np.zeros(vectors.shape[1]) for c in range(k)])
        start = pca2(cents)
        spread = np.sqrt((start**2).sum(axis=1).mean()) or 1.0
        start *= 0.6 * math.sqrt((radii**2).sum()) / spread
    else:
        start = sunflower(k, 0.6 * math.sqrt((radii**2).sum()) + SPACING) if k else np.zeros((0, 2))
    centres = separate(start, radii)
    pos = np.zeros((n, 2))
    how = [FOLDER] * n
    for c in range(k):
        members = np.flatnonzero(lab == c)
        with_vec = [i for i in members if vectors is not None and src.has_vector[i]]
        without = [i for i in members if not (vectors is not None and src.has_vector[i])]
        ordered = arrange_disc(vectors, with_vec) if with_vec else []
        ordered += sorted(without, key=lambda i: src.paths[i])
        slots = sunflower(len(members), radii[c])
        if with_vec:
            slots[: len(with_vec)] = match_angles(slots[: len(with_vec)], vectors, ordered[: len(with_vec)])
        for slot, i in zip(slots, ordered):
            pos[i] = centres[c] + slot
            how[i] = SEMANTIC if vectors is not None and src.has_vector[i] else (BESIDE if vectors is not None
                                                                                 else FOLDER)
    return pos, how


def arrange_disc(vectors: np.ndarray, members: list[int]) -> list[int]:
    """Members in order of similarity to their centroid, most typical first (ties by row)."""
    v = vectors[members]
    centre = v.mean(axis=0)
    sims = v @ centre
    return [members[j] for j in np.lexsort((np.arange(len(members)), -sims))]


def match_angles(slots: np.ndarray, vectors: np.ndarray, ordered: list[int]) -> np.ndarray:
    """Reorder the slots of each ring of the disc so that a document's direction follows its own PCA direction."""
    local = pca2(vectors[ordered])
    want = np.arctan2(local[:, 1], local[:, 0])
    have = np.arctan2(slots[:, 1], slots[:, 0])
    out = slots.copy()
    ring = 0
    while ring * ring < len(ordered):  # in a sunflower, ring j holds points j*j .. (j+1)*(j+1)-1
        lo, hi = ring * ring, min((ring + 1) ** 2, len(ordered))
        docs = lo + np.argsort(want[lo:hi], kind="stable")
        places = lo + np.argsort(have[lo:hi], kind="stable")
        out[docs] = slots[places]
        ring += 1
    return out


def update_layout(src: GraphSource, labels: list[int], stored: dict[str, tuple[float, float, str]]
                  ) -> tuple[np.ndarray, list[str], bool]:
    """Keep stored positions, place new documents locally; (positions, how, whether it was laid out afresh)."""
    n = len(src.ids)
    kept = [i for i, d in enumerate(src.ids) if d in stored]
    vectors = src.vectors if src.vectors is not None and src.has_vector.any() else None
    # Laid out afresh: the first time, when most documents are new, and when most of the documents that now
    # have vectors were placed without one (the first look came while the model was still embedding).
    by_meaning = sum(stored[src.ids[i]][2] in (SEMANTIC, NEAR) for i in kept)
    stale = vectors is not None and by_meaning * 2 < int(src.has_vector.sum())
    if not kept or len(kept) * 2 < n or stale:
        pos, how = full_layout(src, labels)
        return pos, how, True
    pos = np.zeros((n, 2))
    how = [""] * n
    for i in kept:
        x, y, made = stored[src.ids[i]]
        pos[i] = (x, y)
        how[i] = made
    # A document placed before it had a vector moves once, beside its nearest neighbour, when the vector comes.
    todo = [i for i in range(n) if not how[i] or (how[i] == BESIDE and vectors is not None and src.has_vector[i])]
    skip = set(todo)
    anchors = [i for i in kept if i not in skip and (how[i] != BESIDE or vectors is None)]
    by_folder = folder_anchors(src, anchors)
    middle = pos[anchors].mean(axis=0) if anchors else np.zeros(2)
    nearest = nearest_anchor(src, todo, anchors) if vectors is not None else {}
    placed = [i for i in range(n) if how[i] and i not in skip]
    for i in todo:
        if i in nearest:
            anchor, how[i] = pos[nearest[i]], NEAR
        else:
            near = beside_folder(src.folders[i], by_folder)
            anchor, how[i] = (middle if near is None else pos[near]), (BESIDE if vectors is not None else FOLDER)
        pos[i] = free_spot(anchor, src.ids[i], pos[placed])
        placed.append(i)
    return pos, how, False


def folder_anchors(src: GraphSource, anchors: list[int]) -> dict[str, int]:
    """For every folder holding placed documents (directly or below), its first placed document by path."""
    out: dict[str, int] = {}
    for a in sorted(anchors, key=lambda a: src.paths[a]):
        folder = src.folders[a]
        out.setdefault("/" + folder, a)  # "/" + folder: the folder's own documents
        while folder:
            out.setdefault(folder, a)
            folder = folder.rsplit("/", 1)[0] if "/" in folder else ""
    return out


def beside_folder(folder: str, by_folder: dict[str, int]) -> int | None:
    """The placed document a new one without a vector goes beside: one of its folder, else of the nearest
    folder above it that has any; None when there is none (it then goes to the middle)."""
    if "/" + folder in by_folder:
        return by_folder["/" + folder]
    while folder:
        folder = folder.rsplit("/", 1)[0] if "/" in folder else ""
        if folder in by_folder:
            return by_folder[folder]
    return None


def nearest_anchor(src: GraphSource, todo: list[int], anchors: list[int], block: int = 512) -> dict[int, int]:
    """For each document to place that has a vector, the most similar placed document that has one."""
    have = [i for i in anchors if src.has_vector[i]]
    want = [i for i in todo if src.has_vector[i]]
    if not have or not want:
        return {}
    matrix = src.vectors[have]
    out = {}
    for start in range(0, len(want), block):
        part = want[start:start + block]
        best = np.argmax(src.vectors[part] @ matrix.T, axis=1)
        out.update({i: have[int(b)] for i, b in zip(part, best)})
    return out
