"""CSV files: a header and rows rendered as 'column: value' lines, grouped into bounded sections."""
from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path

from indexer.ingest.extract.text import Unit, decode_text, group_units
from indexer.ingest.parsed import ParsedDocument

SNIFF_CHARS = 65536
DELIMITERS = ",;\t|"


def parse_csv(path: Path, data: bytes, file_type: str) -> ParsedDocument:
    """Parse a CSV file; rows that are not valid CSV are indexed as their raw text with a warning."""
    text, warnings = decode_text(data)
    problems = _Problems()
    sections = group_units(_row_units(text, problems))
    warnings.extend(problems.warnings())
    return ParsedDocument(file_type=file_type, title=path.stem, sections=sections, warnings=warnings)


class _Problems:
    """Counts bad rows so a broken file gets two warnings, not one per row."""

    def __init__(self) -> None:
        self.invalid = 0
        self.first_invalid = ""
        self.ragged = 0
        self.first_ragged = 0

    def warnings(self) -> list[str]:
        found = []
        if self.invalid:
            found.append(f"{self.invalid} row(s) are not valid CSV (first {self.first_invalid}); they were indexed as "
                         f"plain text.")
        if self.ragged:
            found.append(f"{self.ragged} row(s) have a different number of fields than the header (first at line "
                         f"{self.first_ragged}).")
        return found


def _row_units(text: str, problems: _Problems) -> Iterator[Unit]:
    reader = csv.reader(io.StringIO(text), delimiter=_delimiter(text), strict=True)
    lines: list[str] | None = None  # split only if some row needs its raw text
    header: list[str] | None = None
    done = 0  # the last line consumed by the reader
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            if not problems.invalid:
                problems.first_invalid = f"at line {reader.line_num}: {exc}"
            problems.invalid += 1
            lines = lines if lines is not None else text.split("\n")
            for number in range(done + 1, reader.line_num + 1):
                yield number, number, lines[number - 1]
            done = reader.line_num
            continue
        start, done = done + 1, reader.line_num
        if not any(field.strip() for field in row):
            continue
        if header is None:
            header = [field.strip() for field in row]
            yield start, done, ", ".join(header)
            continue
        if len(row) != len(header):
            problems.first_ragged = problems.first_ragged or start
            problems.ragged += 1
        yield start, done, _render_row(header, row)


def _render_row(header: list[str], row: list[str]) -> str:
    pairs = []
    for index, value in enumerate(row):
        value = value.strip()
        if value:
            name = header[index] if index < len(header) and header[index] else f"column {index + 1}"
            pairs.append(f"{name}: {value}")
    return "; ".join(pairs)


def _delimiter(text: str) -> str:
    sample = text[:SNIFF_CHARS].rsplit("\n", 1)[0] if len(text) > SNIFF_CHARS else text
    try:
        return csv.Sniffer().sniff(sample, delimiters=DELIMITERS).delimiter
    except csv.Error:
        return ","
