"""Tests for the chunker: token budget, stability under edits, line ranges, prefixes, and real corpora."""
from __future__ import annotations

import logging
import random
from pathlib import Path

import pytest

from indexer.ingest.chunking import MAX_TOKENS, PREFIX_MAX_TOKENS, TokenCounter, chunk_document
from indexer.ingest.parsed import ParsedDocument, Section
from indexer.text.readable import has_words, reader_text

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"

WORDS = (
    "river stone cluster deploy memory index vector lantern garden kernel packet window harbor "
    "signal orbit meadow ledger socket thunder pillow compass canyon rocket violin marble tunnel "
    "quiet bright narrow ancient frozen gentle hollow rapid silent golden"
).split()


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter.for_model()


def paragraph(rng: random.Random, words: int) -> str:
    """Make a deterministic paragraph of sentences from a small vocabulary."""
    out, sentence = [], []
    for _ in range(words):
        sentence.append(rng.choice(WORDS))
        if len(sentence) >= rng.randint(6, 14):
            out.append(" ".join(sentence).capitalize() + ".")
            sentence = []
    if sentence:
        out.append(" ".join(sentence).capitalize() + ".")
    return " ".join(out)


def one_section_doc(text: str, title: str = "Note", heading_path: list[str] | None = None) -> ParsedDocument:
    return ParsedDocument("markdown", title, [Section(heading_path or [], text, 1, text.count("\n") + 1)])


def sectioned_doc(title: str, sections: list[tuple[str, list[str]]]) -> tuple[ParsedDocument, str]:
    """Build a markdown file of '## heading' sections and the ParsedDocument an extractor would make of it."""
    parsed, lines = [], []
    for heading, paragraphs in sections:
        text = f"## {heading}\n\n" + "\n\n".join(paragraphs) + "\n"
        parsed.append(Section([heading], text, len(lines) + 1, len(lines) + text.count("\n")))
        lines.extend(text.split("\n")[:-1])
    return ParsedDocument("markdown", title, parsed), "\n".join(lines) + "\n"


def assert_within_budget(chunks, counter: TokenCounter, max_tokens: int = MAX_TOKENS) -> None:
    counts = counter.count_many([c.embed_text for c in chunks])
    over = [(c.ordinal, n) for c, n in zip(chunks, counts) if n > max_tokens]
    assert not over, f"chunks over {max_tokens} tokens: {over[:5]}"


def assert_lines_match(chunks, file_text: str) -> None:
    """Check each chunk's first and last content lines sit on its start_line and end_line in the file."""
    lines = file_text.split("\n")
    for c in chunks:
        assert 1 <= c.start_line <= c.end_line <= len(lines), (c.ordinal, c.start_line, c.end_line)
        content_lines = c.content.split("\n")
        assert content_lines[0] in lines[c.start_line - 1], (c.ordinal, c.start_line)
        assert content_lines[-1] in lines[c.end_line - 1], (c.ordinal, c.end_line)
        assert len(content_lines) == c.end_line - c.start_line + 1


# --- the counter ---------------------------------------------------------------------------------------------


def test_counter_counts_special_tokens_and_is_not_padded_or_truncated(counter):
    assert counter.exact
    assert counter.count("hello world") == 4  # [CLS] hello world [SEP]
    assert counter.count_many(["", "hello world", "hello " * 300]) == [2, 4, 302]


def test_counts_from_remembered_words_equal_the_tokenizers_own(monkeypatch):
    """Counts are summed from each distinct word's count; they must be the tokenizer's count of the whole text, on
    text where words and pieces part ways: accents, CJK, punctuation inside words, a word past WordPiece's 100
    characters, the separators split() cuts at and the tokenizer deletes, and after the memory starts over."""
    whole = TokenCounter.for_model()._tokenizer
    texts = ["Café au lait, s'il vous plaît!", "東京は日本の首都です", "e-mail: a.b@c.org (see [[Note#Part]])",
             "x" * 150 + " short", "a\x1cb c\x1fd: joined by the separators", "", "   ", "tab\tand\u2028line\u00a0sep",
             "don't stop: 3.14159 ≈ π", paragraph(random.Random(5), 400)]
    expected = [len(e) for e in whole.encode_batch(texts)]
    counter = TokenCounter.for_model()
    assert counter.count_many(texts) == expected
    assert counter.count_many(texts[::-1]) == expected[::-1]  # from memory the second time
    monkeypatch.setattr("indexer.model.tokens.WORD_CACHE", 20)  # a memory smaller than one text's words
    assert counter.count_many(texts) == expected and len(counter._words) <= 600


