"""The text of a note that anything may read or show: read_note and document lines, related notes, link
suggestions, MCP, the window and exports all read a note through here.

A file's own bytes are that text only where its format says every part of the file is for a reader
(`text/files.py`: `file_is_readable`): a mind map's file also holds each node's private notes and its attachments, and a
PDF's bytes are not text. For those the readable text is what the index made of the file, which never holds them.
So no reader needs to know which formats keep something private: a new format that does says so once, in
HIDDEN_SUFFIXES. What a note says of its own (own_text) leaves out the paragraphs many notes share as well.
"""
from __future__ import annotations

from pathlib import PurePosixPath

from ..errors import DocumentNotFound, InvalidQuery
from ..text.boilerplate import blank_shared, only_shared
from ..text.frontmatter import block_end, read_frontmatter
from ..text.inline import code_lines
from ..text.files import TooLarge, UnsafeFile, file_is_readable, read_inside
from ..text.readable import blank_comments
from . import chunk_reads
from .index import ProjectIndex



def file_text(index: ProjectIndex, rel: str, max_bytes: int) -> str | None:
    """The note's file as it is now, when its format lets a reader see the whole file and it is UTF-8 text; None
    otherwise. A file that cannot be read now raises DocumentNotFound or InvalidQuery with a sentence that says why."""
    if not file_is_readable(PurePosixPath(rel)):
        return None
    try:
        data = read_inside(index.root, index.root / rel, max_bytes)[0]
    except UnsafeFile as exc:
        raise DocumentNotFound(f"'{rel}' is not read: {exc}.") from None
    except TooLarge as exc:
        raise InvalidQuery(f"'{rel}' is now {exc.size / 2**20:.1f} MB, over the file size limit; leave out "
                           "start_line and end_line to get its indexed text.") from None
    except OSError as exc:
        raise DocumentNotFound(f"'{rel}' cannot be read now ({exc.strerror}); it may have been moved or deleted "
                               "since it was indexed.") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def indexed_text(index: ProjectIndex, document_id: str) -> str:
    """What the index holds of a note: its passages' texts in order, joined by blank lines."""
    return "\n\n".join(content for _, _, content in chunk_reads.document_chunk_texts(index, document_id))


def readable_text(index: ProjectIndex, row, max_bytes: int) -> str:
    """The note's readable text: its file as it is now where file_text gives it, else its indexed text."""
    try:
        text = file_text(index, row["rel_path"], max_bytes)
    except (DocumentNotFound, InvalidQuery):
        text = None
    return text if text is not None else indexed_text(index, row["document_id"])


def own_text(index: ProjectIndex, row, max_bytes: int) -> str:
    """The note's readable text with its properties, its comments and the paragraphs many notes share (a footer, a
    banner) blanked line for line: what its mentions, rare words and meaning are read from. Empty when that leaves it
    nothing of its own but headings (a stub that is only a footer)."""
    shared = chunk_reads.shared_paragraphs(index)
    lines = readable_text(index, row, max_bytes).split("\n")
    # As the markdown parser reads a note (blanked line for line: a mention's line is the file's); a block of
    # properties that is not valid YAML is kept in the text keyword search reads, but it is no one's own words.
    start = max(read_frontmatter(lines).body_start, block_end(lines))
    body = blank_comments(lines[start:], code_lines(lines[start:]))
    text = "\n".join([""] * start + body)
    return "" if only_shared(text, shared) else blank_shared(text, shared)
