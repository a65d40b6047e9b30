"""A `.mmdata` file as a `mindmap-semantic` document: one section per node, each with the node's reference.

Each section's text is what the index may know of a node: its title, body, tags and relationships. Attachments
and private notes are never copied. The node reference (`Section.ref`) travels with every chunk cut from the
section, so an oversized body split into sub-chunks still points at one node.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from ...errors import ExtractionError, MapFormatError
from ...text.inline import normalise_tags
from .text import decode_text
from ..parsed import ParsedDocument, Section
from .mindmap_format import MindMap, Node, loads

FILE_TYPE = "mindmap-semantic"
INDEX_FORMAT = 1  # the layout of the node references in the index; a lower one is an older-format index
_ID_LINE = re.compile(r'"id"\s*:\s*("(?:[^"\\]|\\.)*")')


def parse_mindmap(path: Path, data: bytes, file_type: str = FILE_TYPE) -> ParsedDocument:
    """Parse a map file into one section per node, in outline order; attachments and private notes stay out."""
    text, warnings = decode_text(data)
    try:
        mind_map = loads(text, f"The mind map {path.name}")
    except MapFormatError as exc:
        raise ExtractionError(str(exc)) from None
    lines = _node_lines(text)
    sections = []
    for node in mind_map.walk():
        line = lines.get(node.id, 1)
        sections.append(Section(mind_map.path(node.id), node_text(mind_map, node), line, line,
                                ref=node_ref(mind_map, node)))
    return ParsedDocument(
        file_type=file_type,
        title=mind_map.title or path.stem,
        sections=sections,
        tags=normalise_tags(t for n in mind_map.nodes for t in n.tags),
        warnings=warnings,
    )


def relationships_of(mind_map: MindMap, node: Node) -> list[dict]:
    """The node's relationships both ways, to nodes that exist: {type, direction, node_id, title}."""
    out = [{"type": r.type, "direction": "outgoing", "node_id": r.target, "title": mind_map.by_id[r.target].title}
           for r in node.relationships if r.target in mind_map.by_id]
    out += [{"type": r.type, "direction": "incoming", "node_id": source.id, "title": source.title}
            for source, r in mind_map.incoming.get(node.id, [])]
    return out


def node_text(mind_map: MindMap, node: Node) -> str:
    """The searchable text of a node: title, body, tags and relationships, blank-line separated."""
    blocks = [node.title.strip(), node.body.strip()]
    tags = normalise_tags(node.tags)
    if tags:
        blocks.append("Tags: " + " ".join("#" + t for t in tags))
    related = [f"{r['type']} {r['title']}" if r["direction"] == "outgoing" else f"{r['title']} {r['type']} this"
               for r in relationships_of(mind_map, node)]
    if related:
        blocks.append("Related: " + "; ".join(related))
    return "\n\n".join(b for b in blocks if b)


def node_ref(mind_map: MindMap, node: Node) -> dict:
    """The node reference stored with each of its chunks, as of the map revision being indexed."""
    return {
        "node_id": node.id, "parent_id": node.parent, "path": mind_map.path(node.id),
        "level": mind_map.level(node.id), "title": node.title, "tags": normalise_tags(node.tags),
        "relationships": relationships_of(mind_map, node), "revision": mind_map.revision, "format": INDEX_FORMAT,
    }


def _node_lines(text: str) -> dict[str, int]:
    """The line each node's id is written on (the indented layout writes one key per line)."""
    lines: dict[str, int] = {}
    pos, line = 0, 1
    for match in _ID_LINE.finditer(text):
        line += text.count("\n", pos, match.start())
        pos = match.start()
        try:
            lines.setdefault(json.loads(match.group(1)), line)
        except (ValueError, TypeError):
            continue
    return lines
