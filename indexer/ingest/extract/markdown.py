"""Markdown notes (Obsidian, Logseq): frontmatter, title, tags, links and heading-aware sections."""
from __future__ import annotations

import re
from pathlib import Path

from indexer.ingest.extract.frontmatter import read_frontmatter
from indexer.ingest.extract.inline import code_lines, dedupe_links, normalise_tags, scan_lines
from indexer.ingest.extract.text import decode_text
from indexer.ingest.parsed import ParsedDocument, Section
from indexer.ingest.readable import blank_comments, has_words, reader_text

# An ATX heading; Logseq writes its headings as bullets ('\t- ## Usage'), which render as headings too.
HEADING = re.compile(r"^(?: {0,3}|[ \t]*[-*+][ \t]+)(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")


def parse_markdown(path: Path, data: bytes, file_type: str) -> ParsedDocument:
    """Parse a markdown note into a document with metadata and one section per heading."""
    text, warnings = decode_text(data)
    lines = text.split("\n")
    meta = read_frontmatter(lines)
    body = lines[meta.body_start:]
    in_code = code_lines(body)
    # Comments are hidden in reading view: they are not indexed (blanked, so line numbers stay the file's).
    body = blank_comments(body, in_code)
    lines = lines[:meta.body_start] + body
    sections, opening_h1 = split_sections(lines, meta.body_start, in_code)
    if opening_h1 is not None and not has_words(reader_text(opening_h1)):
        opening_h1 = None  # '# {{title}}' in a template names nothing
    body_tags, body_links = scan_lines(body, in_code)
    return ParsedDocument(
        file_type=file_type,
        title=meta.title or opening_h1 or path.stem,
        sections=sections,
        frontmatter=meta.data,
        tags=normalise_tags(meta.tags + body_tags),
        links=dedupe_links(meta.links + body_links),
        created=meta.created,
        warnings=warnings + meta.warnings,
    )


def split_sections(lines: list[str], start: int, in_code: list[bool]) -> tuple[list[Section], str | None]:
    """Cut lines[start:] at headings outside code; return the sections and the title an opening H1 gives.

    Only an H1 that is the note's first heading names the note: in a note that opens with '## Books'
    a later '# Clippings' is a section, and a Logseq bullet '- # Usage' is a block, not the page title.
    """
    sections: list[Section] = []
    opening_h1: str | None = None
    stack: list[tuple[int, str]] = []  # (level, heading text) of the enclosing headings
    section_start = start
    path: list[str] = []
    for index in range(start, len(lines)):
        if in_code[index - start]:
            continue
        match = HEADING.match(lines[index])
        if not match:
            continue
        _append_section(sections, lines, section_start, index, path)
        level, heading = len(match.group(1)), (match.group(2) or "").strip()
        if not stack and level == 1 and heading and lines[index].lstrip().startswith("#"):
            opening_h1 = heading
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        path = [text for _, text in stack if text]
        section_start = index
    _append_section(sections, lines, section_start, len(lines), path)
    return sections, opening_h1


def _append_section(sections: list[Section], lines: list[str], start: int, end: int, path: list[str]) -> None:
    # Blank lines at either end would only widen the line range; an all-blank section is skipped.
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    if start < end:
        sections.append(Section(list(path), "\n".join(lines[start:end]), start + 1, end))
