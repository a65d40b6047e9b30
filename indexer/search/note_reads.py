"""The read side's questions about notes, by name: documents, their tags, links and properties, the files that
could not be indexed, and the Forge Graph's stored positions. chunk_reads.py asks about chunks; no other module of
the read side holds SQL (tests/test_architecture.py checks).

Id lists are passed as one JSON array bound to `json_each(?)`, as in chunk_reads.py.
"""
from __future__ import annotations

from typing import Iterable

from .chunk_reads import IN, ids
from .index import ProjectIndex


# --- documents ----------------------------------------------------------------------------------------------

def _listing(folder: str, tag: str | None, name: str = "") -> tuple[str, list]:
    where, params = ["1"], []
    if name:  # any part of the path or the title, in any case
        where.append("(instr(lower(rel_path), ?) > 0 OR instr(lower(title), ?) > 0)")
        params += [name.lower(), name.lower()]
    if folder:
        where.append("(rel_path = ? OR substr(rel_path, 1, ?) = ?)")
        params += [folder, len(folder) + 1, folder + "/"]
    if tag:
        where.append("document_id IN (SELECT document_id FROM tags WHERE tag = ? OR substr(tag, 1, ?) = ?)")
        params += [tag, len(tag) + 1, tag + "/"]
    return " AND ".join(where), params


def count_listed(index: ProjectIndex, folder: str, tag: str | None, name: str = "") -> int:
    """How many documents lie under a folder ('' for all), have a tag or one below it (None for any) and hold name
    in their path or title ('' for any)."""
    where, params = _listing(folder, tag, name)
    return index.sql(f"SELECT count(*) FROM documents WHERE {where}", params)[0][0]


def listed(index: ProjectIndex, folder: str, tag: str | None, limit: int, offset: int, name: str = "") -> list:
    """A page of those documents' rows, by path."""
    where, params = _listing(folder, tag, name)
    return index.sql(f"SELECT * FROM documents WHERE {where} ORDER BY rel_path LIMIT ? OFFSET ?",
                     params + [limit, offset])


def document(index: ProjectIndex, document_id: str):
    """One document's row, None when there is none."""
    rows = index.sql("SELECT * FROM documents WHERE document_id = ?", (document_id,))
    return rows[0] if rows else None


def documents(index: ProjectIndex, document_ids: Iterable[str], by_path: bool = False) -> list:
    """These documents' rows (by path when asked)."""
    return index.sql(f"SELECT * FROM documents WHERE document_id {IN}" + (" ORDER BY rel_path" if by_path else ""),
                     [ids(document_ids)])


def document_at(index: ProjectIndex, rel_path: str) -> str | None:
    """The id of the document at a path, None when none is indexed there."""
    rows = index.sql("SELECT document_id FROM documents WHERE rel_path = ?", (rel_path,))
    return rows[0][0] if rows else None


def path_of(index: ProjectIndex, document_id: str) -> str | None:
    """A document's path, None when it is not indexed."""
    rows = index.sql("SELECT rel_path FROM documents WHERE document_id = ?", (document_id,))
    return rows[0][0] if rows else None


def titles(index: ProjectIndex, document_ids: Iterable[str]) -> dict[str, str]:
    """These documents' titles, by id."""
    return {r[0]: r[1] for r in index.sql(f"SELECT document_id, title FROM documents WHERE document_id {IN}",
                                          [ids(document_ids)])}


def names_of(index: ProjectIndex, document_ids: Iterable[str]) -> dict[str, tuple[str, str, str]]:
    """(title, rel_path, frontmatter JSON) of these documents, by id: what a note is called."""
    return {r[0]: (r[1], r[2], r[3]) for r in index.sql(
        f"SELECT document_id, title, rel_path, frontmatter FROM documents WHERE document_id {IN}",
        [ids(document_ids)])}


def aliased_holding(index: ProjectIndex, terms: list[str]) -> list[str]:
    """The documents with an alias (alias: or aliases:) whose properties hold every term: the notes a query may
    name by an alias rather than its title."""
    where = "".join(" AND instr(lower(frontmatter), ?) > 0" for _ in terms)
    return [r[0] for r in index.sql(
        f"SELECT document_id FROM documents WHERE frontmatter LIKE '%\"alias%'{where}", list(terms))]


