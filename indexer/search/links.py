"""One set of rules for what a link, a related_to or a reference points at, used by a document's links and
backlinks, the Forge Graph and memory search's cross-references alike.

A target is compared lowercase, without [[brackets]], |alias or #heading. It names, in this order: a frontmatter
id (where the caller knows ids), a path in the project (as written, with `.md` added, or without its extension), a
path relative to the linking document's folder (`../x.md`), a file name without its extension (Markdown files
first), then a title. Shorter paths win ties, so a target several documents answer to resolves the same way every
time.
"""
from __future__ import annotations

import posixpath

from ..text.inline import wikilink_target


def link_key(target: str) -> str:
    """A target as the resolver compares it: no [[brackets]], |alias or #heading, trimmed, lowercase."""
    text = str(target).strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = wikilink_target(text[2:-2])
    return text.split("#")[0].strip().lower()


def file_stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0]


class LinkResolver:
    """Resolve targets to rows of (paths, titles[, ids]): the documents of one project."""

    def __init__(self, paths: list[str], titles: list[str], ids: list[str | None] | None = None):
        self._id: dict[str, int] = {}
        self._path: dict[str, int] = {}
        self._stem: dict[str, int] = {}
        self._title: dict[str, int] = {}
        order = sorted(range(len(paths)), key=lambda i: (len(paths[i]), paths[i]))
        for i in order:
            path = paths[i].lower()
            self._path.setdefault(path, i)
            if ids and ids[i]:
                self._id.setdefault(str(ids[i]).strip().lower(), i)
            self._title.setdefault(titles[i].strip().lower(), i)
        for i in order:  # a path without its extension, after every full path
            self._path.setdefault(paths[i].lower().rsplit(".", 1)[0], i)
        for i in sorted(order, key=lambda i: not paths[i].lower().endswith(".md")):
            self._stem.setdefault(file_stem(paths[i].lower()), i)

    def resolve(self, target: str, from_path: str = "") -> int | None:
        """The row a target names, seen from the document at from_path; None when it names none."""
        t = link_key(target)
        if not t:
            return None
        if t in self._id:
            return self._id[t]
        for key in (t, t + ".md"):
            if key in self._path:
                return self._path[key]
        if from_path and "/" in from_path:  # a local link relative to the linking document's folder
            local = posixpath.normpath(posixpath.join(from_path.rsplit("/", 1)[0].lower(), t))
            for key in (local, local + ".md"):
                if key in self._path:
                    return self._path[key]
        stem = file_stem(t)
        if "/" not in t and stem in self._stem:
            return self._stem[stem]
        return self._title.get(t)