def test_counter_falls_back_to_an_approximation_when_the_tokenizer_is_missing(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="indexer.model.tokens"):
        approx = TokenCounter.for_model(tmp_path)
    assert not approx.exact
    assert "approximately" in caplog.text
    assert approx.count("hello world") == 2 + 2 + 2  # a piece per 4 characters of each word
    doc = one_section_doc(paragraph(random.Random(3), 2000))
    chunks = chunk_document(doc, approx)
    assert len(chunks) > 5
    assert_within_budget(chunks, approx)


# --- prefix and embed_text -----------------------------------------------------------------------------------


def test_embed_text_is_title_and_heading_path_then_content(counter):
    doc = ParsedDocument(
        "markdown", "Kubernetes notes", [Section(["Setup", "Linux"], "### Linux\n\nInstall kubectl.", 10, 12)]
    )
    [chunk] = chunk_document(doc, counter)
    # The heading line is in the content, so the prefix stops above it and the model reads it once, without '###'.
    assert chunk.embed_text == "Kubernetes notes > Setup\nLinux\n\nInstall kubectl."
    assert chunk.content == "### Linux\n\nInstall kubectl."
    assert chunk.heading_path == ["Setup", "Linux"]
    assert (chunk.start_line, chunk.end_line) == (10, 12)


def test_prefix_skips_a_first_heading_that_repeats_the_title(counter):
    doc = ParsedDocument("markdown", "Kubernetes", [Section(["Kubernetes", "Setup"], "Body.", 1, 1)])
    assert chunk_document(doc, counter)[0].embed_text == "Kubernetes > Setup\nBody."


def test_prefix_without_title_or_headings_leaves_content_alone(counter):
    [chunk] = chunk_document(ParsedDocument("text", "", [Section([], "Just text.", 1, 1)]), counter)
    assert chunk.embed_text == "Just text."


def test_long_prefix_is_truncated_to_the_prefix_budget(counter):
    heading = " ".join(f"heading{i}" for i in range(60))
    doc = ParsedDocument("markdown", "A title", [Section([heading], "Body text here.", 1, 1)])
    [chunk] = chunk_document(doc, counter)
    prefix, content = chunk.embed_text.split("\n", 1)
    assert content == "Body text here."
    assert f"A title > {heading}".startswith(prefix)
    assert 10 < counter.count(prefix) - 2 <= PREFIX_MAX_TOKENS


# --- empty input and ordinals --------------------------------------------------------------------------------


def test_empty_and_whitespace_sections_make_no_chunks(counter):
    doc = ParsedDocument(
        "markdown", "T", [Section([], "", 1, 1), Section(["A"], "  \n\n\t\n", 2, 5), Section(["B"], "Text.", 6, 6)]
    )
    chunks = chunk_document(doc, counter)
    assert [(c.ordinal, c.content, c.heading_path) for c in chunks] == [(0, "Text.", ["B"])]
    # An empty document still has one chunk, so that keyword search finds it by title and path; the model reads its
    # name. Without a word even in its name, the model reads nothing.
    [empty] = chunk_document(ParsedDocument("markdown", "T", []), counter)
    assert not empty.keyword_only and empty.content == "" and empty.embed_text == "T"
    [nameless] = chunk_document(ParsedDocument("markdown", "{{title}}", []), counter)
    assert nameless.keyword_only and nameless.embed_text == ""


