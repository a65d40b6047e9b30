"""Documents as the Files tab and the Document Info Panel show them: lists with tags, links both ways by one set
of rules (search/links.py), the same rules the Forge Graph and memory search use."""
from __future__ import annotations

import pytest


NOTES = {
    "x.md": "# X\n\nThe note everything points at.\n",
    "Projects/a.md": "# A\n\nSee [the x note](../x.md) for details.\n",
    "Projects/b.md": "---\nrelated_to: ['[[X]]']\n---\n# B\n\nRelated by frontmatter.\n",
    "Journal/c.md": "# C\n\nA wikilink: [[x]]. And one to nothing: [[Nowhere]].\n",
    "Journal/d.md": "# D\n\nMentions x in passing but links to [[A]].\n",
}


@pytest.fixture
def engine(make_engine, tmp_path):
    vault = tmp_path / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text)
    return make_engine(vault, embedder="words")


def doc_id(engine, path):
    return next(d["document_id"] for d in engine.documents("notes")["documents"] if d["path"] == path)


def test_a_relative_link_shows_both_ways(engine):
    a = engine.document(doc_id(engine, "Projects/a.md"), "notes")
    assert [(link["target"], link["path"]) for link in a["links"]] == [("../x.md", "x.md")]
    x = engine.document(doc_id(engine, "x.md"), "notes")
    # ../x.md from Projects/, related_to [[X]] and [[x]]: three notes name x, each by another rule; d does not.
    assert [d["path"] for d in x["backlinks"]] == ["Journal/c.md", "Projects/a.md", "Projects/b.md"]


def test_the_graph_draws_the_links_the_panel_lists(engine):
    graph = engine.graphs.graph("notes")
    path = {n["id"]: n["path"] for n in graph["nodes"]}
    links = {frozenset((path[e["source"]], path[e["target"]])) for e in graph["edges"] if e["kind"] == "link"}
    assert links == {frozenset(("Projects/a.md", "x.md")), frozenset(("Projects/b.md", "x.md")),
                     frozenset(("Journal/c.md", "x.md")), frozenset(("Journal/d.md", "Projects/a.md"))}


def test_a_link_to_nothing_is_listed_unresolved(engine):
    c = engine.document(doc_id(engine, "Journal/c.md"), "notes")
    assert {link["target"]: link["document_id"] is not None for link in c["links"]} == {"x": True, "Nowhere": False}


def test_lists_carry_each_documents_tags_in_one_answer(engine, tmp_path):
    (tmp_path / "vault" / "Journal" / "c.md").write_text("# C\n\n#garden #garden/beds [[x]]\n")
    engine.reindex("notes")
    listing = engine.documents("notes", folder="Journal")
    assert listing["total"] == 2
    assert {d["path"]: d["tags"] for d in listing["documents"]} == {
        "Journal/c.md": ["garden", "garden/beds"], "Journal/d.md": []}
    assert [d["path"] for d in engine.documents("notes", tag="garden")["documents"]] == ["Journal/c.md"]


def test_links_follow_the_index_after_every_change(engine, tmp_path):
    x = doc_id(engine, "x.md")
    assert "Journal/e.md" not in [d["path"] for d in engine.document(x, "notes")["backlinks"]]
    (tmp_path / "vault" / "Journal" / "e.md").write_text("# E\n\nNew today, links [[x]].\n")
    engine.reindex("notes")
    assert "Journal/e.md" in [d["path"] for d in engine.document(x, "notes")["backlinks"]]
    (tmp_path / "vault" / "x.md").unlink()  # renamed and retitled: the links now name a note that is gone
    (tmp_path / "vault" / "y.md").write_text("# Y\n\nThe note everything points at.\n")
    engine.reindex("notes")
    y = engine.document(doc_id(engine, "y.md"), "notes")
    assert y["backlinks"] == []
    e = engine.document(doc_id(engine, "Journal/e.md"), "notes")
    assert [(link["target"], link["document_id"]) for link in e["links"]] == [("x", None)]
