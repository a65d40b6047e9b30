"""Text many notes of a vault share (a footer, a banner) never speaks for a note: not its best passage, snippet,
MCP heading or get_context item. Measured on a real published vault: for "publishing a vault with Obsidian
Publish" 5 of the 10 MCP rows showed the shared footer, and get_context spent 1,408 of its 1,979 tokens on it."""
from __future__ import annotations

import pytest

from indexer.config import Settings
from indexer.home import Home
from indexer.text.boilerplate import mostly_shared, paragraph_keys, without_shared
from support import indexed
from indexer import ContextRequest, SearchRequest

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
    answer = garden.search(SearchRequest("publishing a vault with Obsidian Publish", project="garden", limit=10,
                                         group=True))
    rows = answer["results"]
    assert rows[0]["path"] == "Publishing with Obsidian Publish.md"
    for r in rows:
        if r["path"] != "Only a footer.md":
            assert "digital garden" not in r["snippet"] and "newsletter" not in r["snippet"], r["path"]
    # A long note whose footer is a passage of its own: that passage comes last within its note.
    graph = garden.search(SearchRequest("publishing notes to the web as a digital garden", project="garden",
                                        limit=50))["results"]
    passages = [r for r in graph if r["path"] == "Graph view.md"]
    if len(passages) > 1:
        assert "newsletter" not in passages[0]["snippet"]


def test_get_context_spends_no_budget_on_the_footer(garden):
    context = garden.context(ContextRequest("publishing a vault with Obsidian Publish", project="garden",
                                            token_budget=600))
    assert context["items"]
    assert not any("newsletter" in item["content"] for item in context["items"])
    assert context["items"][0]["path"] == "Publishing with Obsidian Publish.md"


def test_text_shared_by_a_few_notes_only_stays(tmp_path, real_embedder):
    vault = tmp_path / "vault"
    vault.mkdir()
    for name in ("One", "Two", "Three"):  # under SHARED_NOTES notes: a quote two notes share is not boilerplate
        (vault / f"{name}.md").write_text(f"# {name}\n\nShort.\n\n{FOOTER}\n", encoding="utf-8")
    with indexed(Home(Settings(home=tmp_path / "home"), embedder=real_embedder), vault, "few") as engine:
        rows = engine.search(SearchRequest("digital garden newsletter", project="few", limit=5, group=True))["results"]
        assert rows and all("newsletter" in r["snippet"] for r in rows)


# --- a vault built like a real published hub (6,556 of its 6,591 notes carried this footer) -----------------------

FEATURES = ["Sync", "Publish", "Canvas", "Templates", "Daily notes", "Graph view", "Backlinks", "Kanban", "Dataview",
            "Excalidraw", "Zettelkasten", "PARA", "Outliner", "Calendar", "Tasks", "Paralloid", "Readwise", "Git",
            "Slides", "Audio recorder", "Word count", "Bookmarks", "Properties", "Bases", "Web clipper", "Vim mode",
            "Spaced repetition", "Excel import", "Citations", "Mermaid diagrams"]
DOINGS = ["keeps {f} settings in the vault's config folder, so they travel with the notes",
          "adds a {f} pane to the right sidebar that follows the active note",
          "was written by a volunteer; {f} issues go to its tracker, not the forum",
          "uses {f} commands from the palette; each can be given a hotkey",
          "shows {f} results inline in reading view and live preview alike",
          "stores nothing outside the vault: uninstalling {f} leaves every note as it was",
          "needs restricted mode turned off before {f} can be installed from the browser"]
FOOTER_HEADING = "This note in GitHub"
FOOTER_WORDS = ("edit in github", "copy this note", "download this vault", FOOTER_HEADING.lower())
BADGE = "![GitHub stars badge for the community plugin](https://img.shields.io/github/stars/community/{n}?style=flat)"