def test_sections_are_packed_in_document_order_and_each_is_recorded(counter):
    rng = random.Random(7)
    doc, file_text = sectioned_doc(
        "Notes", [(f"Part {i}", [paragraph(rng, 40) for _ in range(i + 1)]) for i in range(5)]
    )
    chunks = chunk_document(doc, counter)
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    assert len(chunks) < len(doc.sections)  # short sections share chunks
    spanned = [s["heading_path"] for c in chunks for s in c.sections]
    assert [p for i, p in enumerate(spanned) if p not in spanned[:i]] == [s.heading_path for s in doc.sections]
    lines = file_text.split("\n")
    for c in chunks:
        assert c.heading_path == c.sections[0]["heading_path"]
        for i, s in enumerate(c.sections):
            end = c.sections[i + 1]["offset"] if i + 1 < len(c.sections) else len(c.content)
            first, last = s["lines"]
            assert c.content[s["offset"]:end].strip("\n") == "\n".join(lines[first - 1:last])
    assert_lines_match(chunks, file_text)
    assert_within_budget(chunks, counter)


def test_a_chunk_is_cut_at_a_heading_rather_than_inside_a_section(counter):
    rng = random.Random(3)
    # Two top-level parts of ~150 tokens each with sub-sections: they cannot share one 256-token window.
    doc, file_text = sectioned_doc("Guide", [(f"Part {i}", [paragraph(rng, 50), paragraph(rng, 50)]) for i in range(4)])
    chunks = chunk_document(doc, counter)
    for c in chunks:
        assert c.content.startswith("## Part"), c.content[:40]
    assert_within_budget(chunks, counter)


def test_mind_map_nodes_never_share_a_chunk(counter):
    sections = [Section(["Map", f"Node {i}"], f"Node {i} body text here.", i + 1, i + 1, ref={"node_id": f"n{i}"})
                for i in range(4)]
    chunks = chunk_document(ParsedDocument("mindmap-semantic", "Map", sections), counter)
    assert [c.ref["node_id"] for c in chunks] == ["n0", "n1", "n2", "n3"]


def test_a_heading_alone_joins_its_neighbours_and_a_note_of_headings_only_has_no_chunks(counter):
    text = "# Plan\n\n## Empty\n\n## Filled\n\nSome words that make a body."
    sections = [Section(["Plan"], "# Plan", 1, 1), Section(["Plan", "Empty"], "## Empty", 3, 3),
                Section(["Plan", "Filled"], "## Filled\n\nSome words that make a body.", 5, 7)]
    [chunk] = chunk_document(ParsedDocument("markdown", "Plan", sections), counter)
    assert chunk.content == text and (chunk.start_line, chunk.end_line) == (1, 7)
    headings_only = [Section(["T"], "# {{title}}", 1, 1), Section(["T", "Tasks"], "## Tasks\n\n- [ ]\n- [ ]", 3, 6)]
    [daily] = chunk_document(ParsedDocument("markdown", "Daily", headings_only), counter)
    assert daily.embed_text == "Daily" and "## Tasks" in daily.content  # what the model reads of it is its name


def test_a_note_of_properties_is_read_by_the_model_as_its_name_and_properties(counter):
    meta = {"categories": ["[[Movies]]"], "cover": "https://example.com/poster.jpg", "director": ["[[Ridley Scott]]"],
            "rating": 7, "year": 1982, "last": "2023-09-14", "seen": True}
    [film] = chunk_document(ParsedDocument("markdown", "Blade Runner", [], frontmatter=meta), counter)
    assert film.embed_text == "Blade Runner\ncategories: Movies; director: Ridley Scott; rating: 7; year: 1982"
    assert not film.keyword_only


def test_a_templates_empty_fields_are_read_by_the_model_as_what_it_records(counter):
    # kepano's Coffee Template: nothing but properties, most of them empty. Its fields are what it is for; before,
    # the model read "Coffee Template / categories: Coffee" and the template sat under hybrid's 0.3 floor for a
    # question about rating beans by origin and process.
    meta = {"categories": ["[[Coffee]]"], "maker": None, "producer": None, "country": [], "variety": "",
            "process": None, "rating": None, "last": None, "seen": False, "tags": [], "aliases": None}
    [template] = chunk_document(ParsedDocument("markdown", "Coffee Template", [], frontmatter=meta), counter)
    assert template.embed_text == ("Coffee Template\ncategories: Coffee; maker; producer; country; variety; process; "
                                   "rating")  # `last` says when, not what; a false flag is a value, not a field;
    # empty tags and aliases, which every template carries, say nothing of what it records
    assert not template.keyword_only


