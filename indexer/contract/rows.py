"""The answers' row types, named once: what every route, MCP tool, the window, the CLI and the extension receive.

One vocabulary: a note's title is `title`, its path inside the project `path`, the number a list is ranked by
`score`. Where a spec names a field otherwise, the row carries that name too, with the same value, as a documented
alias: spec 000's search results `document_title`, `relative_path` and `similarity` (ChunkHit, NoteHit, Passage);
spec 002's memory rows `file_path` (MemoryHit; its `relevance` is spec 002's reason, a word, not a score).

- ChunkHit: one passage that matched (spec 000's modes, group=chunk).
- NoteHit: one note, by its best passage, with the others as more_passages (group=document, related notes).
- Passage: one of a NoteHit's other passages, without its whole text.
- NoteRow: one note in a listing (vault_search and its by_tag / by_folder / by_property / recent listings).
- DocumentRow: one document in the Files listing (/api/documents).
- ContextItem: one passage packed into an agent's context (/api/context).
- MemoryHit: one memory file (spec 002's memory_search).
- CompactRow: one note as an MCP search tool answers it (an agent's row).

Each type builds its row by its fields (aliases added there, and nowhere else) and checks a row it did not build
with `problems(row)`: every answer's envelope (answers.py) checks its rows so, at every door (routes.py).
"""
from __future__ import annotations

import types
from typing import Any, ClassVar, Union, get_args, get_origin, get_type_hints

Lines = list[int]  # [first, last], 1-based file lines


class Row(dict):
    """What every answer type shares: a JSON object (a dict, so it is sent as it stands and read as `row["title"]`
    or `row.title`) whose fields are the class's annotations, in order, with each alias beside its field.

    Built as `ChunkHit(chunk_id=..., title=...)`: a missing field or an unknown one is a TypeError, naming it;
    an optional field (EXTRA) is left out until set. Setting a field sets its aliases too. The types are checked
    where a row arrives from outside (`problems`, `decode`), not where the engine builds one.
    """

    ALIASES: ClassVar[dict[str, str]] = {}  # alias -> the canonical field it repeats
    EXTRA: ClassVar[dict[str, Any]] = {}  # optional fields some rows carry (explain, reason ...) -> their type
    OPEN: ClassVar[bool] = False  # True: fields beyond the declared ones are allowed (an answer that says more)
    FIELDS: ClassVar[tuple[str, ...]] = ()  # the annotated fields, a base class's first (filled per class)
    DEFAULTS: ClassVar[dict[str, Any]] = {}  # the fields that may be left out, with their value

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        own = [name for name, kind in cls.__dict__.get("__annotations__", {}).items()
               if not str(kind).startswith("ClassVar")]
        cls.FIELDS = tuple(dict.fromkeys([*cls.FIELDS, *own]))
        cls.DEFAULTS = dict(cls.DEFAULTS)
        for name in own:
            if name in cls.__dict__:  # `passages: int = 1`: a default, kept here and not as a class attribute
                cls.DEFAULTS[name] = cls.__dict__[name]
                delattr(cls, name)
        cls._ALIAS_OF = {}
        for alias, name in cls.ALIASES.items():
            cls._ALIAS_OF.setdefault(name, []).append(alias)
        cls._NAMES = None  # filled on first use: the names of a module's later classes are not known yet
        cls._HINTS = None

    def __init__(self, **values: Any) -> None:
        super().__init__()
        cls = type(self)
        missing = [name for name in cls.FIELDS if name not in values and name not in cls.DEFAULTS]
        if missing:
            raise TypeError(f"{cls.__name__} lacks {', '.join(missing)}")
        if not cls.OPEN and (unknown := values.keys() - cls.names()):
            raise TypeError(f"{cls.__name__} has no field {', '.join(sorted(unknown))} (declare it in "
                            "indexer/contract/rows.py or answers.py)")
        for name in cls.FIELDS:
            if name in values:
                dict.__setitem__(self, name, values[name])
            else:  # a default list is each row's own
                default = cls.DEFAULTS[name]
                dict.__setitem__(self, name, list(default) if isinstance(default, list) else default)
        for alias, name in cls.ALIASES.items():
            dict.__setitem__(self, alias, self[name])
        for name, value in values.items():
            if name not in self:
                dict.__setitem__(self, name, value)
        for name, kinds in cls._row_lists().items():  # rows handed up as plain dicts become their type
            if isinstance(self.get(name), list):
                dict.__setitem__(self, name, [_as_row(row, kinds) for row in self[name]])

    def __setitem__(self, name: str, value: Any) -> None:
        dict.__setitem__(self, name, value)
        for alias in self._ALIAS_OF.get(name, ()):
            dict.__setitem__(self, alias, value)

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"set a field of a {type(self).__name__} as row[{name!r}] = ...")

    @classmethod
    def cast(cls, row: dict) -> "Row":
        """A row built elsewhere (a plain dict of this type's fields) as this type, unchecked and as it stands."""
        if type(row) is cls:
            return row
        typed = cls.__new__(cls)
        dict.update(typed, row)
        return typed

    @classmethod
    def decode(cls, row: dict) -> "Row":
        """A row from outside (a server's JSON) as this type, with its rows typed too: what a client reads. Raises
        ValueError naming what is wrong with a row of another shape."""
        problems = cls.problems(row)
        if problems:
            raise ValueError("; ".join(problems))
        hints = cls._hints()
        typed = cls.__new__(cls)
        dict.update(typed, {name: _read(value, hints.get(name) or cls.EXTRA.get(name, Any))
                            for name, value in row.items()})
        return typed

    @classmethod
    def names(cls) -> set[str]:
        """Every field name a row of this type may carry (fields, aliases, optional extras)."""
        if cls.__dict__.get("_NAMES") is None:
            cls._NAMES = frozenset(cls.FIELDS) | set(cls.ALIASES) | set(cls.EXTRA)
        return cls._NAMES

    @classmethod
    def _hints(cls) -> dict[str, Any]:
        if cls.__dict__.get("_HINTS") is None:
            cls._HINTS = {name: kind for name, kind in get_type_hints(cls).items() if name in cls.FIELDS}
        return cls._HINTS

    @classmethod
    def _row_lists(cls) -> dict[str, tuple[type["Row"], ...]]:
        """The fields (extras too) that hold a list of rows, with the row types it may hold."""
        if cls.__dict__.get("_ROW_LISTS") is None:
            kinds = {**{n: k for n, k in cls.EXTRA.items()}, **cls._hints()}
            cls._ROW_LISTS = {name: found for name, kind in kinds.items() if (found := _row_types(kind))}
        return cls._ROW_LISTS

    @classmethod
    def problems(cls, row: dict) -> list[str]:
        """What is wrong with a row as this type: missing or unknown fields, wrong types, aliases that disagree."""
        if not isinstance(row, dict):
            return [f"a {cls.__name__} must be an object, not {type(row).__name__}"]
        hints = cls._hints()
        out = []
        for name in cls.FIELDS:
            if name not in row:
                if name not in cls.DEFAULTS:
                    out.append(f"{cls.__name__} lacks {name}")
            elif not _fits(row[name], hints[name]):
                out.append(f"{cls.__name__}.{name} is {row[name]!r:.60}, not {hints[name]}")
        for alias, name in cls.ALIASES.items():
            if row.get(alias) != row.get(name):
                out.append(f"{cls.__name__}.{alias} ({row.get(alias)!r:.40}) differs from {name}")
        for name, kind in cls.EXTRA.items():
            if name in row and not _fits(row[name], kind):
                out.append(f"{cls.__name__}.{name} is {row[name]!r:.60}, not {kind}")
        if not cls.OPEN:
            out += [f"{cls.__name__} has an unknown field {k!r}" for k in row if k not in cls.names()]
        return out