def frontmatters(index: ProjectIndex) -> list[str]:
    """Every non-empty frontmatter, as stored (JSON)."""
    return [r[0] for r in index.sql("SELECT frontmatter FROM documents WHERE frontmatter NOT IN ('{}', '', 'null')")]


def catalogue(index: ProjectIndex) -> list:
    """(document_id, rel_path, title) of every document: what links are resolved against."""
    return index.sql("SELECT document_id, rel_path, title FROM documents")


def link_kinds(index: ProjectIndex) -> dict[str, int]:
    """How many links of each kind (wikilink, file: a markdown link to a file) the project holds."""
    return dict(index.sql("SELECT kind, count(*) FROM links GROUP BY kind"))


def frontmatter_naming(index: ProjectIndex, text: str) -> list:
    """(document_id, frontmatter JSON) of the documents whose frontmatter holds the text (any case)."""
    return index.sql("SELECT document_id, frontmatter FROM documents WHERE instr(lower(frontmatter), ?) > 0",
                     (text.lower(),))


def paths(index: ProjectIndex) -> list:
    """(document_id, rel_path) of every document."""
    return index.sql("SELECT document_id, rel_path FROM documents")


def documents_by_path(index: ProjectIndex) -> list:
    """(document_id, rel_path, title) of every document, by path."""
    return index.sql("SELECT document_id, rel_path, title FROM documents ORDER BY rel_path")


def content_digest_rows(index: ProjectIndex) -> list:
    """(document_id, rel_path, content_hash) of every document, by id: what a digest of the project reads."""
    return index.sql("SELECT document_id, rel_path, content_hash FROM documents ORDER BY document_id")


def documents_where(index: ProjectIndex, conditions: list[str], params: list) -> list:
    """(document_id, frontmatter) of the documents every condition on the documents table allows (filters.py's
    folder, type and modified time)."""
    where = " AND ".join(conditions) or "1"
    return index.sql(f"SELECT document_id, frontmatter FROM documents WHERE {where}", params)


def count_allowed(index: ProjectIndex, allowed: set[str] | None) -> int:
    """How many documents are allowed (None: all of them)."""
    if allowed is None:
        return index.sql("SELECT count(*) FROM documents")[0][0]
    return index.sql(f"SELECT count(*) FROM documents WHERE document_id {IN}", [ids(sorted(allowed))])[0][0]


ORDERS = {"recent": "modified DESC, rel_path", "path": "rel_path"}


def allowed_in_order(index: ProjectIndex, allowed: set[str] | None, order: str, limit: int) -> list[str]:
    """The first `limit` allowed document ids, newest first ('recent') or by path ('path')."""
    where, params = "", []
    if allowed is not None:
        where, params = f"WHERE document_id {IN}", [ids(sorted(allowed))]
    return [r[0] for r in index.sql(f"SELECT document_id FROM documents {where} ORDER BY {ORDERS[order]} LIMIT ?",
                                    [*params, limit])]


def memory_documents(index: ProjectIndex, document_ids: Iterable[str] | None) -> tuple[list, list, list]:
    """(documents, their tags, their related_to targets) of these documents, or of all with None."""
    if document_ids is None:
        where, params = "1", []
    else:
        where, params = f"document_id {IN}", [ids(sorted(document_ids))]
    return (index.sql(f"SELECT document_id, rel_path, title, frontmatter, modified FROM documents WHERE {where}",
                      params),
            index.sql(f"SELECT document_id, tag FROM tags WHERE {where}", params),
            index.sql(f"SELECT document_id, target FROM links WHERE {where} AND kind = 'related_to' ORDER BY target",
                      params))


# --- tags ---------------------------------------------------------------------------------------------------

def documents_with_tag(index: ProjectIndex, tag: str) -> set[str]:
    """The documents with a tag or one below it (`project` holds `project/alpha`)."""
    rows = index.sql("SELECT document_id FROM tags WHERE tag = ? OR substr(tag, 1, ?) = ?", (tag, len(tag) + 1,
                                                                                             tag + "/"))
    return {r[0] for r in rows}


