"""Obsidian's search syntax, typed from habit into any box: tag:, path:, file:, -word, OR, "phrase", and /regex/
refused with a sentence. Read by operators.py; every search mode and vault_search hear it (the real model)."""
from __future__ import annotations

import os

import pytest

from indexer.errors import InvalidQuery
from indexer.search.operators import read_operators
from support import indexed
from indexer import SearchRequest


def test_operators_are_read_out_of_the_words():
    ops = read_operators('tag:#moc path:"Daily Notes" file:Kanban meeting -fence "exact words"')
    assert ops.tags == ["moc"] and ops.paths == ["daily notes"] and ops.files == ["kanban"]
    assert ops.excluded == ["fence"] and ops.words == 'meeting "exact words"'
    assert read_operators("kanban OR dataview plugin").alternatives == ["kanban", "dataview plugin"]
    # Not operators: a hyphen inside a word, a negative number, OR at an end, a word ending in "tag:".
    assert read_operators("vault-cortex -3 degrees").words == "vault-cortex -3 degrees"
    assert read_operators("kanban OR").alternatives == []
    assert read_operators("mytag:x").words == "mytag:x"


def test_a_regular_expression_is_refused_with_what_to_type_instead():
    with pytest.raises(InvalidQuery, match="regular expression.*quoted phrase"):
        read_operators(r"/\d{4}-\d{2}/")


@pytest.fixture(scope="module")
def engine(tmp_path_factory, make_module_engine):
    base = tmp_path_factory.mktemp("operators")
    vault = base / "vault"
    (vault / "Plugins").mkdir(parents=True)
    (vault / "Daily").mkdir()
    (vault / "Plugins" / "Kanban.md").write_text(
        "---\ntags: [plugin, moc]\n---\n# Kanban\n\nKanban turns a note into a board of cards you drag between "
        "columns.\n", encoding="utf-8")
    (vault / "Plugins" / "Dataview.md").write_text(
        "---\ntags: [plugin]\n---\n# Dataview\n\nDataview treats your vault as a database you can query with "
        "tables and lists.\n", encoding="utf-8")
    (vault / "Daily" / "2024-05-02.md").write_text(
        "# 2024-05-02\n\nMeeting about the fence with the neighbours; the kanban board of chores is done.\n",
        encoding="utf-8")
    (vault / "Daily" / "2024-05-03.md").write_text(
        "# 2024-05-03\n\nMeeting with the plumber about the boiler.\n", encoding="utf-8")
    return make_module_engine(vault, project="ops")


def paths(answer: dict) -> list[str]:
    return list(dict.fromkeys(r.get("path") or r.get("path") for r in answer["results"]))


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "semantic"])
def test_each_operator_narrows_every_mode(engine, mode):
    def search(text):
        return paths(engine.search(SearchRequest(text, mode=mode, project="ops", limit=20)))

    assert set(search("kanban OR dataview")) >= {"Plugins/Kanban.md", "Plugins/Dataview.md"} or mode == "semantic"
    assert set(search("meeting -fence")) <= {"Daily/2024-05-03.md"}
    assert set(search("path:daily kanban board")) <= {"Daily/2024-05-02.md", "Daily/2024-05-03.md"}
    assert set(search("file:data query a database")) <= {"Plugins/Dataview.md"}
    assert set(search("tag:#moc board")) <= {"Plugins/Kanban.md"}


def test_or_finds_either_side_by_keyword_and_never_searches_the_word_or(engine):
    answer = engine.search(SearchRequest("kanban OR dataview", mode="keyword", project="ops", limit=20))
    assert set(paths(answer)) == {"Plugins/Kanban.md", "Plugins/Dataview.md", "Daily/2024-05-02.md"}
    hybrid = engine.search(SearchRequest("kanban OR dataview", project="ops", limit=20))
    assert {"Plugins/Kanban.md", "Plugins/Dataview.md"} <= set(paths(hybrid)[:3])


def test_excluded_words_and_paths_also_narrow_vault_search(engine):
    answer = engine.search(SearchRequest("meeting -fence", mode="vault", project="ops"))
    assert paths(answer) == ["Daily/2024-05-03.md"]
    assert paths(engine.search(SearchRequest("path:plugins cards", mode="vault",
                                             project="ops")))[0] == "Plugins/Kanban.md"


def test_operators_alone_list_the_notes_they_allow(engine):
    answer = engine.search(SearchRequest("tag:#plugin", project="ops", limit=20))
    assert set(paths(answer)) == {"Plugins/Kanban.md", "Plugins/Dataview.md"}


def test_a_regex_typed_in_a_search_box_gets_the_sentence(engine):
    with pytest.raises(InvalidQuery, match="regular expression"):
        engine.search(SearchRequest("/kan.an/", project="ops"))


