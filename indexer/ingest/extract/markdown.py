"""Markdown notes (Obsidian, Logseq): frontmatter, title, tags, links and heading-aware sections.

A note's title is its file name unless its properties set one, as Obsidian shows it: its first heading stays a
heading (a real vault's stubs whose only heading was a shared footer's were all titled by that footer)."""
from __future__ import annotations

import re
from pathlib import Path

from indexer.text.frontmatter import read_frontmatter
from indexer.text.inline import code_lines, dedupe_links, normalise_tags, scan_lines
from indexer.ingest.extract.text import decode_text
from indexer.ingest.parsed import ParsedDocument, Section
from indexer.text.readable import blank_comments

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
    sections = split_sections(lines, meta.body_start, in_code)
    body_tags, body_links = scan_lines(body, in_code)
    return ParsedDocument(
        file_type=file_type,
        title=meta.title or path.stem,  # as Obsidian titles a note: its first heading stays a heading
        sections=sections,
        frontmatter=meta.data,
        tags=normalise_tags(meta.tags + body_tags),
        links=dedupe_links(meta.links + body_links),
        created=meta.created,
        warnings=warnings + meta.warnings,
    )


def split_sections(lines: list[str], start: int, in_code: list[bool]) -> list[Section]:
    """Cut lines[start:] at headings outside code into sections, each with its heading path."""
    sections: list[Section] = []
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
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        path = [text for _, text in stack if text]
        section_start = index
    _append_section(sections, lines, section_start, len(lines), path)
    return sections


def _append_section(sections: list[Section], lines: list[str], start: int, end: int, path: list[str]) -> None:
    # Blank lines at either end would only widen the line range; an all-blank section is skipped.
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    if start < end:
        sections.append(Section(list(path), "\n".join(lines[start:end]), start + 1, end))