def documents_tagged(index: ProjectIndex, all_of: list[str], any_of: list[str]) -> set[str] | None:
    """The documents with every tag of all_of and one of any_of, each tag matching those below it (normalised
    tags); None when no tag is asked for."""
    if not all_of and not any_of:
        return None
    docs: set[str] | None = None
    for tag in all_of:
        found = documents_with_tag(index, tag)
        docs = found if docs is None else docs & found
    if any_of:
        either: set[str] = set()
        for tag in any_of:
            either |= documents_with_tag(index, tag)
        docs = either if docs is None else docs & either
    return docs or set()


def tags_of(index: ProjectIndex, document_ids: Iterable[str]) -> dict[str, list[str]]:
    """These documents' tags, sorted, by document (documents without tags left out)."""
    out: dict[str, list[str]] = {}
    for r in index.sql(f"SELECT document_id, tag FROM tags WHERE document_id {IN} ORDER BY tag", [ids(document_ids)]):
        out.setdefault(r[0], []).append(r[1])
    return out


def all_tags(index: ProjectIndex) -> list:
    """(document_id, tag) of every tag, by tag."""
    return index.sql("SELECT document_id, tag FROM tags ORDER BY tag")


def most_used_tags(index: ProjectIndex, limit: int) -> list:
    """(tag, count) of the most used tags."""
    return index.sql("SELECT tag, count(*) AS n FROM tags GROUP BY tag ORDER BY n DESC, tag LIMIT ?", (limit,))


def tags_containing(index: ProjectIndex, text: str) -> list:
    """(tag, count) of every tag holding the text."""
    return index.sql("SELECT tag, count(*) AS n FROM tags WHERE instr(tag, ?) > 0 GROUP BY tag", (text,))


# --- links --------------------------------------------------------------------------------------------------

def links_from(index: ProjectIndex, document_id: str) -> list:
    """(target, kind) of a document's links, by target."""
    return index.sql("SELECT target, kind FROM links WHERE document_id = ? ORDER BY target", (document_id,))


def all_links(index: ProjectIndex) -> list:
    """(document_id, target, kind) of every link."""
    return index.sql("SELECT document_id, target, kind FROM links")


def related_to_links(index: ProjectIndex) -> list:
    """(document_id, target) of every frontmatter related_to."""
    return index.sql("SELECT document_id, target FROM links WHERE kind = 'related_to'")


def links_naming(index: ProjectIndex, document_id: str, words: Iterable[str]) -> list:
    """(document_id, target, rel_path) of the other documents' links whose target holds one of the words."""
    words = list(words)
    clause = " OR ".join("instr(lower(l.target), ?) > 0" for _ in words)
    return index.sql(f"""SELECT l.document_id, l.target, d.rel_path FROM links l JOIN documents d USING (document_id)
                         WHERE l.document_id != ? AND ({clause})""", (document_id, *words))


# --- files that could not be indexed, mind maps, the Forge Graph's positions ---------------------------------

def file_error_at(index: ProjectIndex, rel_path: str) -> bool:
    """Whether the file at a path could not be indexed."""
    return bool(index.sql("SELECT 1 FROM file_errors WHERE rel_path = ?", (rel_path,)))


def documents_of_type(index: ProjectIndex, file_type: str) -> list:
    """(document_id, title, rel_path) of the documents of a file type, by title."""
    return index.sql("SELECT document_id, title, rel_path FROM documents WHERE file_type = ? "
                     "ORDER BY lower(title), rel_path", (file_type,))


def file_errors_ending(index: ProjectIndex, suffix: str) -> list:
    """(rel_path, error) of the files ending in suffix that could not be indexed."""
    return index.sql("SELECT rel_path, error FROM file_errors WHERE lower(rel_path) LIKE ? ORDER BY rel_path",
                     ("%" + suffix,))


def graph_positions(index: ProjectIndex) -> list:
    """(document_id, x, y, placed) of every stored Forge Graph position."""
    return index.sql("SELECT document_id, x, y, placed FROM graph_positions")
