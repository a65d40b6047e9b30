"""Clusters of the Forge Graph: deterministic spherical k-means on document vectors (folders without them),
each labelled by its most characteristic words and tags and given a colour."""
from __future__ import annotations

import colorsys
import math
import re
from collections import Counter
from typing import Iterable

import numpy as np

from ..search.grammar import PARTICLES
from ..text.readable import reader_text
from ..text.segment import CJK_RUN, pairs

MAX_CLUSTERS = 32
KMEANS_ITERATIONS = 40
LABEL_TERMS = 3
# Words of letters only, in any script (no hex colour such as e7a, hash or version); Chinese and Japanese runs lend
# their character pairs instead, as keyword search reads them (text/segment.py).
WORD = re.compile(r"(?<![^\W_])[^\W\d_]{3,}(?![^\W_])")
SPREAD = 3  # a word that fills half the notes of a third of the clusters (3 or more) is a template's, not a topic
STOPWORDS = frozenset("""
    the and for with that this from are was were you your can will not but all any has have had its into
    our out use used using see also more most some such than then them there these they those what when
    which who why how one two new may via per about after before over under each other only own same both
    http https www com org html md txt json png jpg pdf null true false none yes
""".split())


def cluster_count(n: int) -> int:
    """How many clusters n documents get: about the square root of n/2, at most MAX_CLUSTERS."""
    return max(1, min(MAX_CLUSTERS, round(math.sqrt(n / 2)))) if n else 0