def test_a_partly_typed_word_finds_the_title_it_starts_first(tmp_path, real_embedder):
    """Tried as a new user on a real plugin vault: in the Power Strip `datav` and `templ` missed Dataview and
    Templater, and `kanb` put Kanban 4th. A title that starts with what was typed comes first, the shortest first,
    as in Obsidian's quick switcher."""
    from indexer.config import Settings
    from indexer.home import Home

    vault = tmp_path / "vault"
    vault.mkdir()
    notes = {
        "Kanban.md": "# Kanban\n\nBoards of cards for any note.\n",
        "Kanban plugin roundup 2021.md": "# Kanban plugin roundup 2021\n\nSix kanban plugins compared.\n",
        "Why I stopped using kanban.md": "# Why I stopped using kanban\n\nThe kanban board became a chore.\n",
        "Weekly review.md": "# Weekly review\n\nMove the kanban cards, review Dataview tables and Templater scripts.\n",
        "Dataview.md": "# Dataview\n\nQuery your vault like a database.\n",
        "Templater.md": "# Templater\n\nTemplates with scripts and dates.\n",
    }
    for name, text in notes.items():
        (vault / name).write_text(text, encoding="utf-8")
    with indexed(Home(Settings(home=tmp_path / "home"), embedder=real_embedder), vault, "v") as engine:
        for typed, first in (("kanb", "Kanban.md"), ("datav", "Dataview.md"), ("templ", "Templater.md"),
                             ("Kanban pl", "Kanban plugin roundup 2021.md")):
            for mode in ("keyword", "hybrid"):
                answer = engine.search(SearchRequest(typed, mode=mode, project="v", limit=12, group=True))
                assert "corrected" not in answer, (typed, answer.get("corrected"))
                assert paths(answer)[0] == first, (typed, mode, paths(answer))


def test_file_alone_lists_the_note_of_that_name_first_with_its_text(tmp_path, make_engine):
    # On a real vault `file:kanban` listed its notes in path order (a clone gives every file one time) with blank
    # snippets: "Kanban" came after "Advanced kanban tips" and "Board setup (kanban)".
    vault = tmp_path / "vault"
    vault.mkdir()
    for name in ("Advanced kanban tips", "Board setup kanban", "Kanban", "Kanban boards compared"):
        (vault / f"{name}.md").write_text(f"---\ntags: [x]\n---\n\nWhat {name.lower()} holds: cards and columns.\n",
                                          encoding="utf-8")
    for path in vault.iterdir():
        os.utime(path, (1_700_000_000, 1_700_000_000))
    engine = make_engine(vault, project="files", embedder="none")
    rows = engine.search(SearchRequest("file:kanban", project="files", limit=10))["results"]
    assert [r["path"] for r in rows][:2] == ["Kanban.md", "Kanban boards compared.md"]
    assert all(r["snippet"].startswith("What ") for r in rows)


def test_minus_word_leaves_out_the_notes_that_say_the_word_not_those_whose_footer_holds_it_inside_another(tmp_path):
    """Issue 61, on a vault built like a real one (every note ends with a 'This note in GitHub' footer): `sync -git`
    returned one note, because exclusion matched 'git' inside 'GitHub' and in the footer every note carries; and
    when a `-word` does leave out most notes, the answer says so."""
    from indexer.config import Settings
    from indexer.home import Home
    from support import WordEmbedder

    vault = tmp_path / "vault"
    vault.mkdir()
    footer = "\n\nThis note in GitHub: [edit it there](https://github.com/example/vault/blob/main/{name}.md)\n"
    notes = {
        "Obsidian Git": "Obsidian Git lets you sync your vault with a git repository on a timer.",
        "Obsidian Sync": "Obsidian Sync keeps the vault on every device in sync, encrypted end to end.",
        "Syncthing": "Syncthing is one way to sync a vault between computers without a cloud.",
        "Remotely Save": "Remotely Save can sync a vault to S3 or Dropbox.",
        "Daily notes": "A daily note for each day, made from a template.",
        "Kanban": "Kanban boards of cards, dragged between columns.",
    }
    for name, text in notes.items():
        (vault / f"{name}.md").write_text(f"# {name}\n\n{text}{footer.format(name=name)}", encoding="utf-8")
    home = Home(Settings(home=tmp_path / "home"), embedder=WordEmbedder())
    with indexed(home, vault, "v") as engine:
        found = paths(engine.search(SearchRequest("sync -git", mode="keyword", project="v", limit=20)))
        assert set(found) == {"Obsidian Sync.md", "Syncthing.md", "Remotely Save.md"}, found
        answer = engine.search(SearchRequest("sync -git", mode="keyword", project="v"))
        assert "notice" not in answer  # one note of six left out: nothing to say
        answer = engine.search(SearchRequest("sync -vault", mode="keyword", project="v"))
        assert answer["notice"].startswith("-vault left out 4 of 6 notes in v"), answer.get("notice")


def test_rows_listed_by_an_operator_say_what_listed_them_and_cut_their_snippet_at_a_word(tmp_path):
    """Issue 61: `path:` and `file:` rows were badged TAG, with snippets cut mid-word at 160 characters."""
    from indexer.config import Settings
    from indexer.home import Home
    from support import WordEmbedder

    vault = tmp_path / "vault"
    (vault / "Daily").mkdir(parents=True)
    (vault / "Plugins").mkdir()
    long = " ".join(["Meeting with the neighbours about the fence and the hedge along the lane"] * 4)
    (vault / "Daily" / "2024-05-02.md").write_text(f"# 2024-05-02\n\n{long}\n", encoding="utf-8")
    (vault / "Plugins" / "Kanban.md").write_text("---\ntags: [plugin]\n---\n# Kanban\n\nBoards of cards.\n",
                                                 encoding="utf-8")
    with indexed(Home(Settings(home=tmp_path / "home"), embedder=WordEmbedder()), vault, "v") as engine:
        def rows(text):
            return engine.search(SearchRequest(text, project="v"))["results"]

        assert {r["search_type"] for r in rows("path:Daily")} == {"path"}
        assert {r["search_type"] for r in rows("file:kanban")} == {"file"}
        assert {r["search_type"] for r in rows("tag:#plugin")} == {"tag"}
        shown = rows("path:Daily")[0]["snippet"]
        assert len(shown) <= 161 and shown.endswith("…") and shown[:-1].split()[-1] in long.split(), shown
