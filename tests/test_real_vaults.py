"""Whole real vaults through the engine: every file becomes a document, with the tags and links a reader sees."""
from __future__ import annotations

import json
import shutil

from support import corpus


def index_copy(home, tmp_path, name):
    root = tmp_path / name
    shutil.copytree(corpus(name), root)
    home.add_project(root, name)
    project = home.open_project(name)
    report = project.sync()
    return root, project, report


def row(project, rel_path):
    found = project.store.document_by_path(rel_path)
    assert found is not None, rel_path
    return found


def tags(project, rel_path):
    doc_id = row(project, rel_path)["document_id"]
    return sorted(r[0] for r in project.store.query("SELECT tag FROM tags WHERE document_id = ?", (doc_id,)))


def links(project, rel_path):
    doc_id = row(project, rel_path)["document_id"]
    rows = project.store.query("SELECT target, kind FROM links WHERE document_id = ?", (doc_id,))
    return {(r[0], r[1]) for r in rows}


def test_kepano_vault(home, tmp_path):
    root, project, report = index_copy(home, tmp_path, "kepano-obsidian")
    with project:
        files = [p for p in root.rglob("*") if p.is_file() and p.suffix in (".md", ".base")]
        assert report.added == len(files) == 133
        assert project.store.counts()["documents"] == 133

        evergreen = "Notes/Evergreen notes turn ideas into objects that you can manipulate.md"
        assert row(project, evergreen)["title"] == "Evergreen notes turn ideas into objects that you can manipulate"
        assert row(project, evergreen)["created"] == "2023-09-14"
        assert tags(project, evergreen) == ["0🌲"]
        wanted = {("Posts", "wikilink"), ("Clippings", "wikilink"), ("evergreen", "wikilink")}
        assert wanted <= links(project, evergreen)
        frontmatter = json.loads(row(project, evergreen)["frontmatter"])
        assert frontmatter["url"] == "https://stephango.com/evergreen-notes"

        book = "Templates/Book Template.md"
        # `created: {{date}}` is a template placeholder (not YAML): read without a warning, the placeholder left out.
        assert json.loads(row(project, book)["warnings"]) == []
        assert tags(project, book) == ["to-read"] and "created" not in json.loads(row(project, book)["frontmatter"])
        assert ("Books", "wikilink") in links(project, book)
        warned = project.store.query("SELECT rel_path FROM documents WHERE warnings != '[]'")
        assert [r[0] for r in warned] == []  # none of the vault's 133 files needs a look

        trip = "Notes/2023 Japan Trip.md"
        assert {("Kyoto", "wikilink"), ("Japan", "wikilink"), ("Trips", "wikilink")} <= links(project, trip)
        assert row(project, "Templates/Bases/Everything.base")["file_type"] == "base"


def test_logseq_vault(home, tmp_path):
    root, project, report = index_copy(home, tmp_path, "logseq-docs")
    with project:
        files = [p for p in root.rglob("*.md") if p.is_file()]
        assert report.added == len(files) == 314
        flashcards = "pages/Flashcards.md"
        # `tags:: #Academic` (a page property) plus the inline #card and #docs outside code spans.
        assert tags(project, flashcards) == ["academic", "card", "docs"]
        frontmatter = json.loads(row(project, flashcards)["frontmatter"])
        assert frontmatter["type"] == "Feature" and frontmatter["platforms"] == "All Platforms"
        assert {("Feature", "wikilink"), ("All Platforms", "wikilink"), ("Clozes", "wikilink"),
                ("../assets/sidebar-make-a-flashcard.png", "file")} <= links(project, flashcards)
        # `[[PKM]]` written inside a code span is an example, not a link.
        assert links(project, "pages/Aliases and external links.md") == set()
        # Logseq headings are bullets: the page is split at them.
        headings = {r[0] for r in project.store.query(
            "SELECT heading_path FROM chunks WHERE document_id = ?", (row(project, flashcards)["document_id"],))}
        assert any("Usage" in h for h in headings)
        assert project.store.counts()["failed"] == 0
