"""HTML files: visible text with its lines, titled by <title> or the first <h1>."""
from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from indexer.ingest.extract.text import WHITESPACE, LineText, decode_text, group_units
from indexer.ingest.parsed import ParsedDocument

SKIPPED = {"script", "style", "noscript", "template", "svg"}
# Tags that do not break a word: '<b>bold</b>er' reads as one word.
INLINE = {"a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "dfn", "em", "i", "kbd", "mark", "q", "s",
          "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var", "wbr"}


def parse_html(path: Path, data: bytes, file_type: str) -> ParsedDocument:
    """Index an HTML file's visible text, skipping scripts and styles."""
    text, warnings = decode_text(data)
    reader = _TextReader()
    reader.feed(text)
    reader.close()
    return ParsedDocument(
        file_type=file_type,
        title=reader.title() or path.stem,
        sections=group_units(reader.text.units()),
        warnings=warnings,
    )


class _TextReader(HTMLParser):
    """Collects visible text per source line, plus the <title> and first <h1> texts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text = LineText()
        self._skip_depth = 0
        self._capture: str | None = None  # 'title' or 'h1' while inside one
        self._captured: dict[str, list[str]] = {"title": [], "h1": []}

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in SKIPPED:
            self._skip_depth += 1
        elif tag in self._captured and self._capture is None and not self._captured[tag]:
            self._capture = tag
        if tag not in INLINE:
            self._add(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIPPED:
            self._skip_depth = max(0, self._skip_depth - 1)
        elif tag == self._capture:
            self._capture = None
        if tag not in INLINE:
            self._add(" ")

    def handle_data(self, data: str) -> None:
        if self._skip_depth:
            return
        if self._capture:
            self._captured[self._capture].append(data)
        if self._capture != "title":
            self._add(data)

    def _add(self, data: str) -> None:
        self.text.add(self.getpos()[0], data)

    def title(self) -> str | None:
        """Return the <title> text, else the first <h1>'s, else None."""
        for tag in ("title", "h1"):
            text = WHITESPACE.sub(" ", "".join(self._captured[tag])).strip()
            if text:
                return text
        return None
