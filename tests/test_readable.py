"""What a reader sees: comments blanked with line numbers kept, and the model's text free of URLs and markup noise."""
from __future__ import annotations

from indexer.text.inline import code_lines
from indexer.text.readable import blank_comments, reader_text
from indexer import SearchRequest


def blank(text: str) -> list[str]:
    lines = text.split("\n")
    return blank_comments(lines, code_lines(lines))


def test_obsidian_and_html_comments_are_blanked_keeping_every_line():
    text = "keep %%inline%% this\n%% block\nstill hidden\n%% after\n<!-- one -->\nend <!-- open\nclosed --> tail"
    out = blank(text)
    assert len(out) == len(text.split("\n"))
    assert out == ["keep this", "", "", "after", "", "end", "tail"]


def test_comment_markers_in_code_stay_literal():
    text = "Use `%%` to comment.\n```\n%% not a comment %%\n<!-- nor this -->\n```\n%% but this %% is"
    assert blank(text) == ["Use `%%` to comment.", "```", "%% not a comment %%", "<!-- nor this -->", "```", "is"]


def test_an_unclosed_comment_hides_the_rest_of_the_note():
    assert blank("visible\n%% forgot to close\nhidden\nhidden too") == ["visible", "", "", ""]


def test_links_give_their_text_and_urls_give_nothing():
    text = ("See the [docs](https://example.com/docs?a=1) and ![a diagram](img/flow.png), "
            "[[Other note|that note]], [[Plain note#Section]] and <https://x.org> or https://y.org/z.")
    assert reader_text(text) == "See the docs and a diagram, that note, Plain note Section and or"


def test_badges_embeds_placeholders_tags_and_empty_tasks_give_nothing():
    text = ("![stars](https://img.shields.io/github/stars/x/y?color=573E7A)\n![[Books.base#Genre]]\n"
            "- ![CleanShot 2022-09-22 at 16.25.12.gif](../assets/CleanShot_1663856800902_0.gif)\n"
            "# {{title}}\nCreated <% tp.date.now() %> on {{date}}\n- [ ]\n- [x] buy <b>milk</b>\n|---|---|\n---")
    assert reader_text(text) == "Created on\nbuy milk"


def test_logseq_block_properties_and_image_sizes_give_nothing_and_bullets_go():
    text = ("- ## Usage\n\t- To create a card, add `#card`.\n\t  logseq.order-list-type:: number\n"
            "\t  id:: 6103e488-22d4-4751-b27a-69b278067c26\n\t- ![demo](x.gif){:height 538, :width 485}\n"
            "\t- rating:: 4")
    assert reader_text(text) == "Usage\nTo create a card, add `#card`.\ndemo\nrating:: 4"


def test_plain_prose_is_left_alone():
    prose = "Tomatoes need deep watering twice a week; 3 < 5 and a > b. Use C# and F#, see #garden."
    assert reader_text(prose) == prose


def test_a_logseq_macro_keeps_its_words_and_a_template_field_does_not():
    text = "Most apples are {{cloze red \\\\ color}}. See {{embed [[Flashcards]]}}. Made {{date:YYYY-MM-DD}} {{title}}."
    assert reader_text(text) == "Most apples are red color . See Flashcards . Made ."


def test_display_text_is_what_the_reading_view_shows():
    from indexer.text.readable import display_text, display_title

    text = ("## Install\n\nSee the [GitHub repository](https://github.com/x/y) · "
            "[<button id=HH>Open in Obsidian</button>](obsidian://open?vault=x), **bold** _and_ `code` ^abc123\n"
            "> [!note] Heads up\n> [[task-list|Task List Kanban]] and [[Kanban#Usage]] &amp; \\[x\\]\n"
            "![GitHub all releases](https://img.shields.io/github/downloads/x/total)"
            "<span class=\"git-footer\">Edit</span><script>alert(1)</script>\n| a | b |\n|---|---|\n| 1 | 2 |[^1]")
    assert display_text(text) == ("Install\nSee the GitHub repository · Open in Obsidian, bold and code\n"
                                  "note: Heads up\nTask List Kanban and Kanban Usage & [x]\nEdit\na b\n1 2")
    # A Logseq macro around a URL leaves nothing; its bookkeeping properties and block markers are never shown
    assert display_text("- [Datomic](https://a.b/c)\n\t- {{video https://youtu.be/x?v=1}}\n\t  collapsed:: true\n"
                        "#+BEGIN_NOTE\nskim it first\n#+END_NOTE\nid:: 60af74c1") == "Datomic\nskim it first"
    # Underscores inside a word are no emphasis (Logseq's namespaced file names, snake_case)
    assert display_title("Whiteboard___Object___Image") == "Whiteboard___Object___Image"
    assert display_text("my_snake_case and __strong__") == "my_snake_case and strong"
    assert display_title("!\\[\\[Kanban\\]\\] board") == "![[Kanban]] board"  # escaped: literal, as Obsidian shows it
    assert display_title("{{title}}") == "{{title}}"  # nothing readable left: the title as stored


