"""Obsidian canvas files: text cards become sections, file cards become links, link cards their URL."""
from __future__ import annotations

import json
from pathlib import Path

from indexer.text.inline import dedupe_links, normalise_tags, scan_text
from indexer.ingest.extract.jsondoc import load_json
from indexer.ingest.extract.text import LineLocator, decode_text, plain_document
from indexer.ingest.parsed import Link, ParsedDocument, Section


def parse_canvas(path: Path, data: bytes, file_type: str) -> ParsedDocument:
    """Parse a .canvas file's nodes into sections, tags and links."""
    text, warnings = decode_text(data)
    value, problem = load_json(text)
    if problem:
        return plain_document(path, text, file_type, warnings + [problem])
    nodes = value.get("nodes") if isinstance(value, dict) else None
    if not isinstance(nodes, list):
        warnings.append("Canvas has no list of nodes; it was indexed as plain text.")
        return plain_document(path, text, file_type, warnings)
    locator = LineLocator(text)
    sections, tags, links = [], [], []
    skipped = 0
    for node in nodes:
        if not isinstance(node, dict):
            skipped += 1
            continue
        # Obsidian writes one node per line, so the node's id finds its line.
        named = isinstance(node.get("id"), str)
        line = locator.line_of(json.dumps(node["id"], ensure_ascii=False) if named else "{")
        kind = node.get("type")
        if kind == "text" and isinstance(node.get("text"), str) and node["text"].strip():
            card_tags, card_links = scan_text(node["text"])
            sections.append(Section([], node["text"].strip(), line, line))
            tags += card_tags
            links += card_links
        elif kind == "file" and isinstance(node.get("file"), str) and node["file"].strip():
            links.append(Link(node["file"].strip(), "file"))
        elif kind == "link" and isinstance(node.get("url"), str) and node["url"].strip():
            sections.append(Section([], node["url"].strip(), line, line))
        elif kind not in ("text", "file", "link", "group") or (
                kind == "text" and not isinstance(node.get("text"), str)):
            skipped += 1
    if skipped:
        warnings.append(f"{skipped} of the canvas's {len(nodes)} cards are not text, file, link or group cards of the "
                        "expected shape (for example a text card whose text is not a string); they were left out.")
    if not sections and skipped:
        return plain_document(path, text, file_type, warnings + ["Nothing in the canvas could be read as cards; "
                                                                 "it was indexed as plain text."])
    return ParsedDocument(
        file_type=file_type,
        title=path.stem,
        sections=sections,
        tags=normalise_tags(tags),
        links=dedupe_links(links),
        warnings=warnings,
    )
