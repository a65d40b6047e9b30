"""What a reader sees of a note: comments blanked out of the text, and links, URLs and placeholders out of what the
model embeds.

Two layers, because keyword search and the model want different things:

- `blank_comments` runs in the markdown extractor. Obsidian comments (`%% … %%`, inline or over many lines) and
  HTML comments (`<!-- … -->`) are hidden in reading view, so they are not indexed at all: not shown in results,
  not matched by keyword search, not embedded. They are replaced by blanks that keep every newline, so line
  numbers stay those of the file.
- `reader_text` turns a chunk's content into the text the model embeds. A markdown link or image gives its text
  or alt text, a wikilink its alias or target, and URLs, `![[embeds]]`, `{{template placeholders}}`, Templater
  tags, HTML tags, list bullets, Logseq block ids and image sizes, and empty task boxes give nothing (a Logseq macro
  such as `{{cloze answer}}` gives its arguments):
  they are noise to the model and make tiny chunks look alike.
  The chunk's content keeps them, so a keyword search for a URL or a placeholder still finds the note.
"""
from __future__ import annotations

import functools
import html
import re

_INLINE_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)")
_COMMENT_OPEN = re.compile(r"%%|<!--")
_CLOSER = {"%%": "%%", "<!--": "-->"}

_EMBED = re.compile(r"!\[\[[^\[\]\n]*\]\]")
_WIKILINK = re.compile(r"\[\[([^\[\]\n|]+?)(?:\|([^\[\]\n]*))?\]\]")
_IMAGE = re.compile(r"!\[([^\[\]\n]*)\]\(([^)\n]*)\)")
_BADGE = re.compile(r"shields\.io|badgen\.net|badge\.fury\.io|/badges?[/.]|badge\.svg", re.IGNORECASE)
_FILE_NAME = re.compile(r"\.(?:png|jpe?g|gif|svg|webp|bmp|tiff?|heic|pdf|mp[34]|mov|webm|wav|m4a)\s*$", re.IGNORECASE)
# (a label cannot hold brackets, and the target is one run to the ")": patterns that can split a run two ways take
# cubic time on a line of "[a](" repeated, and a note of such lines would stall the indexer)
_LINK = re.compile(r"\[([^\[\]\n]*)\]\(\s*(?:<[^>\n]*>|[^\s)])[^)\n]*+\)")
_REFERENCE_DEF = re.compile(r"(?m)^ {0,3}\[[^\]\n]+\]:\s*\S+.*$")
_AUTOLINK = re.compile(r"<[a-zA-Z][a-zA-Z0-9+.\-]*:[^>\s]*>")
_BARE_URL = re.compile(r"\b(?:[a-zA-Z][a-zA-Z0-9+.\-]*://|www\.)[^\s<>()\[\]{}]+")  # not a macro's closing braces
_PLACEHOLDER = re.compile(r"\{\{([^{}\n]*)\}\}|<%[^\n]*?%>")
_TEMPLATE_FIELD = re.compile(r"\s*[\w.-]+(?::[^\s{}]*)?\s*")  # {{title}}, {{date:YYYY-MM-DD}}
_HTML_TAG = re.compile(r"</?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>\n]*)?/?>")
_TASK_BOX = re.compile(r"(?m)^([ \t]*(?:[-*+]|\d+[.)])[ \t]+)\[[ xX/\-]?\][ \t]*")
_HEADING_MARKS = re.compile(r"(?m)^([ \t]*(?:[-*+][ \t]+)?)#{1,6}[ \t]+")
_BLANK_ITEM = re.compile(r"(?m)^[ \t]*(?:[-*+>|]|\d+[.)])?[ \t]*[-*+|:]*[ \t]*$\n?")
_SYSTEM_PROPERTY = re.compile(r"(?mi)^[ \t]*(?:[-*+][ \t]+)?"
                              r"(?:id|collapsed|heading|logseq\.[\w.-]+|background-color)::.*$")
_LOGSEQ_ATTRIBUTES = re.compile(r"\{:[^{}\n]*\}")  # ![img](x.png){:height 538, :width 485}
_BULLET = re.compile(r"(?m)^[ \t]*[-*+][ \t]+")
_SPACES = re.compile(r"[ \t]{2,}")
_TRAILING = re.compile(r"[ \t]+$", re.MULTILINE)
_LEADING = re.compile(r"^[ \t]+", re.MULTILINE)
_SPACE_BEFORE_MARK = re.compile(r"(?<=\w) +(?=[,.;:!?)](?:\s|$))")  # where a removed tag left a gap
_WORD = re.compile(r"[^\W_]")