def test_a_snippet_window_cut_inside_a_badge_shows_no_markup(tmp_path):
    """Measured on a real plugin vault: 3 % of snippets showed `![badge](https://img.shields.io/…`: FTS5's window
    ended inside an image, so the readable-text rules never saw it whole."""
    from indexer.config import Settings
    from indexer.home import Home
    from support import WordEmbedder, indexed

    vault = tmp_path / "vault"
    vault.mkdir()
    words = " ".join(f"filler{i}" for i in range(40))
    (vault / "Plugin.md").write_text(
        f"# Plugin\n\n{words} kanban boards [![downloads](https://img.shields.io/badge/downloads-12k-blue?style=flat)]"
        f"(https://github.com/example/kanban/releases) {words} then kanban again [![release](https://img.shields.io/"
        f"github/v/release/example/kanban)](https://github.com/example/kanban) {words}\n", encoding="utf-8")
    home = Home(Settings(home=tmp_path / "home"), embedder=WordEmbedder())
    with indexed(home, vault, "v") as engine:
        for tokens in (6, 8, 10, 12, 16):
            shown = engine.search(SearchRequest("kanban", mode="vault", project="v",
                                                snippet_tokens=tokens))["results"][0]["snippet"]
            assert "kanban" in shown
            assert not any(mark in shown for mark in ("](", "![", "http", "shields", "[", "]")), (tokens, shown)


def test_code_spans_and_autolinks_are_shown_as_written(tmp_path):
    """Issue 61, on pages written like tldr's and a plugin vault's: every tldr snippet read "More information: ."
    (the autolink dropped), `wc {{[-l|--lines]}}` lost its option as if a template field, "Add a `<table>` at the
    top" lost its tag; reading view shows all of them."""
    from indexer.config import Settings
    from indexer.home import Home
    from indexer.text.readable import display_text
    from support import WordEmbedder, indexed

    shown = display_text("Add a `<table>` at the top, then `~~strike~~` it")
    assert shown == "Add a <table> at the top, then ~~strike~~ it"
    shown = display_text("Website: <https://liamca.in> and [docs](https://x.y/docs)")
    assert shown == "Website: https://liamca.in and docs"  # an autolink's address, a link's text
    vault = tmp_path / "vault"
    (vault / "common").mkdir(parents=True)
    (vault / "common" / "wc.md").write_text(
        "# wc\n\n> Count lines, words, and bytes.\n> More information: <https://manned.org/wc>.\n\n"
        "- Count all lines in a file:\n\n`wc {{[-l|--lines]}} {{path/to/file}}`\n", encoding="utf-8")
    home = Home(Settings(home=tmp_path / "home"), embedder=WordEmbedder())
    with indexed(home, vault, "v") as engine:
        shown = [r["snippet"] for r in engine.search(SearchRequest("count lines", mode="keyword", project="v",
                                                                   group=False))["results"]]
        assert any("wc {{[-l|--lines]}} {{path/to/file}}" in s for s in shown), shown
        information = engine.search(SearchRequest("information", mode="keyword", project="v"))["results"]
        assert "More information: https://manned.org/wc." in information[0]["snippet"]


def test_a_frontmatter_block_that_is_not_valid_yaml_gives_no_rare_words(tmp_path):
    """Issue 61: link suggestions joined the 15 notes of a real vault whose frontmatter is not valid YAML by "rare
    words: true, aliases, publish": the block stays in the text keyword search reads, but it is no one's own words."""
    from indexer.config import Settings
    from indexer.home import Home
    from indexer.search.note_text import own_text
    from indexer.search.notes import resolve_note
    from support import WordEmbedder, indexed

    vault = tmp_path / "vault"
    vault.mkdir()
    broken = "---\naliases: [Garden\npublish: true\ncssclasses: wide\n---\n"
    topics = ["tomatoes", "compost", "sourdough", "bicycles", "tax returns", "chess openings"]
    for i, topic in enumerate(topics):
        head = broken if i < 3 else ""
        (vault / f"Note {i}.md").write_text(f"{head}# Note {i}\n\nA page about {topic} and nothing else.\n",
                                            encoding="utf-8")
    home = Home(Settings(home=tmp_path / "home"), embedder=WordEmbedder())
    with indexed(home, vault, "v") as engine:
        index = engine.index("v")
        text = own_text(index, resolve_note(index, "Note 0.md"), 10**6)
        assert "tomatoes" in text and "publish" not in text and "cssclasses" not in text
        assert len(text.split("\n")) == len((vault / "Note 0.md").read_text().split("\n"))  # lines kept in place
        found = engine.link_suggestions("Note 0.md", project="v")
        for r in found["close_in_meaning"]:
            assert not {"publish", "aliases", "cssclasses", "wide"} & set(r["reason"].lower().replace(",", " ").split())
        assert engine.search(SearchRequest("cssclasses", mode="keyword", project="v"))["results"]  # still found
