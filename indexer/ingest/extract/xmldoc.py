"""XML files: the text between the tags, with the lines it came from."""
from __future__ import annotations

import html
import re
from pathlib import Path
from xml.parsers import expat

from indexer.ingest.extract.text import LineText, decode_text, group_units, plain_document
from indexer.ingest.parsed import ParsedDocument

TAG = re.compile(r"<[^>]*>")


def parse_xml(path: Path, data: bytes, file_type: str) -> ParsedDocument:
    """Index an XML file's text content; if it does not parse, strip its tags and warn."""
    text, warnings = decode_text(data)
    # expat is the parser under xml.etree; using it directly gives each piece of text its line.
    parser = expat.ParserCreate(encoding="utf-8")  # the text is already decoded, whatever the declaration says
    collected = LineText()
    parser.CharacterDataHandler = lambda data: collected.add(parser.CurrentLineNumber, data)
    # An element boundary separates words: '<a>x</a><b>y</b>' is 'x y'.
    parser.StartElementHandler = lambda name, attrs: collected.add(parser.CurrentLineNumber, " ")
    parser.EndElementHandler = lambda name: collected.add(parser.CurrentLineNumber, " ")
    try:
        parser.Parse(text, True)
    except expat.ExpatError as exc:
        warnings.append(
            f"File is not valid XML (line {exc.lineno}): {expat.ErrorString(exc.code)}; its tags were stripped instead."
        )
        return plain_document(path, html.unescape(strip_tags(text)), file_type, warnings)
    return ParsedDocument(file_type=file_type, title=path.stem, sections=group_units(collected.units()),
                          warnings=warnings)


def strip_tags(text: str) -> str:
    """Remove everything that looks like a tag, keeping the line breaks inside tags so line numbers hold."""
    return TAG.sub(lambda match: "\n" * match.group().count("\n"), text)