def blank_comments(lines: list[str], in_code: list[bool]) -> list[str]:
    """Return lines with Obsidian and HTML comments removed, one output line per input line.

    A comment opens only outside fenced code and inline code spans; once open it hides everything to its closer,
    code fences included, as Obsidian's reading view does. An unclosed comment hides the rest of the note.
    """
    out: list[str] = []
    closer: str | None = None
    for line, is_code in zip(lines, in_code):
        if closer is None and (is_code or ("%%" not in line and "<!--" not in line)):
            out.append(line)
            continue
        kept: list[str] = []  # the visible pieces; the first keeps its indentation only if nothing was hidden before it
        pos = 0
        while pos <= len(line):
            if closer is not None:
                end = line.find(closer, pos)
                if end < 0:
                    break
                pos = end + len(closer)
                closer = None
                continue
            opener = _next_opener(line, pos)
            if opener is None:
                kept.append(line[pos:] if pos == 0 else line[pos:].lstrip())
                break
            kept.append(line[pos:opener.start()] if pos == 0 else line[pos:opener.start()].lstrip())
            closer = _CLOSER[opener.group(0)]
            pos = opener.end()
        text = " ".join(part.rstrip() for part in kept if part.strip())
        out.append(text)
    return out


def _next_opener(line: str, pos: int):
    """The first comment opener at or after pos that is not inside an inline code span."""
    spans = [m.span() for m in _INLINE_CODE.finditer(line)] if "`" in line else []
    for match in _COMMENT_OPEN.finditer(line, pos):
        if not any(a <= match.start() < b for a, b in spans):
            return match
    return None


def reader_text(text: str) -> str:
    """Return the words of a markdown chunk a reader reads, for the model: link text without URLs or markup noise."""
    if "[" in text:
        text = _EMBED.sub(" ", text)
        text = _WIKILINK.sub(lambda m: (m.group(2) or m.group(1)).replace("#", " "), text)
        text = _IMAGE.sub(_image_alt, text)
        text = _LINK.sub(lambda m: m.group(1), text)
        text = _REFERENCE_DEF.sub("", text)
        text = _TASK_BOX.sub(r"\1", text)
    if "://" in text or "www." in text or "<" in text:
        text = _AUTOLINK.sub(" ", text)
        text = _BARE_URL.sub(" ", text)
    if "{{" in text or "<%" in text:
        text = _PLACEHOLDER.sub(_placeholder, text)
    if "<" in text:
        text = _HTML_TAG.sub(" ", text)
    if "::" in text:
        text = _SYSTEM_PROPERTY.sub("", text)
    if "{:" in text:
        text = _LOGSEQ_ATTRIBUTES.sub(" ", text)
    if "#" in text:
        text = _HEADING_MARKS.sub(r"\1", text)
    text = _BLANK_ITEM.sub("", text)
    text = _BULLET.sub("", text)
    text = _TRAILING.sub("", _SPACES.sub(" ", text))
    return text.strip()


def _placeholder(match: re.Match) -> str:
    """A template field or Templater tag gives nothing; a Logseq macro ({{cloze answer}}) gives its arguments."""
    inner = match.group(1)
    if inner is None or _TEMPLATE_FIELD.fullmatch(inner):
        return " "
    name, _, args = inner.strip().partition(" ")
    return f" {args.replace(chr(92) * 2, ' ').strip()} "


def _image_alt(match: re.Match) -> str:
    return shown_alt(match.group(1), match.group(2))


def shown_alt(alt: str, src: str) -> str:
    """An image's alt text, unless it is a badge's label or just the file's name (what a screenshot tool writes)."""
    return "" if _BADGE.search(src) or _FILE_NAME.search(alt) else alt


def has_words(text: str) -> bool:
    """Say whether text holds at least one letter or digit."""
    return _WORD.search(text) is not None


_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|~>=<^%$&])")
_CALLOUT = re.compile(r"(?m)^([ \t]*>[ \t]*)+\[!([^\]\n]+)\][+-]?[ \t]*")
_QUOTE = re.compile(r"(?m)^[ \t]*(?:>[ \t]?)+")
_BLOCK_ID = re.compile(r"(?m)[ \t]+\^[A-Za-z0-9-]+[ \t]*$|^\^[A-Za-z0-9-]+[ \t]*$")
_FOOTNOTE_REF = re.compile(r"\[\^[^\]\n]+\](?::)?")
# Underscores inside a word (Logseq's Whiteboard___Tool, snake_case) are no emphasis, as in CommonMark.
_EMPHASIS = re.compile(r"(\*\*|~~|==)(?=\S)(.+?)(?<=\S)\1|(?<![\w_])__(?=[^\s_])(.+?)(?<=[^\s_])__(?![\w_])"
                       r"|(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?!\*)|(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])")
_CODE_TICKS = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_FENCE_LINE = re.compile(r"(?m)^[ \t]*(?:`{3,}|~{3,})[^\n]*$")
_TABLE_RULE = re.compile(r"(?m)^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$")
_PIPES = re.compile(r"[ \t]*\|[ \t]*")
_ENTITY = re.compile(r"&(#\d+|#x[0-9a-fA-F]+|[a-zA-Z]{2,8});")
_HTML_TAG_LINES = re.compile(r"</?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?/?>")  # a tag whose attributes run over lines
# What Logseq never shows: its bookkeeping properties, and the #+BEGIN_/#+END_ lines around an admonition or quote.
_HIDDEN_PROPERTY = re.compile(
    r"(?mi)^[ \t]*(?:[-*+][ \t]+)?(?:id|collapsed|created[-_]at|updated[-_]at)::[^\n]*(?:\n|$)")
