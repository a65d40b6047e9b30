"""YAML files, Obsidian Bases included: checked with a YAML parser, indexed as their text."""
from __future__ import annotations

from pathlib import Path

import yaml

from indexer.ingest.extract.text import decode_text, plain_document
from indexer.ingest.parsed import ParsedDocument


def parse_yaml(path: Path, data: bytes, file_type: str) -> ParsedDocument:
    """Index a YAML file's text, warning when it does not parse as YAML."""
    text, warnings = decode_text(data)
    problem = yaml_problem(text)
    if problem:
        warnings.append(problem)
    return plain_document(path, text, file_type, warnings)


def yaml_problem(text: str) -> str | None:
    """Return a sentence saying where text stops being valid YAML, or None when it is valid."""
    try:
        for _ in yaml.safe_load_all(text):
            pass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return f"File is not valid YAML{where}: {problem}; it was indexed as text."
    except RecursionError:
        return "File is YAML nested too deeply to read; it was indexed as text."
    return None
