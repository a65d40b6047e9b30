"""Extractors: one table from file extension to the function that turns a file's bytes into a ParsedDocument."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from indexer.errors import ExtractionError
from indexer.ingest.extract.canvas import parse_canvas
from indexer.ingest.extract.csvdoc import parse_csv
from indexer.ingest.extract.htmldoc import parse_html
from indexer.ingest.extract.jsondoc import parse_json
from indexer.ingest.extract.markdown import parse_markdown
from indexer.ingest.extract.pdfdoc import parse_pdf
from indexer.ingest.extract.text import parse_plain
from indexer.ingest.extract.xmldoc import parse_xml
from indexer.ingest.extract.yamldoc import parse_yaml
from indexer.ingest.parsed import ParsedDocument
from indexer.text.files import HIDDEN_SUFFIXES


def parse_mindmap(path: Path, data: bytes, file_type: str) -> ParsedDocument:
    """A mind map's nodes as sections."""
    from .mindmap import parse_mindmap as parse

    return parse(path, data, file_type)


@dataclass(frozen=True)
class Extractor:
    """How one kind of file is read: its file_type, the function parse(path, data, file_type), and whether every
    part of the file is for a reader (a mind map's file holds private notes and attachments; a PDF's bytes are not
    text): where not, only what parse made of it is ever read or shown (search/note_text.py)."""

    file_type: str
    parse: Callable[[Path, bytes, str], ParsedDocument]


EXTRACTORS: dict[str, Extractor] = {
    ".md": Extractor("md", parse_markdown),
    ".markdown": Extractor("md", parse_markdown),
    ".txt": Extractor("txt", parse_plain),
    ".log": Extractor("log", parse_plain),
    ".json": Extractor("json", parse_json),  # a chat export comes back as file_type "conversation"
    ".csv": Extractor("csv", parse_csv),
    ".yaml": Extractor("yaml", parse_yaml),
    ".yml": Extractor("yaml", parse_yaml),
    ".base": Extractor("base", parse_yaml),
    ".xml": Extractor("xml", parse_xml),
    ".html": Extractor("html", parse_html),
    ".htm": Extractor("html", parse_html),
    ".pdf": Extractor("pdf", parse_pdf),
    ".canvas": Extractor("canvas", parse_canvas),
    # A mind map: one section per node (indexer/mindmap); its file also holds private notes and attachments.
    ".mmdata": Extractor("mindmap-semantic", parse_mindmap),
}


def file_type_for(path: Path) -> str | None:
    """Return the file_type a path's extension is indexed as, or None if it is not supported."""
    extractor = EXTRACTORS.get(path.suffix.lower())
    return extractor.file_type if extractor else None


def file_is_readable(path: Path) -> bool:
    """Whether a reader may see the file itself, every part of it (else only what its extractor made of it)."""
    return path.suffix.lower() in EXTRACTORS and path.suffix.lower() not in HIDDEN_SUFFIXES


def parse_file(path: Path, data: bytes) -> ParsedDocument:
    """Parse a file's bytes by its extension, raising ExtractionError only when nothing can be indexed."""
    extractor = EXTRACTORS.get(path.suffix.lower())
    if extractor is None:
        raise ExtractionError(f"Files ending in '{path.suffix or path.name}' are not a supported type.")
    return extractor.parse(path, data, extractor.file_type)
