"""What a parsed file looks like before it reaches the store: the contract between extractors, chunker and pipeline."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..text.inline import Link


@dataclass
class Section:
    """A run of text under one heading path (or one PDF page, or one chat message)."""

    heading_path: list[str]
    text: str
    start_line: int  # 1-based, inclusive, in the original file (PDF: page number)
    end_line: int
    ref: dict | None = None  # what every chunk of this section points at (a mind map node), stored as JSON


@dataclass
class ParsedDocument:
    """Everything an extractor learns from one file's bytes."""

    file_type: str
    title: str
    sections: list[Section]
    frontmatter: dict = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    created: str | None = None  # ISO date or datetime from frontmatter created/date, if any
    warnings: list[str] = field(default_factory=list)  # recorded on the document; indexing went on

    @property
    def text(self) -> str:
        return "\n\n".join(s.text for s in self.sections)


@dataclass
class ChunkDraft:
    """A chunk as the chunker cuts it, before it has an id."""

    ordinal: int
    heading_path: list[str]
    content: str  # the text shown to users and matched by keyword search
    embed_text: str  # content with a short title/heading prefix: what the model sees
    start_line: int
    end_line: int
    ref: dict | None = None  # the section's ref, repeated on each chunk cut from it
    # Every section the chunk spans: {"heading_path", "lines": [first, last], "offset": where it starts in content}
    sections: list[dict] = field(default_factory=list)
    keyword_only: bool = False  # a note with no words for the model: findable by keyword search, never embedded
    paragraphs: tuple | None = None  # boilerplate.paragraph_keys(content), made where the file is parsed