def kmeans(vectors: np.ndarray, k: int, seed: int = 0) -> np.ndarray:
    """Spherical k-means with k-means++ seeding from a fixed seed: the same vectors give the same labels."""
    n = len(vectors)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    k = min(k, n)
    rng = np.random.default_rng(seed)
    centres = np.empty((k, vectors.shape[1]), dtype=np.float32)
    centres[0] = vectors[0]
    closest = 1.0 - vectors @ centres[0]
    for j in range(1, k):
        weights = np.clip(closest, 0, None) ** 2
        total = float(weights.sum())
        pick = int(rng.choice(n, p=weights / total)) if total > 0 else j
        centres[j] = vectors[pick]
        closest = np.minimum(closest, 1.0 - vectors @ centres[j])
    labels = np.full(n, -1, dtype=np.int64)
    for _ in range(KMEANS_ITERATIONS):
        new = np.argmax(vectors @ centres.T, axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
        for j in range(k):
            members = vectors[labels == j]
            if len(members):
                mean = members.sum(axis=0)
                centres[j] = mean / (np.linalg.norm(mean) or 1.0)
    return labels


def by_size(labels: list[int] | np.ndarray) -> list[int]:
    """Renumber labels so that cluster 0 is the largest (ties: the one whose first member comes first)."""
    counts = Counter(int(x) for x in labels)
    first: dict[int, int] = {}
    for i, x in enumerate(labels):
        first.setdefault(int(x), i)
    order = sorted(counts, key=lambda c: (-counts[c], first[c]))
    rank = {c: r for r, c in enumerate(order)}
    return [rank[int(x)] for x in labels]


def folder_clusters(folders: list[str]) -> tuple[list[int], list[str]]:
    """Without vectors: one cluster per top-level folder, labelled with its name."""
    tops = [f.split("/", 1)[0] if f else "(top level)" for f in folders]
    names = sorted(set(tops))
    labels = by_size([names.index(t) for t in tops])
    label_names = {labels[i]: tops[i] for i in range(len(tops))}
    return labels, [label_names[c] for c in range(len(label_names))]


def terms_of(title: str, tags: list[str], head: str, fragments: set[str] = frozenset()) -> set[str]:
    """The words a document can lend its cluster's label: title and first lines as a reader reads them (a badge's
    URL, an HTML tag or a link's address lends nothing: a plugin vault's clusters were named "manifest · total",
    "shields", "span" and "blob"), and its tags as #tag. A CJK character pair of `fragments` lends nothing."""
    text = readable_head(title, head)
    words = {w for w in WORD.findall(CJK_RUN.sub(" ", text)) if w not in STOPWORDS}
    if CJK_RUN.search(text):  # 解压缩文件 lends 解压, 压缩, 文件 (a pair holding a particle such as 的 lends nothing)
        words |= {p for run in CJK_RUN.findall(text) for p in pairs(run)
                  if len(p) == 2 and not set(p) & PARTICLES and p not in fragments}
    return words | {"#" + t for t in tags}


def readable_head(title: str, head: str) -> str:
    return f"{title} {reader_text(head)}".lower()


def fragments(texts: Iterable[str], least: int = 3, share: float = 0.85) -> set[str]:
    """The CJK character pairs of these texts that are pieces of a longer string, not words: a pair seen `least` times
    or more whose neighbour on one side is the same character in `share` of them (not a particle, nor the run's
    end). Without spaces between words, the pairs of 此命令为 include 此命 and 令为, which are in every alias page of
    tldr's Chinese pages and named its biggest cluster "令为 · 此命 · 查看"; 命令 has many neighbours on each side."""
    total: Counter = Counter()
    left: dict[str, Counter] = {}
    right: dict[str, Counter] = {}
    for text in texts:
        for run in CJK_RUN.findall(text):
            for i in range(len(run) - 1):
                pair = run[i:i + 2]
                total[pair] += 1
                left.setdefault(pair, Counter())[run[i - 1] if i else ""] += 1
                right.setdefault(pair, Counter())[run[i + 2] if i + 2 < len(run) else ""] += 1
    found = set()
    for pair, n in total.items():
        if n < least:
            continue
        for side in (left[pair], right[pair]):
            char, count = side.most_common(1)[0]
            if char and char not in PARTICLES and count >= share * n:
                found.add(pair)
                break
    return found


def describe(labels: list[int], documents: list[set[str]]) -> list[str]:
    """Label each cluster with the terms most over-represented in it (document frequency against the whole), every
    label its own: clusters are named largest first, and each label leads with its best term that no earlier label
    used, so clusters that share their top words (a vault's many plugin notes) are told apart by the words that
    differ."""
    n = len(labels)
    k = max(labels) + 1 if labels else 0
    overall: Counter = Counter()
    per_cluster = [Counter() for _ in range(k)]
    for c, terms in zip(labels, documents):
        overall.update(terms)
        per_cluster[c].update(terms)
    sizes = Counter(labels)
    written_in_cjk = Counter(c for c, terms in zip(labels, documents) if any(CJK_RUN.match(t) for t in terms))
    # A word most notes of many clusters hold is a template's ("developed", "compatible" in a plugin vault's notes):
    # it tells no cluster apart from the others, whatever its share.
    filled = Counter(term for c in range(k) for term, df in per_cluster[c].items() if df * 2 >= sizes[c] > 1)
    template = {term for term, count in filled.items() if count >= max(SPREAD, k / 3)}
    names: dict[int, str] = {}
    used: set[str] = set()
    for c in sorted(range(k), key=lambda c: (-sizes[c], c)):
        floor = 2 if sizes[c] >= 4 else 1
        scored = []
        for term, df in per_cluster[c].items():
            if df < floor or term in template:
                continue
            inside = df / sizes[c]
            scored.append((inside * math.log(inside * n / overall[term] + 1e-9), term))
        scored.sort(key=lambda s: (-s[0], s[1]))
        ranked = [term for _, term in scored]
        if written_in_cjk[c] * 2 >= sizes[c]:  # named in the notes' language: its best CJK words before command names
            ranked = _words_first(ranked)
        lead = next((t for t in ranked if t not in used), None)
        terms = ranked[:LABEL_TERMS] if lead is None else [lead] + [t for t in ranked if t != lead][:LABEL_TERMS - 1]
        used.update(terms)
        name = " · ".join(terms) or f"cluster {c + 1}"
        if name in names.values():  # nothing left to tell it apart by: number it
            name = f"{name} ({c + 1})"
        names[c] = name
    return [names[c] for c in range(k)]


def _words_first(ranked: list[str], top: int = 12) -> list[str]:
    """A CJK cluster's ranked terms with its best character pairs first, leaving out a pair that only joins two others
    (环境 + 变量 make 境变, which is no word)."""
    near = [t for t in ranked[:top] if len(t) == 2 and CJK_RUN.fullmatch(t)]

    def joins(t: str) -> bool:
        return any(k != t and k[1] == t[0] for k in near) and any(k != t and k[0] == t[1] for k in near)

    words = [t for t in near if not joins(t)]
    return words[:8] + [t for t in ranked if t not in words[:8] and t not in near]


def colour(c: int) -> str:
    """A colour for cluster c: hues a golden angle apart, two lightnesses, readable on light and dark."""
    hue = (c * 137.508) % 360 / 360
    r, g, b = colorsys.hls_to_rgb(hue, 0.47 if c % 2 == 0 else 0.58, 0.62)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"