def _row_types(kind: Any) -> tuple[type[Row], ...]:
    """The row types a list field holds (list[ChunkHit] | list[NoteHit] -> both), () for any other field."""
    options = get_args(kind) if get_origin(kind) in (Union, types.UnionType) else (kind,)
    found = []
    for option in options:
        if get_origin(option) is list and (args := get_args(option)):
            if isinstance(args[0], type) and issubclass(args[0], Row):
                found.append(args[0])
    return tuple(found)


def _as_row(row: Any, kinds: tuple[type[Row], ...]) -> Any:
    """A row of a list as the first of its types whose names hold all its keys (a NoteHit's passages tell it from a
    ChunkHit); a row of none of them stays as it is."""
    if not isinstance(row, dict):
        return row
    keys = row.keys()
    for kind in kinds:
        if kind.OPEN or keys <= kind.names():
            return kind.cast(row)
    return row


def _read(value: Any, kind: Any) -> Any:
    """A JSON value as its annotated type: rows (and lists of rows) become their types; the rest stays as it is."""
    if get_origin(kind) in (Union, types.UnionType):
        return next((_read(value, k) for k in get_args(kind) if _fits(value, k)), value)
    if isinstance(kind, type) and issubclass(kind, Row):
        return kind.decode(value)
    if get_origin(kind) is list and isinstance(value, list):
        (item,) = get_args(kind) or (Any,)
        return [_read(v, item) for v in value]
    return value


def _fits(value: Any, kind: Any) -> bool:
    """Whether a JSON value has the annotated type (str, int, float, bool, None, list[...], dict, unions)."""
    if kind is Any:
        return True
    origin = get_origin(kind)
    if origin in (Union, types.UnionType):
        return any(_fits(value, k) for k in get_args(kind))
    if kind is type(None):
        return value is None
    if origin is list:
        (item,) = get_args(kind) or (Any,)
        return isinstance(value, list) and all(_fits(v, item) for v in value)
    if origin is dict or kind is dict:
        return isinstance(value, dict)
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(kind, type) and issubclass(kind, Row):
        return not kind.problems(value)
    return isinstance(value, kind)


