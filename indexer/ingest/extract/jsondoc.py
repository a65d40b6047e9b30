"""JSON files, and the chat exports among them (a list of {role, content} messages)."""
from __future__ import annotations

import json
from pathlib import Path

from indexer.ingest.extract.text import LineLocator, decode_text, plain_document
from indexer.ingest.parsed import ParsedDocument, Section

CONVERSATION = "conversation"


def load_json(text: str) -> tuple[object, str | None]:
    """Parse JSON text; on failure return (None, a warning saying where it broke)."""
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, (f"File is not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}; it was indexed "
                      "as plain text.")
    except RecursionError:
        return None, "File is JSON nested too deeply to read; it was indexed as plain text."


def parse_json(path: Path, data: bytes, file_type: str) -> ParsedDocument:
    """Parse a JSON file: a chat export becomes one section per message, anything else is indexed as text."""
    text, warnings = decode_text(data)
    value, problem = load_json(text)
    if problem:
        return plain_document(path, text, file_type, warnings + [problem])
    messages = chat_messages(value)
    if messages is None:
        return plain_document(path, text, file_type, warnings)
    title = value.get("title") if isinstance(value, dict) else None
    return ParsedDocument(
        file_type=CONVERSATION,
        title=title.strip() if isinstance(title, str) and title.strip() else path.stem,
        sections=_message_sections(text, messages),
        warnings=warnings,
    )


def chat_messages(value: object) -> list[dict] | None:
    """Return the messages of a chat export (a list of {role, content}, or {"messages": [...]}), else None."""
    if isinstance(value, dict):
        value = value.get("messages")
    if not isinstance(value, list) or not value:
        return None
    if all(isinstance(item, dict) and "role" in item and "content" in item for item in value):
        return value
    return None


def message_text(content: object) -> str:
    """Flatten a message's content (a string, a list of parts, or {"parts": [...]}) to text."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return message_text(content.get("text", content.get("parts", "")))
    if isinstance(content, list):
        return "\n".join(part for part in (message_text(item) for item in content) if part)
    return ""


def _message_sections(text: str, messages: list[dict]) -> list[Section]:
    # Line numbers are approximate: each message starts where the next '"role"' key does.
    locator = LineLocator(text)
    starts = [locator.line_of('"role"') for _ in messages]
    last_line = text.count("\n") + 1
    sections = []
    for index, message in enumerate(messages):
        body = message_text(message.get("content")).strip()
        if not body:
            continue
        role = message.get("role")
        role = role.strip() if isinstance(role, str) and role.strip() else "user"
        end = starts[index + 1] - 1 if index + 1 < len(messages) else last_line
        sections.append(Section([role], body, starts[index], max(end, starts[index])))
    return sections
