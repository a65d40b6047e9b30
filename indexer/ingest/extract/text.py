"""Turning bytes into text and text into bounded sections: the shared ground of every text extractor."""
from __future__ import annotations

import codecs
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from indexer.errors import ExtractionError
from indexer.ingest.parsed import ParsedDocument, Section

MAX_SECTION_CHARS = 2000  # the chunker bounds by tokens later; this only keeps a section from being enormous
BINARY_PROBE_BYTES = 8192
BINARY_NUL_SHARE = 0.001  # NUL bytes in more than 0.1% of the first 8 KB: binary; fewer are a text file's strays
BINARY_NUL_LEAST = 8  # ... and, in a short file, more than this many or beside other bytes that are not text
NOT_UTF8_WARNING = "File is not valid UTF-8; undecodable bytes were replaced."

# A unit is (start_line, end_line, text): a line of a text file, a CSV row, a run of HTML text.
Unit = tuple[int, int, str]
WHITESPACE = re.compile(r"\s+")


def decode_text(data: bytes) -> tuple[str, list[str]]:
    """Decode a file's bytes to text with '\\n' line endings, raising ExtractionError if they look binary."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return _normalise_newlines(data.decode("utf-16")), []
        except UnicodeDecodeError:
            pass  # not really UTF-16: judge it like any other bytes
    probe = data[:BINARY_PROBE_BYTES]
    if _looks_binary(probe):
        raise ExtractionError("File looks binary (it contains NUL bytes), so it cannot be indexed as text.")
    warnings = []
    nuls = data.count(b"\x00")
    if nuls:  # a stray NUL in a text file (a bad export) is dropped, never stored in the index
        data = data.replace(b"\x00", b"")
        warnings.append(f"File has {nuls} NUL byte{'s' if nuls != 1 else ''}, which {'were' if nuls != 1 else 'was'} "
                        "left out of the index.")
    try:
        return _normalise_newlines(data.decode("utf-8-sig")), warnings
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
        return _normalise_newlines(text), warnings + [NOT_UTF8_WARNING]


def _looks_binary(probe: bytes) -> bool:
    """NUL bytes past BINARY_NUL_SHARE of the probe; when they are few (a short file), only if the rest is not
    plain UTF-8 text either: a note with a stray NUL is text, a PNG's first bytes are not."""
    nuls = probe.count(b"\x00")
    if nuls <= len(probe) * BINARY_NUL_SHARE:
        return False
    if nuls > BINARY_NUL_LEAST:
        return True
    try:
        rest = probe.replace(b"\x00", b"").decode("utf-8")
    except UnicodeDecodeError:
        return True
    return any(ch < " " and ch not in "\t\n\r\f" for ch in rest)


def _normalise_newlines(text: str) -> str:
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def line_units(text: str, first_line: int = 1, max_chars: int = MAX_SECTION_CHARS) -> Iterator[Unit]:
    """Yield each line of text as a unit, cutting a line longer than max_chars into pieces on the same line."""
    for number, line in enumerate(text.split("\n"), start=first_line):
        if len(line) <= max_chars:
            yield number, number, line
            continue
        for offset in range(0, len(line), max_chars):
            yield number, number, line[offset:offset + max_chars]


def group_units(
    units: Iterable[Unit], heading_path: list[str] | None = None, max_chars: int = MAX_SECTION_CHARS
) -> list[Section]:
    """Join consecutive units into sections of at most about max_chars, preferring to break at blank lines."""
    sections: list[Section] = []
    group: list[Unit] = []
    size = 0

    def flush() -> None:
        # Blank units at either end would only widen the line range.
        start, end = 0, len(group)
        while start < end and not group[start][2].strip():
            start += 1
        while end > start and not group[end - 1][2].strip():
            end -= 1
        if start < end:
            kept = group[start:end]
            text = "\n".join(unit[2] for unit in kept)
            sections.append(Section(list(heading_path or []), text, kept[0][0], kept[-1][1]))
        group.clear()

    for unit in units:
        is_blank = not unit[2].strip()
        if group and (size + len(unit[2]) > max_chars or (is_blank and size >= max_chars // 2)):
            flush()
            size = 0
        group.append(unit)
        size += len(unit[2]) + 1
    flush()
    return sections


def plain_document(path: Path, text: str, file_type: str, warnings: list[str]) -> ParsedDocument:
    """Build a document that is just the text in bounded sections, titled by the file name."""
    return ParsedDocument(
        file_type=file_type, title=path.stem, sections=group_units(line_units(text)), warnings=warnings
    )


def parse_plain(path: Path, data: bytes, file_type: str) -> ParsedDocument:
    """Parse a plain text file (txt, log) into line-grouped sections."""
    text, warnings = decode_text(data)
    return plain_document(path, text, file_type, warnings)


class LineLocator:
    """Find successive strings in a text, scanning forward only, and report the line each starts on."""

    def __init__(self, text: str):
        self._text = text
        self._pos = 0
        self._line = 1

    def line_of(self, needle: str) -> int:
        """Return the 1-based line of needle's next occurrence, or the current line if it does not occur again."""
        found = self._text.find(needle, self._pos)
        if found < 0:
            return self._line
        line = self._line + self._text.count("\n", self._pos, found)
        self._line = line + needle.count("\n")
        self._pos = found + len(needle)
        return line


class LineText:
    """Collects pieces of text (from a markup parser) by the source line they start on."""

    def __init__(self) -> None:
        self._by_line: dict[int, list[str]] = {}

    def add(self, line: int, data: str) -> None:
        """Record data that starts on line; each newline inside it moves to the next line."""
        for offset, piece in enumerate(data.split("\n")):
            self._by_line.setdefault(line + offset, []).append(piece)

    def units(self) -> list[Unit]:
        """Return one unit per source line that has text, with its whitespace collapsed."""
        found = []
        for number in sorted(self._by_line):
            text = WHITESPACE.sub(" ", "".join(self._by_line[number])).strip()
            if text:
                found.append((number, number, text))
        return found
