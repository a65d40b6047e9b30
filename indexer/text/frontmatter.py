"""A note's metadata block: YAML frontmatter or Logseq `key:: value` page properties, and what they say."""
from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import json

import yaml

from indexer.text import bounded_yaml
from indexer.text.inline import WIKILINK, Link, normalise_tags, wikilink_target, wikilinks_in

FRONTMATTER_END = ("---", "...")
MAX_FRONTMATTER_BYTES = 64 * 1024  # stored as JSON with the document; larger blocks are indexed as text
LOGSEQ_PROPERTY = re.compile(r"^([A-Za-z0-9][\w.\-]*)::(?:[ \t]+(.*?))?[ \t]*$")
LOGSEQ_LIST_KEYS = ("tags", "alias")
LOGSEQ_PAGE_REF = re.compile(r"#?\[\[([^\[\]\n]+?)\]\]")
# A template's placeholder as a whole value (`created: {{date}}`, `- {{tag}}`, Templater's `<% tp.date.now() %>`):
# normal in real vaults' Templates folders, not metadata yet, and `{{date}}` is not even valid YAML. The block is
# read with the placeholders left out, and kept as text as well (see _yaml_frontmatter).
TEMPLATE_LINE = re.compile(r"^(\s*(?:-\s+|[^\s#:-][^:]*:\s+))(\{\{[^{}\n]*\}\}|<%[^\n]*%>)\s*$")
PLACEHOLDER = "\x00template placeholder\x00"


@dataclass
class Frontmatter:
    """What a note's metadata block holds, and the index of the first line after it."""

    data: dict = field(default_factory=dict)  # JSON-safe
    body_start: int = 0
    title: str | None = None
    created: str | None = None
    tags: list[str] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def block_end(lines: list[str]) -> int:
    """The first line after a `---` block at the top of a note, read as YAML or not (0 without one): what is never
    the note's own words, even where the block is kept in its text for keyword search."""
    if lines and lines[0].rstrip() == "---":
        for index in range(1, len(lines)):
            if lines[index].rstrip() in FRONTMATTER_END:
                return index + 1
    return 0


def read_frontmatter(lines: list[str]) -> Frontmatter:
    """Read the YAML frontmatter or Logseq page properties at the top of a note's lines."""
    if lines and lines[0].rstrip() == "---":
        for index in range(1, len(lines)):
            if lines[index].rstrip() in FRONTMATTER_END:
                return _yaml_frontmatter(lines, index)
    count = 0
    while count < len(lines) and LOGSEQ_PROPERTY.match(lines[count]):
        count += 1
    if count:
        return _logseq_properties(lines[:count])
    return Frontmatter()


def _without_placeholders(block: list[str]) -> tuple[list[str], bool]:
    """The block with each template placeholder value replaced by a marker string; whether there were any."""
    out = [TEMPLATE_LINE.sub(lambda m: m.group(1) + json.dumps(PLACEHOLDER), line) for line in block]
    return out, out != block


def _drop_placeholders(value):
    """A parsed value with the placeholders taken out: a key or list item that was only a placeholder is gone."""
    if isinstance(value, dict):
        return {k: _drop_placeholders(v) for k, v in value.items() if v != PLACEHOLDER}
    if isinstance(value, list):
        return [_drop_placeholders(v) for v in value if v != PLACEHOLDER]
    return value