_ORG_MARKER = re.compile(r"(?mi)^[ \t]*(?:[-*][ \t]+)?#\+(?:BEGIN|END)_[A-Z]+\b[^\n]*$")
_HIDDEN_ELEMENT = re.compile(r"<(script|style|template|noscript|iframe)\b[^>]*>.*?(?:</\1\s*>|$)", re.I | re.S)


# What reading view shows as written: a code span's text (`<table>`, `{{[-l|--lines]}}`, `~~x~~`) and an autolink's
# address (<https://…>); they are set aside before the rules below and put back after them.
_AS_WRITTEN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)|<([a-zA-Z][a-zA-Z0-9+.\-]*:[^>\s]*)>")
_SET_ASIDE = re.compile("\ue000(\\d+)\ue001")


@functools.lru_cache(maxsize=1024)  # typing a query shows the same passages keystroke after keystroke
def display_text(text: str) -> str:
    """What a person reads of a markdown passage, as in Obsidian's reading view: the words of `reader_text` (link
    text, no URLs, HTML tags, placeholders or heading hashes) without emphasis marks, code ticks, fences, block
    ids, footnote marks, callout and quote markers, table pipes, escapes or HTML entities; a code span's text and an
    autolink's address as written."""
    if not text:
        return ""
    kept: list[str] = []
    if "`" in text or "<" in text:
        text = _AS_WRITTEN.sub(lambda m: _set_aside(kept, m), text)
    text = _readable(text)
    if kept:
        text = _SET_ASIDE.sub(lambda m: kept[int(m.group(1))] if int(m.group(1)) < len(kept) else "", text)
    return text


def _set_aside(kept: list[str], match: re.Match) -> str:
    kept.append(match.group(2).strip() if match.group(2) is not None else match.group(3))
    return f"\ue000{len(kept) - 1}\ue001"


def _readable(text: str) -> str:
    if "[!" in text:
        text = _CALLOUT.sub(lambda m: m.group(2).split("|")[0].strip() + ": ", text)
    if "<" in text:  # a script or style element shows nothing, its text included
        text = _HIDDEN_ELEMENT.sub(" ", text)
    text = reader_text(without_hidden(text))
    if "<" in text:
        text = _HTML_TAG_LINES.sub(" ", text)
    if "[^" in text:
        text = _FOOTNOTE_REF.sub("", text)
    if ">" in text:
        text = _QUOTE.sub("", text)
    if "`" in text or "~~~" in text:
        text = _FENCE_LINE.sub("", text)
        text = _CODE_TICKS.sub(lambda m: m.group(2).strip(), text).replace("`", "")  # and a tick left alone
    if "|" in text:
        text = _PIPES.sub(" ", _TABLE_RULE.sub("", text))
    for _ in range(2):  # nested marks: ***both***, **_both_**
        text = _EMPHASIS.sub(lambda m: next(g for g in m.groups()[1:] if g is not None), text)
    if "[[" in text or "]]" in text:  # a wikilink cut in two by a passage's edge, or written as an example
        text = text.replace("[[", "").replace("]]", "")
    if "\\" in text:
        text = _ESCAPE.sub(r"\1", text)
    if "&" in text:
        text = _ENTITY.sub(_entity, text)
    text = _SPACE_BEFORE_MARK.sub("", _SPACES.sub(" ", text))
    return _LEADING.sub("", _TRAILING.sub("", text)).strip()


def without_hidden(text: str) -> str:
    """The text without what a reading view never shows: block ids (^abc123), and Logseq's id::, collapsed::,
    created-at:: and updated-at:: properties and the #+BEGIN_X / #+END_X markers around a block."""
    if "^" in text:
        text = _BLOCK_ID.sub("", text)
    if "::" in text:
        text = _HIDDEN_PROPERTY.sub("", text)
    if "#+" in text:
        text = _ORG_MARKER.sub("", text)
    return text


def display_title(title: str) -> str:
    """A note's title as a person reads it (escapes and link syntax gone), or as stored when nothing readable is
    left."""
    shown = display_text(title)
    return shown if has_words(shown) else (title or "").strip()


def _entity(match: re.Match) -> str:
    return html.unescape(match.group(0))


def cut_at_word(text: str, limit: int) -> str:
    """The text cut at the end of a word before `limit` characters, with an ellipsis where it was cut (at `limit`
    itself where no word ends in its second half: a Chinese sentence has no spaces)."""
    if len(text) <= limit:
        return text
    end = max(text.rfind(" ", 0, limit), text.rfind("\n", 0, limit))
    return (text[:end] if end > limit // 2 else text[:limit]).rstrip(" ,;:\n") + "…"