def test_the_notes_own_description_opens_its_first_chunk_and_gives_a_bodiless_page_meaning(counter):
    sections = [Section(["Usage"], "## Usage\n\nType /cloze to hide an answer.", 5, 7)]
    meta = {"description": "Creates collapsible content that is not shown by default", "type": "Command"}
    [chunk] = chunk_document(ParsedDocument("markdown", "Cloze", sections, frontmatter=meta), counter)
    assert chunk.embed_text == ("Cloze\nCreates collapsible content that is not shown by default\n\nUsage\n\n"
                                "Type /cloze to hide an answer.")
    assert chunk.content == "## Usage\n\nType /cloze to hide an answer."  # the content stays the file's text
    assert "Command" not in chunk.embed_text  # other properties are not embedded
    [page] = chunk_document(ParsedDocument("markdown", "Publish Web", [], frontmatter={
        "description": "The read-only published version of a graph", "type": "Platform"}), counter)
    assert not page.keyword_only and page.embed_text == "Publish Web\nThe read-only published version of a graph"
    assert page.content == "The read-only published version of a graph"


# --- line ranges ---------------------------------------------------------------------------------------------

FIXTURE = """\
# Title

Intro paragraph.

## Setup

First para line one
line two.

```bash
echo hi

echo there
```

## Usage
Use it.
"""
FIXTURE_SECTIONS = [
    Section(["Title"], "# Title\n\nIntro paragraph.\n", 1, 4),
    Section(
        ["Title", "Setup"], "## Setup\n\nFirst para line one\nline two.\n\n```bash\necho hi\n\necho there\n```\n", 5, 15
    ),
    Section(["Title", "Usage"], "## Usage\nUse it.\n", 16, 17),
]


def test_line_ranges_cover_the_original_lines(counter):
    doc = ParsedDocument("markdown", "Title", FIXTURE_SECTIONS)
    [chunk] = chunk_document(doc, counter)
    assert (chunk.start_line, chunk.end_line) == (1, 17)
    assert [s["lines"] for s in chunk.sections] == [[1, 3], [5, 14], [16, 17]]
    assert chunk.content == FIXTURE.rstrip("\n")
    assert_lines_match([chunk], FIXTURE)


def test_line_ranges_when_the_budget_separates_blocks_and_a_fence_stays_whole(counter):
    doc = ParsedDocument("markdown", "Title", FIXTURE_SECTIONS)
    # "Title > Setup" is 3 tokens; the fenced block is 11, so it fills the Setup section's 11-token budget alone.
    assert counter.count(FIXTURE_SECTIONS[1].text.split("\n\n", 2)[2].strip()) == 2 + 11
    chunks = chunk_document(doc, counter, max_tokens=2 + 3 + 11)
    fence = next(c for c in chunks if "```bash" in c.content)
    assert fence.content == "```bash\necho hi\n\necho there\n```" and (fence.start_line, fence.end_line) == (10, 14)
    assert_within_budget(chunks, counter, 2 + 3 + 11)
    assert_lines_match(chunks, FIXTURE)


# --- stability -----------------------------------------------------------------------------------------------


def _edit_word(text: str, index: int, new: str) -> str:
    words = text.split(" ")
    assert words[index] != new
    words[index] = new
    return " ".join(words)


def _changed(before, after) -> int:
    """How many chunks after an edit have text that no chunk had before (what would be embedded again)."""
    old = {c.embed_text for c in before}
    return sum(c.embed_text not in old for c in after)