def hub_footer(rel: str) -> str:
    """The footer as the real vault writes it: every link holds the note's own path, so no two are byte-equal."""
    q = rel.replace(" ", "%20")
    return ("%% Hub footer: Please don't edit anything below this line %%\n\n"
            f"# {FOOTER_HEADING}\n\n"
            f'<span class="git-footer">[Edit In GitHub](https://github.dev/community/hub/blob/main/{q} '
            f'"git-hub-edit-note") | [Copy this note](https://raw.githubusercontent.com/community/hub/main/{q} '
            '"git-hub-copy-note") | [Download this vault](https://github.com/community/hub/archive/refs/heads/'
            'main.zip "git-hub-download-vault") </span>\n')


@pytest.fixture(scope="module")
def hub(tmp_path_factory, real_embedder):
    base = tmp_path_factory.mktemp("hub")
    vault = base / "vault"
    for i, feature in enumerate(FEATURES):
        for j in range(4):  # four notes a feature: its page and three about parts of it
            name = feature if j == 0 else f"{feature} {['setup', 'tips', 'troubleshooting'][j - 1]}"
            rel = f"{'Plugins' if j == 0 else 'Guides'}/{name}.md"
            doings = [DOINGS[(i + j + k) % len(DOINGS)].format(f=feature) for k in range(3)]
            badge = BADGE.format(n=i * 4 + j) + "\n\n" if (i + j) % 3 == 0 else ""
            body = f"{badge}{feature} {doings[0]}. It {doings[1]}, and it {doings[2]}."
            (vault / rel).parent.mkdir(parents=True, exist_ok=True)
            (vault / rel).write_text(f"---\naliases: []\n---\n\n# About {name}\n\n{body}\n\n{hub_footer(rel)}",
                                     encoding="utf-8")
    for i in range(8):  # stubs: nothing but the footer
        rel = f"People/Person {i}.md"
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(hub_footer(rel), encoding="utf-8")
    with indexed(Home(Settings(home=base / "home"), embedder=real_embedder), vault, "hub") as engine:
        yield engine


def _footer_in(text: str) -> bool:
    text = text.lower()
    return any(w in text for w in FOOTER_WORDS) or "stars badge" in text


def test_the_hub_footer_never_speaks_for_a_note_with_words_of_its_own(hub):
    docs = hub.documents("hub", limit=500)["documents"]
    assert len(docs) == len(FEATURES) * 4 + 8
    assert not [d for d in docs if d["title"] == FOOTER_HEADING]  # titled by file name, never by the footer
    for query in [*FEATURES[:12], "Kanban troubleshooting", "how do I publish my vault", "download this vault"]:
        rows = hub.search(SearchRequest(query, project="hub", limit=10, group=True))["results"]
        assert rows, query
        for r in rows:
            if r["path"].startswith("People/"):  # a stub: its name, and says it has nothing of its own
                assert r["snippet"].startswith(r["title"]) and "many notes share" in r["snippet"], r
                continue
            assert r["snippet"].strip() and not _footer_in(r["snippet"]), (query, r["path"], r["snippet"])
            assert FOOTER_HEADING not in r["heading_path"], (query, r["path"])
    top = hub.search(SearchRequest("Kanban", project="hub", limit=5, group=True))["results"][0]
    assert top["path"] == "Plugins/Kanban.md"  # its own title first


def test_link_suggestions_and_related_notes_read_no_footer(hub):
    for note in ("Plugins/Kanban.md", "Guides/Sync tips.md", "People/Person 3.md"):
        found = hub.link_suggestions(note, project="hub")
        for m in found["unlinked_mentions"]:
            assert not _footer_in(m["text"]) and m["title"] != FOOTER_HEADING, (note, m)
        for r in found["close_in_meaning"]:
            for word in ("github", "githubusercontent", "refs", "heads", "blob", "span", "badge", "stars"):
                assert f" {word}" not in r["reason"].lower(), (note, r["reason"])


def test_no_cluster_is_named_after_the_footer_or_the_badge(hub):
    graph = hub.graphs.graph("hub")
    assert len(graph["clusters"]) > 1
    for c in graph["clusters"]:
        words = c["label"].lower()
        assert not any(w in words for w in ("github", "badge", "stars", "community", "edit", "download")), c["label"]
