"""Memory search (spec 002) on a decisions vault indexed with the real model and stores: modes A, B and C."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from indexer.engine import Engine
from indexer.errors import DocumentNotFound, InvalidQuery
from indexer.search.memory import ANSWER_TOKENS, EXCERPT_TOKENS
from indexer import MemoryRequest

DAY = 86400
BASE = 1_770_000_000  # early 2026

# path -> (days after BASE it was last modified, text). Newer files rank first among equals.
DECISIONS_VAULT = {
    "decisions/DEC-40.md": (0, """---
id: DEC-40
title: Keep every service stateless
domain: architecture
level: strategic
status: active
tags: [architecture]
related_to: [DEC-41]
---
# Keep every service stateless

State lives in the database, never in a process.
"""),
    "decisions/DEC-41.md": (1, """---
id: DEC-41
title: Use PostgreSQL as the primary store
domain: infrastructure
level: strategic
status: active
tags: [database, database/postgres]
---
# Use PostgreSQL as the primary store

## Context
We need one relational store for every service.

## Decision
Run PostgreSQL 16 with streaming replication.
How connections reach it is settled in DEC-42.
"""),
    "decisions/DEC-42.md": (2, """---
id: DEC-42
title: Use connection pooling for database access
domain: infrastructure
level: operational
status: active
priority: 1
tags: [connection-pooling, database]
related_to: [DEC-41, DEC-99]
---
# Use connection pooling for database access

## Context
Services opened a new connection per request.
Under load the pool exhaustion caused timeouts.

## Decision
Put PgBouncer in front of PostgreSQL.
It prevents connection exhaustion under load.
"""),
    "decisions/DEC-43.md": (3, """---
id: DEC-43
title: Cap the pool size per service
domain: infrastructure
level: operational
status: active
priority: 2
tags: [connection-pooling/limits, performance]
related_to: [DEC-42]
---
# Cap the pool size per service

Each service gets a pool of 20; a bigger pool only moves the queue into the database.
This refines DEC-42 and keeps the pool honest.
"""),
    "decisions/DEC-44.md": (4, """---
id: DEC-44
title: Retry failed queries with backoff
domain: reliability
level: tactical
status: superseded
tags: [database, retries]
related_to: ["[[DEC-42]]"]
---
# Retry failed queries with backoff

Retry up to three times with jittered backoff.
"""),
    "decisions/DEC-45.md": (5, """---
id: DEC-45
title: Log slow queries
domain: [observability, infrastructure]
level: operational
status: active
tags: [database/postgres, logging]
related_to: [DEC-43]
---
# Log slow queries

Log every query slower than 200 ms.
"""),
    "notes/incident-2026-03.md": (6, """# Incident March 2026

The API went down for 20 minutes.
Pool exhaustion again, see DEC-42 for the fix.
We raised the pool size afterwards.
"""),
    "notes/roadmap.md": (7, """# Roadmap

DEC-420 is planned for the third quarter.
"""),
    "journal/2026-03-02.md": (8, """# 2026-03-02

Met with the database team.
Talked about pool exhaustion and DEC-42 over coffee.