SPEC_000 = {"document_title": "title", "relative_path": "path", "similarity": "score"}


class Passage(Row):
    """One more passage of a NoteHit: where it is and its snippet, without its whole text."""

    ALIASES: ClassVar[dict[str, str]] = {"similarity": "score"}
    chunk_id: str
    heading_path: list[str]
    lines: Lines
    snippet: str
    highlights: list[list[int]]
    score: float
    cosine: float | None
    search_type: str
    matched_words: list[str] = []
    partial: bool = False


class PassageRef(Row):
    """Which passage of which note, and where the note is: what every passage-bearing row starts with."""

    chunk_id: str
    document_id: str
    project: str
    title: str
    path: str
    absolute_path: str


class ChunkHit(PassageRef):
    """One matching passage with its note (spec 000's result): score is the mode's score (a semantic hit's cosine,
    keyword and tag 1.0, hybrid found by both at least 1.0), cosine the similarity in meaning whatever the mode."""

    ALIASES: ClassVar[dict[str, str]] = SPEC_000
    # across: found by meaning across languages (the passage is in another language than the question, so none of
    # its words can match: hybrid judges it by meaning alone)
    EXTRA: ClassVar[dict[str, Any]] = {"explain": dict, "across": bool}
    file_type: str
    score: float
    cosine: float | None
    search_type: str  # hybrid, semantic, keyword, recency; a listing's tag, path, file or filter
    tags: list[str]
    created: str | None
    modified: str | None
    heading_path: list[str]  # of the matching section, as the reader reads it
    lines: Lines  # the matching section's
    chunk_lines: Lines  # the whole passage's
    content: str
    snippet: str
    highlights: list[list[int]]  # [start, end) offsets of the matches in the snippet
    matched_words: list[str]  # the query's words the hit holds (a match by words)
    partial: bool  # true when it holds only some of them


class NoteHit(ChunkHit):
    """One note, by its best passage (a ChunkHit's fields), with how many passages matched and the others."""

    EXTRA: ClassVar[dict[str, Any]] = {"explain": dict, "across": bool, "reason": str}  # reason: why it is related
    passages: int = 1
    more_passages: list[Passage] = []


class NoteRow(Row):
    """One note in a listing (spec 001's row): vault_search ranks by score; the listings leave score out."""

    EXTRA: ClassVar[dict[str, Any]] = {"score": float, "created": str, "extension": str, "leading_callout": dict,
                                       "explain": dict}
    document_id: str
    project: str
    path: str
    title: str
    snippet: str
    highlights: list[list[int]]
    tags: list[str]
    folder: str
    type: str | None
    kind: str  # note or file
    modified: str | None
    bytes: int


class DocumentRow(Row):
    """One document in the Files listing."""

    document_id: str
    project: str
    title: str
    path: str
    absolute_path: str
    file_type: str
    size: int
    tags: list[str]
    created: str | None
    modified: str | None


class ContextItem(PassageRef):
    """One passage packed into an agent's context, with where it comes from."""

    heading_path: list[str]
    lines: Lines
    score: float
    search_type: str
    tokens: int
    content: str


class RelatedNote(PassageRef):
    """A note related to a text (a web page, a note, an agent's text): by its passage that matched best, with why.

    score: saved pages 1 and more, then the fused legs; similarity: its best cosine to a passage of the text (None
    when only words found it); why: the text's passages it matched ({passage, text, similarity}), best first."""

    score: float
    similarity: float | None
    saved: bool  # it names the page's address (a link, source: or url:)
    reason: str
    heading_path: list[str]
    lines: Lines
    snippet: str
    highlights: list[list[int]]
    matched_words: list[str]  # the text's rare words it holds
    why: list[dict]


class MemoryHit(Row):
    """One memory file (spec 002): relevance says why it was found (direct_mention, frontmatter_match ...)."""

    ALIASES: ClassVar[dict[str, str]] = {"file_path": "path"}
    EXTRA: ClassVar[dict[str, Any]] = {"excerpt": str, "line": int, "matches": Any, "matched": Any}
    path: str | None
    id: str | None
    title: str | None
    relevance: str


class CompactRow(Row):
    """One note as an MCP search tool answers it, sized for an agent (webapp/mcp_tools/answers.py's note_row):
    score rounded to 3 places, heading the sections under the note's title, the snippet about 30 tokens."""

    EXTRA: ClassVar[dict[str, Any]] = {"heading": str, "lines": Lines, "project": str}
    path: str
    title: str
    score: float
    snippet: str
