"""Text many notes of a vault share (a footer, a banner) never speaks for a note: not its best passage, snippet,
MCP heading or get_context item. Measured on a real published vault: for "publishing a vault with Obsidian
Publish" 5 of the 10 MCP rows showed the shared footer, and get_context spent 1,408 of its 1,979 tokens on it."""
from __future__ import annotations

import pytest

from indexer.config import Settings
from indexer.home import Home
from indexer.ingest.boilerplate import mostly_shared, paragraph_keys, without_shared
from support import indexed

FOOTER = ("This page is part of my digital garden, published with Obsidian Publish. If a note here helped you, "
          "subscribe to the newsletter for new notes about publishing, writing and vaults every week.")
NOTES = {
    "Publishing with Obsidian Publish.md": "To put a vault online, open the Publish pane, tick the notes to "
    "upload and choose a site name. Changed notes are marked, so republishing sends only what moved.",
    "Custom domain.md": "Point a CNAME record at the published site, then enter the domain in the site's "
    "options; the certificate follows within the hour.",
    "Daily notes.md": "One note a day, named by its date, opened from the ribbon. Yesterday's tasks roll over.",
    "Templates.md": "A template is a note whose text is copied into the current one; {{date}} becomes today.",
    "Backlinks.md": "The backlinks pane lists every note that links here, and unlinked mentions below them.",
    "Graph view.md": "\n\n".join(f"## Part {n}\n\nThe graph draws notes as dots and links as lines; filters hide "
                                 f"tags, attachments and orphans, and groups colour notes by a search ({n})."
                                 for n in range(12)),
}


@pytest.fixture(scope="module")
def garden(tmp_path_factory, real_embedder):
    base = tmp_path_factory.mktemp("garden")
    vault = base / "vault"
    vault.mkdir()
    for name, text in NOTES.items():
        (vault / name).write_text(f"# {name[:-3]}\n\n{text}\n\n---\n\n{FOOTER}\n", encoding="utf-8")
    (vault / "Only a footer.md").write_text(f"{FOOTER}\n", encoding="utf-8")
    with indexed(Home(Settings(home=base / "home"), embedder=real_embedder), vault, "garden") as engine:
        yield engine


def test_a_paragraph_many_notes_share_is_boilerplate_and_a_rare_one_is_not():
    shared = {key for key, _ in paragraph_keys(FOOTER)}
    assert mostly_shared(FOOTER, shared) and not mostly_shared("Own words of this note, quite a few of them.\n\n"
                                                               "More of its own words, enough to count.", shared)
    assert without_shared(f"Own text here, long enough to count.\n\n{FOOTER}", shared).strip() == \
        "Own text here, long enough to count."
    assert without_shared(FOOTER, shared) == FOOTER  # a note that is only its footer still shows it


def test_no_snippet_of_a_note_with_words_of_its_own_shows_the_footer(garden):
    answer = garden.search("publishing a vault with Obsidian Publish", project="garden", limit=10, group=True)
    rows = answer["results"]
    assert rows[0]["path"] == "Publishing with Obsidian Publish.md"
    for r in rows:
        if r["path"] != "Only a footer.md":
            assert "digital garden" not in r["snippet"] and "newsletter" not in r["snippet"], r["path"]
    # A long note whose footer is a passage of its own: that passage comes last within its note.
    graph = garden.search("publishing notes to the web as a digital garden", project="garden", limit=50)["results"]
    passages = [r for r in graph if r["path"] == "Graph view.md"]
    if len(passages) > 1:
        assert "newsletter" not in passages[0]["snippet"]


def test_get_context_spends_no_budget_on_the_footer(garden):
    context = garden.context("publishing a vault with Obsidian Publish", project="garden", token_budget=600)
    assert context["items"]
    assert not any("newsletter" in item["content"] for item in context["items"])
    assert context["items"][0]["path"] == "Publishing with Obsidian Publish.md"


def test_text_shared_by_a_few_notes_only_stays(tmp_path, real_embedder):
    vault = tmp_path / "vault"
    vault.mkdir()
    for name in ("One", "Two", "Three"):  # under SHARED_NOTES notes: a quote two notes share is not boilerplate
        (vault / f"{name}.md").write_text(f"# {name}\n\nShort.\n\n{FOOTER}\n", encoding="utf-8")
    with indexed(Home(Settings(home=tmp_path / "home"), embedder=real_embedder), vault, "few") as engine:
        rows = engine.search("digital garden newsletter", project="few", limit=5, group=True)["results"]
        assert rows and all("newsletter" in r["snippet"] for r in rows)