Lunch was late.
"""),
}


def write_vault(root: Path, files: dict[str, tuple[int, str]]) -> Path:
    for rel, (days, text) in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        os.utime(path, (BASE + days * DAY, BASE + days * DAY))
    return root


@pytest.fixture
def engine(make_engine, tmp_path):
    return make_engine(write_vault(tmp_path / "memory", DECISIONS_VAULT), project="memory")


def ids(answer: dict) -> list[str]:
    return [r["id"] for r in answer["results"]]


# --- mode A: frontmatter ----------------------------------------------------------------------------------------

def test_frontmatter_exact_tag_ranks_above_a_child_tag_even_when_older(engine):
    answer = engine.memory_search(MemoryRequest("frontmatter", {"tags": ["connection-pooling"]}))
    assert ids(answer) == ["DEC-42", "DEC-43"]  # DEC-43 is newer but only has connection-pooling/limits
    first, second = answer["results"]
    assert first == {"path": "decisions/DEC-42.md", "file_path": "decisions/DEC-42.md", "id": "DEC-42",
                     "title": "Use connection pooling for database access", "relevance": "frontmatter_match",
                     "matched": {"tags": ["connection-pooling"]}}
    assert second["matched"] == {"tags": ["connection-pooling/limits"]}
    assert "excerpt" not in first
    assert answer["mode"] == "frontmatter" and answer["total"] == 2 and 0 < answer["tokens"] < 300


def test_frontmatter_fields_are_anded_case_insensitive(engine):
    answer = engine.memory_search(MemoryRequest("A", {"tags": "database", "status": "ACTIVE"}))
    # DEC-44 has the tag but is superseded; DEC-45 only has the child tag database/postgres.
    assert ids(answer) == ["DEC-42", "DEC-41", "DEC-45"]
    assert answer["results"][1]["matched"] == {"tags": ["database", "database/postgres"], "status": "active"}
    both = engine.memory_search(MemoryRequest("frontmatter", {"tags": ["database", "connection-pooling"]}))
    assert ids(both) == ["DEC-42"]
    assert engine.memory_search(MemoryRequest("frontmatter", {"tags": ["database"],
                                                              "status": "draft"}))["results"] == []


def test_frontmatter_whole_domain_beats_one_of_a_list_then_recency(engine):
    answer = engine.memory_search(MemoryRequest("frontmatter", {"domain": "infrastructure", "level": "operational"}))
    # DEC-45 is newest but its domain is a list of two; DEC-43 is newer than DEC-42.
    assert ids(answer) == ["DEC-43", "DEC-42", "DEC-45"]
    assert answer["results"][2]["matched"] == {"domain": ["observability", "infrastructure"], "level": "operational"}
    assert ids(engine.memory_search(MemoryRequest("frontmatter", {"priority": "2"}))) == ["DEC-43"]
    assert ids(engine.memory_search(MemoryRequest("frontmatter", {"priority": 1}))) == ["DEC-42"]


def test_frontmatter_related_to_matches_by_id_wikilink_or_title(engine):
    by_id = engine.memory_search(MemoryRequest("frontmatter", {"related_to": ["DEC-42"]}))
    assert ids(by_id) == ["DEC-44", "DEC-43"]  # DEC-44 writes it as [[DEC-42]]
    assert by_id["results"][0]["matched"] == {"related_to": ["DEC-42"]}
    by_title = engine.memory_search(MemoryRequest("frontmatter",
                                                  {"related_to": "Use connection pooling for database access"}))
    assert ids(by_title) == ["DEC-44", "DEC-43"]
    found = engine.memory_search(MemoryRequest("frontmatter", {"related_to": "DEC-41", "status": "active"}))
    assert ids(found) == ["DEC-42", "DEC-40"]


def test_frontmatter_query_errors_say_what_to_give(engine):
    for bad in ({}, {"status": None}, {"tags": []}, {"tags": {"a": 1}}, "status=active", ["status"]):
        with pytest.raises(InvalidQuery, match="field-value|value"):
            engine.memory_search(MemoryRequest("frontmatter", bad))
    assert ids(engine.memory_search(MemoryRequest("frontmatter", '{"status": "superseded"}'))) == ["DEC-44"]
    with pytest.raises(InvalidQuery, match="frontmatter \\(A\\), content \\(B\\) or xref \\(C\\)"):
        engine.memory_search(MemoryRequest("graph", "DEC-42"))


# --- mode B: content --------------------------------------------------------------------------------------------

def test_content_ranks_by_matches_then_recency_with_the_line_and_its_neighbours(engine):
    answer = engine.memory_search(MemoryRequest("content", "exhaustion"))
    assert [r["file_path"] for r in answer["results"]] == [
        "decisions/DEC-42.md",        # two lines say exhaustion
        "journal/2026-03-02.md",      # one each: the journal is newer than the incident note
        "notes/incident-2026-03.md",
    ]
    dec42, journal, incident = answer["results"]
    assert dec42["relevance"] == "content_match" and dec42["matches"] == 2 and dec42["id"] == "DEC-42"
    # The matching line with the line before and after, across the chunk boundary into the next section.
    assert dec42["excerpt"] == ("Services opened a new connection per request.\n"
                                "Under load the pool exhaustion caused timeouts.\n"
                                "## Decision")
    lines = (engine.index("memory").root / "decisions/DEC-42.md").read_text().splitlines()
    assert lines[dec42["line"] - 1] == "Under load the pool exhaustion caused timeouts."
    assert journal["excerpt"] == ("Met with the database team.\n"
                                  "Talked about pool exhaustion and DEC-42 over coffee.\n"
                                  "Lunch was late.")
    assert journal["id"] == journal_id(engine) and journal["title"] == "2026-03-02"
    assert incident["excerpt"].startswith("The API went down")


def journal_id(engine) -> str:
    rows = engine.index("memory").sql("SELECT document_id FROM documents WHERE rel_path = 'journal/2026-03-02.md'")
    return rows[0][0]


def test_content_keywords_matched_outrank_occurrences_and_a_phrase_counts_as_one(engine):
    words = engine.memory_search(MemoryRequest("content", "pool exhaustion"))
    paths = [r["file_path"] for r in words["results"]]
    # Both words before one: DEC-43 says "pool" four times but never "exhaustion".
    assert paths.index("decisions/DEC-43.md") == len(paths) - 1
    assert set(paths[:3]) == {"decisions/DEC-42.md", "notes/incident-2026-03.md", "journal/2026-03-02.md"}
    assert paths[0] == "decisions/DEC-42.md"  # pool + exhaustion + exhaustion

    phrase = engine.memory_search(MemoryRequest("content", '"pool exhaustion"'))
    # Case-insensitive; "connection exhaustion" is not the phrase, so each has one match and recency decides.
    assert [r["file_path"] for r in phrase["results"]] == [
        "journal/2026-03-02.md", "notes/incident-2026-03.md", "decisions/DEC-42.md"]
    assert phrase["results"][1]["excerpt"].splitlines()[1] == "Pool exhaustion again, see DEC-42 for the fix."
    assert engine.memory_search(MemoryRequest("content", '"a b c d" service pool'))["mode"] == "content"


def test_content_refuses_more_than_three_keywords(engine):
    with pytest.raises(InvalidQuery, match="1 to 3 keywords; you gave 4"):
        engine.memory_search(MemoryRequest("content", "pool exhaustion under load"))
    with pytest.raises(InvalidQuery, match="1 to 3 keywords"):
        engine.memory_search(MemoryRequest("B", "   "))


def test_content_answer_stays_under_the_token_cap_on_a_busy_vault(home, tmp_path):
    filler = "the request path adds latency when the cache is cold and the queue is long " * 6
    files = {}
    for n in range(40):
        title = f"Latency review {n:02d} " + "of the checkout service and its many dependencies " * 20
        hits = "\n".join(f"Line {i}: latency {filler}" for i in range(1 + n % 5))
        files[f"reviews/review-{n:02d}.md"] = (n, f"---\ntitle: {title}\n---\nIntro.\n{hits}\nOutro.\n")
    home.add_project(write_vault(tmp_path / "busy", files), "busy")
    engine = Engine(home)
    try:
        engine.reindex("busy")
        answer = engine.memory_search(MemoryRequest("content", "latency", project="busy"))
        counter = engine.index("busy").counter
    finally:
        engine.close()
    assert answer["tokens"] <= ANSWER_TOKENS
    assert counter.count(json.dumps(answer, ensure_ascii=False)) <= ANSWER_TOKENS
    # Long titles make ten results too big: the weakest are left out and counted, never the strongest.
    assert 1 <= answer["omitted"] and len(answer["results"]) + answer["omitted"] == 10 and answer["more"]
    matches = [r["matches"] for r in answer["results"]]
    assert matches == sorted(matches, reverse=True) and matches[0] > 5
    for r in answer["results"]:
        assert "latency" in r["excerpt"]
        assert counter.count(r["excerpt"]) - 2 <= EXCERPT_TOKENS + 2  # the … marks on either side
        assert len(r["excerpt"]) < len(filler)


# --- mode C: cross-reference ------------------------------------------------------------------------------------

def test_xref_finds_inbound_outbound_and_mentions_ranked_and_depth_one(engine):
    answer = engine.memory_search(MemoryRequest("xref", "DEC-42"))
    got = [(r["id"] if r["id"].startswith("DEC") else r["file_path"], r["relevance"]) for r in answer["results"]]
    assert got == [
        ("DEC-44", "related_to_inbound"),     # newer inbound first
        ("DEC-43", "related_to_inbound"),     # also mentions DEC-42 in its text: the stronger relevance wins
        ("DEC-41", "related_to_outbound"),    # also mentions DEC-42 in its text
        ("DEC-99", "related_to_outbound"),    # named in related_to but not in the vault
        ("journal/2026-03-02.md", "direct_mention"),
        ("notes/incident-2026-03.md", "direct_mention"),
    ]
    # Depth 1: DEC-45 relates to DEC-43 and DEC-40 to DEC-41, neither to DEC-42. DEC-420 is another id.
    assert answer["results"][3] == {"path": None, "file_path": None, "id": "DEC-99", "title": None,
                                    "relevance": "related_to_outbound"}
    incident = answer["results"][5]
    assert incident["excerpt"].splitlines()[1] == "Pool exhaustion again, see DEC-42 for the fix."
    assert answer["total"] == 6 and answer["tokens"] < ANSWER_TOKENS


def test_xref_accepts_a_path_or_a_title_and_reports_unknown_targets(engine):
    by_id = engine.memory_search(MemoryRequest("xref", "DEC-42"))["results"]
    assert engine.memory_search(MemoryRequest("C", "decisions/DEC-42.md"))["results"] == by_id
    assert engine.memory_search(MemoryRequest("xref", "use connection pooling for database access"))["results"] == by_id
    # A note without an id: the incident is mentioned by nobody and relates to nothing.
    assert engine.memory_search(MemoryRequest("xref", "notes/incident-2026-03.md"))["results"] == []
    outbound = engine.memory_search(MemoryRequest("xref", "DEC-40"))["results"]
    assert [(r["id"], r["relevance"]) for r in outbound] == [("DEC-41", "related_to_outbound")]
    # The ids memory_search returns are ids xref accepts: a note without a frontmatter id is named by its document id.
    journal = next(r for r in engine.memory_search(MemoryRequest("content", "pool exhaustion"))["results"]
                   if r["file_path"] == "journal/2026-03-02.md")
    assert journal["id"] == journal_id(engine)
    assert engine.memory_search(MemoryRequest("xref", journal["id"]))["query"] == journal["id"]
    with pytest.raises(DocumentNotFound, match="No document in project 'memory' has the id, title or path 'DEC-7'"):
        engine.memory_search(MemoryRequest("xref", "DEC-7"))
    with pytest.raises(InvalidQuery, match="give its id"):
        engine.memory_search(MemoryRequest("xref", " "))


def test_memory_search_never_returns_whole_documents(engine):
    for mode, query in (("frontmatter", {"tags": "database"}), ("content", "pool"), ("xref", "DEC-42")):
        for r in engine.memory_search(MemoryRequest(mode, query))["results"]:
            assert set(r) <= {"path", "file_path", "id", "title", "relevance", "matched", "matches", "line",
                              "excerpt"}
            assert len(r.get("excerpt", "").splitlines()) <= 3