def test_editing_one_word_of_one_paragraph_changes_at_most_two_chunks(counter):
    rng = random.Random(11)
    sections = [(f"Topic {i}", [paragraph(rng, rng.randint(60, 110)) for _ in range(3)]) for i in range(6)]
    before = chunk_document(sectioned_doc("Long note", sections)[0], counter)
    assert len(before) > 6, "paragraphs should be big enough that sections need more than one chunk"
    ones = 0
    for s, (heading, paragraphs) in enumerate(sections):
        for p in range(len(paragraphs)):
            for position, word in ((3, "zeppelin"), (-2, "lighthouse-keeper")):
                edited = list(paragraphs)
                edited[p] = _edit_word(edited[p], position, word)
                changed = sections[:s] + [(heading, edited)] + sections[s + 1:]
                after = chunk_document(sectioned_doc("Long note", changed)[0], counter)
                n = _changed(before, after)
                assert 1 <= n <= 2, f"section {s} paragraph {p}: {n} chunks changed"
                ones += n == 1
                assert any(edited[p] in c.content for c in after)
    assert ones >= 30  # of 36 edits, nearly all touch one chunk only


def test_editing_one_of_many_paragraphs_in_one_section_changes_at_most_two_chunks(counter):
    rng = random.Random(5)
    paragraphs = [paragraph(rng, rng.choice([12, 30, 55, 90, 140])) for _ in range(40)]
    doc, _ = sectioned_doc("Journal", [("Log", paragraphs)])
    before = chunk_document(doc, counter)
    assert 8 < len(before) < 40
    # Each paragraph lives in exactly one chunk: no overlap across paragraph boundaries.
    for p in paragraphs:
        assert sum(p in c.content for c in before) == 1
    for i in range(len(paragraphs)):
        edited = list(paragraphs)
        edited[i] = _edit_word(edited[i], 4, "lighthouse")
        after = chunk_document(sectioned_doc("Journal", [("Log", edited)])[0], counter)
        assert 1 <= _changed(before, after) <= 2, f"paragraph {i}"
    # Growing a paragraph by a sentence moves at most the cut after it.
    for i in range(0, len(paragraphs), 3):
        edited = list(paragraphs)
        edited[i] += " An extra sentence about the harbor signal and the narrow canyon."
        after = chunk_document(sectioned_doc("Journal", [("Log", edited)])[0], counter)
        assert 1 <= _changed(before, after) <= 2, f"paragraph {i} grown"


def test_chunking_is_deterministic(counter):
    rng = random.Random(2)
    doc = one_section_doc("\n\n".join(paragraph(rng, rng.randint(5, 300)) for _ in range(30)))
    assert chunk_document(doc, counter) == chunk_document(doc, counter)


# --- budget on long blocks -----------------------------------------------------------------------------------


def _assert_pieces_cover(chunks, text: str, counter: TokenCounter, overlap_tokens: int = 32) -> None:
    """Check split pieces appear in order in text, overlap their neighbours a little, and leave nothing out."""
    position, previous_end = 0, 0
    for c in chunks:
        start = text.find(c.content, position)
        assert start >= 0, f"chunk {c.ordinal} is not a piece of the text"
        if c.ordinal:
            assert start < previous_end, f"chunk {c.ordinal} does not overlap the one before"
            assert 1 <= counter.count(text[start:previous_end]) - 2 <= overlap_tokens
        else:
            assert text[:start].strip() == ""
        position, previous_end = start + 1, start + len(c.content)
    assert text[previous_end:].strip() == ""


def test_a_5000_word_paragraph_is_split_within_budget_with_overlap(counter):
    text = paragraph(random.Random(1), 5000)
    chunks = chunk_document(one_section_doc(text, "Essay", ["Body"]), counter)
    assert 25 < len(chunks) < 60
    assert_within_budget(chunks, counter)
    _assert_pieces_cover(chunks, text, counter)
    # Sentences are the preferred cut: every piece but the last ends a sentence.
    assert all(c.content.endswith(".") for c in chunks)
    assert all((c.start_line, c.end_line) == (1, 1) for c in chunks)


