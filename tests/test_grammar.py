"""vault_search query syntax: what FTS5 is asked, and that whatever a user types runs without a syntax error."""
from __future__ import annotations

import sqlite3

import pytest

from indexer.search.grammar import parse_query


@pytest.fixture
def fts():
    """A porter FTS5 table like the index's, with a few lines to match against."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='porter unicode61 remove_diacritics 2')")
    lines = [
        "the vault-cortex service runs on deploy/local first",  # 1
        "a vault without a cortex",  # 2
        "local deploy scripts are running",  # 3
        "sourdough starter and flour",  # 4
        "a starter kit for tomatoes",  # 5
        "don't panic, said the guide",  # 6
    ]
    conn.executemany("INSERT INTO t(rowid, content) VALUES (?, ?)", list(enumerate(lines, start=1)))
    yield lambda q: sorted(r[0] for r in conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (parse_query(q).match,)))
    conn.close()


def test_unquoted_terms_are_anded_and_stemmed(fts):
    assert parse_query("sourdough starter").match == '"sourdough" "starter"'
    assert fts("sourdough starter") == [4]
    assert fts("starter") == [4, 5]
    assert fts("running") == [1, 3]  # porter: runs, running
    assert fts("Tomato") == [5]


def test_punctuated_terms_are_adjacent_word_phrases(fts):
    assert parse_query("vault-cortex").match == '"vault cortex"'
    assert parse_query("deploy/local").match == '"deploy local"'
    assert fts("vault-cortex") == [1]  # not the note where the words are apart
    assert fts("deploy/local") == [1]  # not "local deploy"
    assert fts("don't") == [6]


def test_quoted_phrases_are_exact(fts):
    assert parse_query('"local deploy" running').match == '"local deploy" "running"'
    assert fts('"local deploy"') == [3]
    assert fts('"deploy local"') == [1]


def test_or_and_not_between_terms_and_prefixes(fts):
    assert fts("sourdough OR tomatoes") == [4, 5]
    assert fts("starter NOT tomatoes") == [4]
    assert fts("starter AND flour") == [4]
    assert fts("sourd*") == [4]
    assert parse_query("starter NOT tomatoes").words == ["starter"]  # excluded words are not highlighted


@pytest.mark.parametrize("query, expected", [
    ('"unbalanced phrase', '"unbalanced phrase"'),
    ("AND OR NOT (", ""),
    ("*", ""),
    (":", ""),
    ("🚀🔥", ""),
    ("title:garden", '"title garden"'),
    ("NEAR(a b)", '"near a" "b"'),
    ("OR starter", '"starter"'),
    ("starter OR", '"starter"'),
    ("NOT tomatoes starter", '"starter"'),
    ("^start col:x {a b} [c] a+b", '"start" "col x" "a" "b" "c" "a b"'),
    ('a"b"c', '"a" "b" "c"'),
    ("'); DROP TABLE t; --", '"drop" "table" "t"'),
])
def test_malformed_syntax_is_sanitised(fts, query, expected):
    assert parse_query(query).match == expected
    if expected:
        fts(query)  # FTS5 accepts it


@pytest.mark.parametrize("query", [
    '"', '""', '"""', "((((", ")", "-", "--x", "x -y", "a:b:c", "^", "NEAR", "NEAR/2", "AND", "NOT NOT x",
    "x OR OR y", "x NOT", "*x*", "\x00", "é", "naïve café", "日本語", "x" * 2000, "a\tb\nc", None, 42,
])
def test_anything_typed_runs_without_error(fts, query):
    parsed = parse_query(query)
    if parsed.match:
        fts(query)  # FTS5 accepts it
    text = str(query).lower() if query is not None else ""
    assert all(word == word.lower() and word in text for word in parsed.words)  # only words the user typed
    if not any(c.isalnum() for c in text):
        assert parsed.match == "" and parsed.words == []  # nothing searchable: no search, not a syntax error
    # Typed beside a real word, it can narrow that word's matches but never widen them or hide the word.
    beside = fts(f"{query if query is not None else ''} starter")
    assert set(beside) <= {4, 5}
    if not any(c.isalnum() for c in text):
        assert beside == [4, 5]