def _yaml_frontmatter(lines: list[str], end: int) -> Frontmatter:
    block, templated = _without_placeholders(lines[1:end])
    try:
        data = bounded_yaml.safe_load("\n".join(block))
        if templated:
            data = _drop_placeholders(data)
    except bounded_yaml.TooManyNodes as exc:
        return Frontmatter(warnings=[f"Frontmatter was not read: {exc}; it was indexed as text."])
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 2}" if mark is not None else f"lines 2-{end}"  # +2: 0-based, after '---'
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        # The block stays in the body, so its words are still searchable.
        return Frontmatter(warnings=[f"Frontmatter is not valid YAML ({where}): {problem}; it was indexed as text."])
    except RecursionError:
        return Frontmatter(warnings=["Frontmatter is nested too deeply to read; it was indexed as text."])
    if data is None:
        data = {}
    if not isinstance(data, dict):
        # A list or a lone string is more likely prose between two rules than metadata: keep it as text.
        return Frontmatter(
            warnings=[f"Frontmatter is a {type(data).__name__}, not a mapping of keys to values; it was indexed as "
                      f"text."]
        )
    size = len(json.dumps(data, default=str))
    if size > MAX_FRONTMATTER_BYTES:
        return Frontmatter(warnings=[f"Frontmatter is {size // 1024} KB, more than the {MAX_FRONTMATTER_BYTES // 1024} "
                                     "KB kept as metadata; it was indexed as text."])
    link_texts = [text for key, value in data.items() if key != "related_to" for text in _strings_in(value)]
    meta = _describe(data, wikilinks_in("\n".join(link_texts)))
    # A template's block stays in its text too: its fields are what the template is about ("a template for
    # logging shares" finds `shares:`, `price:`), and a frontmatter-only template would otherwise have no text.
    meta.body_start = 0 if templated else end + 1
    return meta


def _logseq_properties(lines: list[str]) -> Frontmatter:
    data: dict = {}
    raw_values = []
    for line in lines:
        key, value = LOGSEQ_PROPERTY.match(line).groups()
        value = value or ""
        raw_values.append(value)
        if key.lower() in LOGSEQ_LIST_KEYS:
            data[key] = [_strip_page_refs(item).lstrip("#").strip() for item in value.split(",") if item.strip()]
        else:
            data[key] = _strip_page_refs(value)
    meta = _describe(data, wikilinks_in("\n".join(raw_values)))
    meta.body_start = len(lines)
    return meta


def _strip_page_refs(value: str) -> str:
    return LOGSEQ_PAGE_REF.sub(lambda match: match.group(1), value).strip()


def _describe(data: dict, wikilinks: list[Link]) -> Frontmatter:
    """Derive title, created, tags and links from a metadata mapping, whichever syntax it came from."""
    title = data.get("title")
    if isinstance(title, (int, float)) and not isinstance(title, bool):
        title = str(title)  # `title: 1984` is a book, not a number
    return Frontmatter(
        data=json_safe(data),
        title=(title.strip() or None) if isinstance(title, str) else None,
        created=created_from(data),
        tags=normalise_tags(_tag_values(data)),
        links=wikilinks + [Link(target, "related_to") for target in _related_targets(data.get("related_to"))],
    )


def _strings_in(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings_in(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings_in(item)


def _tag_values(data: dict) -> list[str]:
    value = data.get("tags")
    if value is None:
        value = data.get("tag")
    if value is None:
        return []
    if isinstance(value, str):
        return re.split(r"[,\s]+", value)
    if isinstance(value, (list, tuple)):
        return [str(item) for item in value if item is not None and not isinstance(item, (dict, list))]
    return [str(value)]


def _related_targets(value: object) -> list[str]:
    items = value if isinstance(value, (list, tuple)) else [value]
    targets = []
    for item in items:
        if not isinstance(item, str):
            continue
        match = WIKILINK.fullmatch(item.strip())
        target = wikilink_target(match.group(1)) if match else item.strip()
        if target:
            targets.append(target)
    return targets


def created_from(data: dict) -> str | None:
    """Return frontmatter `created` (else `date`) as an ISO string when it is a date or datetime."""
    for key in ("created", "date"):
        value = data.get(key)
        if isinstance(value, (dt.date, dt.datetime)):
            return value.isoformat()
        if isinstance(value, str):
            for kind in (dt.date, dt.datetime):
                try:
                    return kind.fromisoformat(value.strip()).isoformat()
                except ValueError:
                    continue
    return None


def json_safe(value: object) -> object:
    """Convert YAML values to what JSON can store: dates become ISO strings, keys become strings."""
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [json_safe(item) for item in value]
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)