def test_a_paragraph_without_punctuation_is_cut_into_token_windows(counter):
    rng = random.Random(4)
    text = " ".join(rng.choice(WORDS) for _ in range(3000))
    chunks = chunk_document(one_section_doc(text), counter, overlap_tokens=20)
    counts = counter.count_many([c.embed_text for c in chunks])
    assert max(counts) <= MAX_TOKENS and min(counts[:-1]) >= MAX_TOKENS - 12  # windows are filled
    _assert_pieces_cover(chunks, text, counter, overlap_tokens=20)


def test_a_long_code_block_is_split_at_lines_within_budget(counter):
    body = "\n".join(
        f"    result_{i} = compute(value_{i}, factor={i * 7})  # step {i}" + ("\n" if i % 10 == 0 else "")
        for i in range(400)
    )
    text = f"Some setup first.\n\n```python\ndef main():\n{body}\n```\n\nAfter the code."
    doc = one_section_doc(text, "Script", ["Code"])
    chunks = chunk_document(doc, counter)
    assert chunks[0].content.startswith("Some setup first.\n\n```python")  # a short paragraph joins what follows
    assert chunks[-1].content.endswith("```\n\nAfter the code.")
    assert len(chunks) > 10
    assert_within_budget(chunks, counter)
    lines = text.split("\n")
    for c in chunks:  # pieces of code start and end on whole lines, and each line is in exactly one chunk
        assert c.content.split("\n")[0] == lines[c.start_line - 1]
        assert c.content.split("\n")[-1] == lines[c.end_line - 1]
    assert [c.start_line for c in chunks[1:]] == [c.end_line + 1 for c in chunks[:-1]] or all(
        b.start_line > a.end_line for a, b in zip(chunks, chunks[1:]))
    covered = sorted(line for c in chunks for line in range(c.start_line, c.end_line + 1))
    assert len(covered) == len(set(covered))
    assert {i + 1 for i, line in enumerate(lines) if line.strip()} <= set(covered)


def test_cjk_text_without_spaces_is_split_within_budget(counter):
    rng = random.Random(9)
    hanzi = (
        "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动"
        "同工也能下过子说产种面而方后多定行学法所民得经"
    )
    sentences = ["".join(rng.choice(hanzi) for _ in range(rng.randint(8, 30))) + "。" for _ in range(300)]
    text = "".join(sentences) + "".join(rng.choice(hanzi) for _ in range(900))  # ends in a run with no punctuation
    chunks = chunk_document(one_section_doc(text, "中文笔记"), counter)
    assert len(chunks) > 20
    assert_within_budget(chunks, counter)
    _assert_pieces_cover(chunks, text, counter)
    assert sum(c.content.endswith("。") for c in chunks) >= len(chunks) // 2


def test_small_budgets_still_hold_for_every_chunk(counter):
    rng = random.Random(8)
    text = "\n\n".join(paragraph(rng, rng.randint(1, 80)) for _ in range(20)) + "\n\n" + "x" * 90 + "y" * 90
    for max_tokens in (8, 12, 40, 100):
        chunks = chunk_document(one_section_doc(text, "Tiny budget"), counter, max_tokens=max_tokens)
        assert_within_budget(chunks, counter, max_tokens)


# --- real corpora --------------------------------------------------------------------------------------------


def _corpus_files(*patterns: tuple[str, str]) -> list[Path]:
    if not CORPORA.is_dir():
        pytest.skip(f"real corpora not found at {CORPORA}")
    return sorted(p for folder, pattern in patterns for p in (CORPORA / folder).glob(pattern))


