"""What the pipeline hands the store for one file: the document's row and its chunks' rows."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class StoredDocument:
    """The stored facts about one document."""

    document_id: str
    rel_path: str
    file_type: str
    title: str
    frontmatter: dict
    created: str | None
    modified: float
    size: int
    content_hash: str
    mtime_ns: int
    warnings: list[str]


@dataclass
class ChunkRow:
    """A chunk ready to store: its id is derived from its document and its embedded text."""

    chunk_id: str
    ordinal: int
    heading_path: list[str]
    content: str
    embed_text: str
    start_line: int
    end_line: int
    content_hash: str
    ref: dict | None = None  # a mind map node reference (see indexer/mindmap), kept current on every save
    sections: list[dict] | None = None  # the sections a packed chunk spans (see indexer/chunking.py)
    keyword_only: bool = False  # never embedded (a note with no words for the model)
    paragraphs: tuple | None = None  # boilerplate.paragraph_keys(content) when the parse made them (else the writer)