@pytest.mark.parametrize(
    "patterns",
    [
        [("tldr-en", "*/*.md")],
        [("kepano-obsidian", "**/*.md"), ("logseq-docs", "**/*.md")],
    ],
    ids=["tldr", "kepano+logseq"],
)
def test_real_corpora_chunks_fit_the_model_window(counter, patterns):
    files = _corpus_files(*patterns)
    assert len(files) > 100
    for path in files:
        text = path.read_text(encoding="utf-8")
        doc = one_section_doc(text, path.stem)
        chunks = chunk_document(doc, counter)
        # A note with nothing for the model but headings, embeds and placeholders (a template) has one chunk for
        # keyword search only.
        body = "\n".join(line for line in text.split("\n") if not line.lstrip().startswith("#"))
        assert chunks and (not chunks[0].keyword_only or not has_words(reader_text(body))), path
        chunks = [c for c in chunks if not c.keyword_only]
        assert_within_budget(chunks, counter)
        assert_lines_match(chunks, text)
        assert [c.ordinal for c in chunks] == list(range(len(chunks)))
        if chunks:
            assert_nothing_left_out(chunks, text, path)


def assert_nothing_left_out(chunks, text: str, where) -> None:
    """Check each chunk of a one-section text starts on its start_line and together they cover every character."""
    line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"] + [len(text) + 1]
    covered = bytearray(len(text))
    for c in chunks:
        start = text.find(c.content, line_starts[c.start_line - 1])
        assert line_starts[c.start_line - 1] <= start < line_starts[c.start_line], f"{where}: chunk {c.ordinal}"
        covered[start : start + len(c.content)] = b"\x01" * len(c.content)
    missed = [i for i, ch in enumerate(text) if not covered[i] and not ch.isspace()]
    assert not missed, f"{where}: {text[missed[0]:missed[0] + 40]!r} is in no chunk"


# --- one huge file: bounded work, bounded passages ------------------------------------------------------------


def test_a_paragraph_many_segments_long_is_cut_as_one_pass_would_cut_it(counter):
    from indexer.ingest import chunking

    text = paragraph(random.Random(9), 30_000)  # about 200 KB in one paragraph: a dozen segments
    assert len(text) > 10 * chunking.SEGMENT_CHARS
    chunks = chunk_document(one_section_doc(text, "Essay", ["Body"]), counter)
    assert_within_budget(chunks, counter)
    _assert_pieces_cover(chunks, text, counter)
    assert all(c.content.endswith(".") for c in chunks)  # sentences stay the cut, across segment ends too
    # The windows are the ones a single pass over the whole paragraph finds (segments only bound the memory).
    whole = chunking._split_segment(text, counter, MAX_TOKENS - 2 - 4, 32)
    assert chunking._split_long(text, counter, MAX_TOKENS - 2 - 4, 32) == whole


@pytest.mark.parametrize("text", [
    "[" * 100_000 + "]" * 100_000,  # JSON too deep to parse, read as text: no word for the model
    "alpha" + " " * 500_000 + "beta gamma",  # words far apart in one paragraph
    "\n".join("-" * 70 for _ in range(3000)),  # a run of rules
], ids=["brackets", "spaces", "rules"])
def test_no_passage_stores_more_than_the_cap_whatever_the_text(counter, text):
    from indexer.ingest.chunking import MAX_CONTENT_CHARS

    chunks = chunk_document(one_section_doc(text), counter)
    assert max(len(c.content) for c in chunks) <= MAX_CONTENT_CHARS + 2  # +2: the line breaks a join keeps
    assert_within_budget(chunks, counter)
    assert "".join(c.content for c in chunks).replace("\n", "").replace(" ", "") == \
        text.replace("\n", "").replace(" ", "")  # every character stays in some passage, once


def test_a_very_long_note_is_embedded_up_to_its_budget_and_keyword_searchable_to_the_end(counter):
    from indexer.ingest.pipeline import EmbedBudget, apply_embed_budget, build_chunks

    text = paragraph(random.Random(3), 20_000) + " The last word is zanzibar."
    parsed = one_section_doc(text, "Pasted")
    chunks = build_chunks("doc", parsed, counter, EmbedBudget(machine=5, long=40))
    warning = apply_embed_budget(parsed, chunks, EmbedBudget(machine=5, long=40))
    assert sum(not c.keyword_only for c in chunks) == 40 and len(chunks) > 100
    assert "Only the first 40 of its" in warning[0] and "SKMEMORY_LONG_EMBED_CHUNKS" in warning[0]
    assert "zanzibar" in chunks[-1].content and chunks[-1].keyword_only
