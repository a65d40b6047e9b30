"""Extractors: every supported type, each malformed case, and the real Obsidian and Logseq vaults."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from pypdf import PdfReader

from indexer.errors import ExtractionError
from indexer.ingest.extract import EXTRACTORS, file_type_for, parse_file
from indexer.ingest.parsed import Link

CORPORA = Path(__file__).resolve().parents[1].parent / "shared" / "corpora"


def parse(name: str, content: str | bytes):
    data = content.encode("utf-8") if isinstance(content, str) else content
    return parse_file(Path(name), data)


def outline(doc):
    return [(s.heading_path, s.start_line, s.end_line) for s in doc.sections]


def targets(doc, kind):
    return [link.target for link in doc.links if link.kind == kind]


# --- the table --------------------------------------------------------------------------------------

def test_file_type_for_maps_extensions_case_insensitively():
    assert file_type_for(Path("Notes/Plan.MD")) == "md"
    assert file_type_for(Path("a.markdown")) == "md"
    assert file_type_for(Path("page.htm")) == "html"
    assert file_type_for(Path("conf.yml")) == "yaml"
    assert file_type_for(Path("Everything.base")) == "base"
    assert file_type_for(Path("board.canvas")) == "canvas"
    assert file_type_for(Path("report.docx")) is None
    assert file_type_for(Path("Makefile")) is None
    assert all(ext == ext.lower() and ext.startswith(".") for ext in EXTRACTORS)


def test_unsupported_extension_raises_a_sentence():
    with pytest.raises(ExtractionError, match="'.docx'"):
        parse("report.docx", b"PK")


# --- markdown ---------------------------------------------------------------------------------------

NOTE = """\
---
title: Trip planning
tags: [Travel, "#Japan/Kyoto/"]
created: 2023-09-12
related_to: ["[[Budget|money]]", Packing list]
categories: ["[[Trips]]"]
---
Intro line with #idea and #123 and (#paren) but not C#sharp.

# Setup
See [[Kyoto#Temples|temples]] and ![[map.png]] and [local](docs/My%20Plan.md#part).
Skip [web](https://example.com/#nottag), [mail](mailto:a@b.c), [anchor](#setup) and `#code-span`.
Visit https://example.com/page#fragment today.

## Linux
```bash
# not a heading #not-a-tag [[NotALink]]
```
Body #Travel again.

# Notes
"""


def test_markdown_frontmatter_title_tags_links_created():
    doc = parse("trip.md", NOTE)
    assert doc.file_type == "md"
    assert doc.title == "Trip planning"
    assert doc.tags == ["travel", "japan/kyoto", "idea", "paren"]
    assert doc.created == "2023-09-12"
    assert doc.frontmatter["created"] == "2023-09-12"
    json.dumps(doc.frontmatter)  # stored as JSON
    assert targets(doc, "related_to") == ["Budget", "Packing list"]
    assert targets(doc, "wikilink") == ["Trips", "Kyoto", "map.png"]
    assert targets(doc, "file") == ["docs/My Plan.md"]
    assert doc.warnings == []


def test_markdown_sections_follow_headings_with_original_line_numbers():
    doc = parse("trip.md", NOTE)
    assert outline(doc) == [([], 8, 8), (["Setup"], 10, 13), (["Setup", "Linux"], 15, 19), (["Notes"], 21, 21)]
    assert doc.sections[1].text.startswith("# Setup\nSee [[Kyoto")
    assert "# not a heading" in doc.sections[2].text  # code stays in its section, not a heading
    assert all("title: Trip planning" not in s.text for s in doc.sections)


def test_markdown_title_is_the_file_name_unless_the_properties_set_one():
    # As Obsidian titles a note: a real vault's stubs whose only heading was a shared footer's were all titled by it.
    doc = parse("a.md", "\n# Real Title\ntext\n## Sub\n")
    assert doc.title == "a" and doc.sections[0].heading_path == ["Real Title"]  # the first heading stays a heading
    assert parse("Stub.md", "# This note in GitHub\n\n[Edit](https://x/Stub.md)\n").title == "Stub"
    assert parse("My Note.md", "just text\n").title == "My Note"
    assert parse("a.md", "---\ntitle: Set Here\n---\n# Heading\n").title == "Set Here"


def test_markdown_tag_string_and_tag_key():
    assert parse("a.md", "---\ntags: alpha, Beta gamma\n---\nx\n").tags == ["alpha", "beta", "gamma"]
    assert parse("a.md", "---\ntag: solo\n---\nx\n").tags == ["solo"]


def test_tags_are_what_obsidian_counts_as_tags():
    """Measured on a public plugin vault: 35 of its 80 'tags' were colours from HTML attributes and badge styles."""
    text = ("# Plugin\n\n<span style=\"color: #573E7A\">Styled</span> and <div\n  style=\"background: #FFF0AA\"\n"
            "  class=\"note\">x</div>\n"
            "[![badge](https://img.shields.io/badge/x-y-blue?color=#C0FFEE)](https://example.com/#frag)\n"
            "See https://example.com/page#section and `#not-a-tag` and issue #123.\n\n"
            "```\n#fenced\n```\n\nReal tags: #kanban #project/alpha (#paren) #2024-plan\n")
    assert parse("Plugin.md", text).tags == ["kanban", "project/alpha", "paren", "2024-plan"]


def test_no_tags_inside_an_html_block():
    """Measured on a real theme vault: 28 hex colours written as text in HTML table cells were counted as tags.
    Obsidian reads no markdown inside an HTML block (from a block-level tag to the next blank line)."""
    text = ("# Colours\n\n<table>\n<tr><td>--background-primary-alt: #1a1a1a</td></tr>\n"
            "  <td>#theme-dark</td>\n</table>\n\nUsed in #themes, also <span>#inline</span>.\n\n"
            "<div class=\"callout\">\n#insidediv\n</div>\n\n#after\n"
            # A table laid out with blank lines: its deeper cells are indented code (11 colours left on a real vault).
            "<table>\n  <tr>\n\n      <td>#2b2b2b</td>\n\n      <td>\n        #3c3c3c\n      </td>\n  </tr>\n"
            "</table>\n")
    assert parse("Colours.md", text).tags == ["themes", "inline", "after"]


def test_markdown_created_accepts_iso_strings_and_date_key_only():
    assert parse("a.md", "---\ncreated: '2023-09-12T10:00'\n---\n").created == "2023-09-12T10:00:00"
    assert parse("a.md", "---\ndate: 2021-01-02 03:04:05\n---\n").created == "2021-01-02T03:04:05"
    assert parse("a.md", "---\ncreated: someday\n---\n").created is None
    assert parse("a.md", "no frontmatter").created is None


def test_a_template_placeholder_in_frontmatter_is_not_a_warning():
    # kepano's Templates folder: `created: {{date}}` is not valid YAML, but it is normal in a real vault.
    doc = parse("Book Template.md", "---\ncategories:\n  - \"[[Books]]\"\ncreated: {{date}}\ntags:\n  - {{tag}}\n"
                                    "  - books\nlast: <% tp.date.now() %>\n---\nBody\n")
    assert doc.warnings == []
    assert doc.frontmatter == {"categories": ["[[Books]]"], "tags": ["books"]}  # the placeholders are left out
    assert doc.created is None and doc.tags == ["books"]
    assert targets(doc, "wikilink") == ["Books"]
    assert "Body" in doc.sections[0].text and "created: {{date}}" in doc.sections[0].text


def test_markdown_invalid_yaml_frontmatter_is_indexed_as_text():
    doc = parse("a.md", "---\ncategories:\n  - \"[[Books]]\"\ntitle: a: b\n---\nBody\n")
    assert doc.warnings == [
        "Frontmatter is not valid YAML (line 4): mapping values are not allowed here; it was indexed as text."
    ]
    assert doc.frontmatter == {}
    assert outline(doc) == [([], 1, 6)]
    assert "title: a: b" in doc.sections[0].text
    assert targets(doc, "wikilink") == ["Books"]


def test_markdown_frontmatter_that_is_not_a_mapping_stays_text_with_a_warning():
    doc = parse("a.md", "---\n- one\n- two\n---\nBody\n")
    assert doc.frontmatter == {}
    assert doc.warnings == ["Frontmatter is a list, not a mapping of keys to values; it was indexed as text."]
    assert outline(doc) == [([], 1, 5)]


def test_markdown_inline_edge_cases():
    doc = parse("a.md", "| [[Note\\|alias]] | #[[Big Idea]] |\n```js``` #after\n## Done ##\nsee [[#Local heading]]\n")
    assert targets(doc, "wikilink") == ["Note", "Big Idea"]
    assert doc.tags == ["big idea", "after"]  # a one-line ```js``` is a code span, not a fence
    assert outline(doc) == [([], 1, 2), (["Done"], 3, 4)]


def test_markdown_frontmatter_dates_become_iso_strings():
    doc = parse("a.md", "---\npublished: 2022-09-16\nseen: [2023-01-01, 5]\nnested: {at: 2023-01-02T03:04:05}\n---\n")
    assert doc.frontmatter == {"published": "2022-09-16", "seen": ["2023-01-01", 5],
                               "nested": {"at": "2023-01-02T03:04:05"}}
    assert doc.sections == []


def test_logseq_page_properties_become_frontmatter_tags_and_links():
    page = ("title:: Flash cards\ntags:: #Academic, [[Spaced Repetition]]\nalias:: cards\ntype:: [[Feature]]\n\n"
            "- ## Usage\n\t- ### Create\n\t\tuse `#card`\n- ## Notes\n")
    doc = parse("flashcards.md", page)
    assert doc.title == "Flash cards"
    assert doc.frontmatter == {"title": "Flash cards", "tags": ["Academic", "Spaced Repetition"], "alias": ["cards"],
                               "type": "Feature"}
    assert doc.tags == ["academic", "spaced repetition"]
    assert targets(doc, "wikilink") == ["Spaced Repetition", "Feature"]
    assert outline(doc) == [(["Usage"], 6, 6), (["Usage", "Create"], 7, 8), (["Notes"], 9, 9)]


def test_markdown_unclosed_fence_and_tilde_fence_hide_headings():
    doc = parse("a.md", "# A\n~~~\n# in code\n~~~\n# B\n```\n# still code\n")
    assert outline(doc) == [(["A"], 1, 4), (["B"], 5, 7)]


def test_markdown_bom_and_crlf():
    doc = parse("a.md", b"\xef\xbb\xbf---\r\ntitle: T\r\n---\r\n# H\r\nline\r\n")
    assert doc.title == "T"
    assert doc.sections[0].text == "# H\nline"
    assert outline(doc) == [(["H"], 4, 5)]


def test_invalid_utf8_is_replaced_with_a_warning():
    doc = parse("a.md", b"caf\xe9 au lait\n")
    assert doc.warnings == ["File is not valid UTF-8; undecodable bytes were replaced."]
    assert doc.sections[0].text == "caf\ufffd au lait"


@pytest.mark.parametrize("name", ["notes.txt", "notes.md", "data.json"])
def test_binary_content_raises(name):
    with pytest.raises(ExtractionError, match="binary"):
        parse(name, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")


def test_utf16_with_bom_is_text():
    doc = parse("a.txt", "hello world\n".encode("utf-16"))
    assert doc.sections[0].text == "hello world"


# --- plain text -------------------------------------------------------------------------------------

def test_large_text_is_split_into_bounded_sections_with_exact_line_ranges():
    lines = [f"line {n} " + "x" * 60 for n in range(1, 3001)]
    doc = parse("big.log", "\n".join(lines) + "\n")
    assert doc.file_type == "log" and doc.title == "big"
    assert len(doc.sections) > 50
    assert all(len(s.text) <= 2000 for s in doc.sections)
    assert doc.sections[0].start_line == 1 and doc.sections[-1].end_line == 3000
    for before, after in zip(doc.sections, doc.sections[1:]):
        assert after.start_line == before.end_line + 1
    for section in doc.sections:
        assert section.text.split("\n")[0].startswith(f"line {section.start_line} ")
        assert section.text.split("\n")[-1].startswith(f"line {section.end_line} ")


def test_one_enormous_line_is_cut_into_pieces_on_that_line():
    doc = parse("one.txt", "a\n" + "y" * 5000 + "\nz\n")
    assert [(len(s.text), s.start_line, s.end_line) for s in doc.sections] == [
        (1, 1, 1), (2000, 2, 2), (2000, 2, 2), (1002, 2, 3)]
    assert "".join(s.text for s in doc.sections[1:]) == "y" * 5000 + "\nz"


def test_text_sections_break_at_blank_lines_and_skip_blank_runs():
    doc = parse("p.txt", "\n\nfirst para\n\n\n\nsecond para\n\n")
    assert [(s.text, s.start_line, s.end_line) for s in doc.sections] == [("first para\n\n\n\nsecond para", 3, 7)]


# --- json and chat exports --------------------------------------------------------------------------

def test_plain_json_is_indexed_as_text():
    doc = parse("settings.json", '{\n  "theme": "dark",\n  "fontSize": 14\n}\n')
    assert doc.file_type == "json"
    assert '"theme": "dark"' in doc.text
    assert outline(doc) == [([], 1, 4)]


def test_chat_export_list_becomes_one_section_per_message():
    chat = [{"role": "user", "content": "How do I bake bread?"},
            {"role": "assistant", "content": [{"type": "text", "text": "Mix flour and water."}]},
            {"role": "", "content": "Thanks"}]
    doc = parse("chat.json", json.dumps(chat, indent=2))
    assert doc.file_type == "conversation"
    assert [(s.heading_path, s.text) for s in doc.sections] == [
        (["user"], "How do I bake bread?"), (["assistant"], "Mix flour and water."), (["user"], "Thanks")]
    assert [s.start_line for s in doc.sections] == [3, 7, 16]
    assert doc.sections[0].end_line == 6


def test_chat_export_object_with_messages_uses_its_title():
    doc = parse("c.json", json.dumps({"title": "Bread", "messages": [{"role": "system", "content": "Be brief."}]}))
    assert (doc.file_type, doc.title, doc.sections[0].heading_path) == ("conversation", "Bread", ["system"])


def test_list_of_objects_without_roles_is_plain_json():
    assert parse("c.json", '[{"name": "x", "content": "y"}]').file_type == "json"


def test_invalid_json_is_indexed_as_plain_text_with_a_warning():
    doc = parse("broken.json", '{\n  "a": 1,\n  "b": \n}\n')
    assert doc.file_type == "json"
    assert doc.warnings == ["File is not valid JSON (line 4, column 1): Expecting value; it was indexed as plain text."]
    assert '"a": 1' in doc.text


# --- csv --------------------------------------------------------------------------------------------

def test_csv_rows_become_column_value_lines():
    doc = parse("people.csv", 'name,city,note\nAlice,Paris,\nBob,"New\nYork","likes, commas"\n')
    assert doc.file_type == "csv"
    assert doc.sections[0].text == ("name, city, note\nname: Alice; city: Paris\nname: Bob; city: New\n"
                                    "York; note: likes, commas")
    assert outline(doc) == [([], 1, 4)]
    assert doc.warnings == []


def test_csv_semicolons_are_sniffed():
    assert "name: Ann; age: 30" in parse("p.csv", "name;age\nAnn;30\nBo;4\n").text


def test_csv_bad_quoting_keeps_raw_rows_with_a_warning():
    doc = parse("bad.csv", 'a,b\n1,"x"y\n2,3\n')
    assert doc.warnings[0].startswith('1 row(s) are not valid CSV (first at line 2')
    assert doc.text == 'a, b\n1,"x"y\na: 2; b: 3'


def test_csv_unclosed_quote_keeps_the_rest_of_the_file_as_text():
    doc = parse("bad.csv", 'a,b\n1,"open\n2,3\n4,5\n')
    assert "not valid CSV" in doc.warnings[0]
    assert doc.text.endswith('1,"open\n2,3\n4,5')


def test_large_csv_sections_are_bounded():
    rows = "\n".join(f"{n},item number {n}" for n in range(2000))
    doc = parse("big.csv", "id,label\n" + rows + "\n")
    assert len(doc.sections) > 10 and all(len(s.text) <= 2000 for s in doc.sections)
    assert doc.sections[-1].end_line == 2001 and doc.sections[-1].text.endswith("id: 1999; label: item number 1999")


# --- yaml, xml, html --------------------------------------------------------------------------------

def test_yaml_and_base_are_indexed_as_text():
    base = "views:\n  - type: table\n    name: Reading list\n"
    doc = parse("Books.base", base)
    assert (doc.file_type, doc.title, doc.text, doc.warnings) == ("base", "Books", base.rstrip("\n"), [])
    assert parse("c.yml", "a: 1\n").file_type == "yaml"


def test_invalid_yaml_warns_and_is_still_indexed():
    doc = parse("c.yaml", "a: [1, 2\nb: 3\n")
    assert doc.warnings[0].startswith("File is not valid YAML (line 2)")
    assert "b: 3" in doc.text


def test_xml_text_content_with_lines():
    doc = parse("feed.xml", '<?xml version="1.0"?>\n<rss>\n  <title>Tide &amp; moon</title>\n'
                            '  <item>Low tide at <b>6</b></item>\n</rss>\n')
    assert doc.file_type == "xml"
    assert doc.sections[0].text == "Tide & moon\nLow tide at 6"
    assert outline(doc) == [([], 3, 4)]
    doc = parse("multi.xml", "<r>\n<p>first\nsecond</p><q>third</q>\n</r>")
    assert [(s.text, s.start_line, s.end_line) for s in doc.sections] == [("first\nsecond third", 2, 3)]


def test_broken_xml_strips_tags_with_a_warning():
    doc = parse("bad.xml", "<root>\n  <a>alpha</b>\n</root>\n")
    assert doc.warnings == ["File is not valid XML (line 2): mismatched tag; its tags were stripped instead."]
    assert doc.text.strip() == "alpha"


def test_html_visible_text_and_title():
    page = ("<html><head><title>Recipes</title><style>body {color: red}</style></head>\n<body>\n"
            "<h1>Bread</h1><p>Mix <b>flour</b>and water.</p>\n<script>var secret = 1;</script>\n<p>Bake.</p>\n"
            "</body></html>\n")
    doc = parse("r.html", page)
    assert doc.file_type == "html" and doc.title == "Recipes"
    assert doc.text == "Bread Mix flourand water.\nBake."
    assert outline(doc) == [([], 3, 5)]


def test_html_title_falls_back_to_h1_then_file_name():
    assert parse("r.htm", "<h1>Soup <em>of</em> day</h1><p>x</p>").title == "Soup of day"
    assert parse("r.htm", "<p>x</p>").title == "r"


# --- pdf --------------------------------------------------------------------------------------------

def make_pdf(pages: list[str], broken_page: int | None = None) -> bytes:
    """Write a minimal PDF by hand: one Helvetica text line per page; broken_page gets an unknown filter."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>",
               f"<< /Type /Pages /Kids [{' '.join(f'{4 + 2 * i} 0 R' for i in range(len(pages)))}] "
               f"/Count {len(pages)} >>",
               "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    for index, text in enumerate(pages, start=1):
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET" if text else ""
        extra = " /Filter /Bogus" if index == broken_page else ""
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                       f"/Resources << /Font << /F1 3 0 R >> >> /Contents {3 + 2 * index} 0 R >>")
        objects.append(f"<< /Length {len(stream)}{extra} >>\nstream\n{stream}\nendstream")
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{offset:010d} 00000 n \n" for offset in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return out


def test_handmade_pdf_is_readable_by_pypdf():
    reader = PdfReader(io.BytesIO(make_pdf(["Tidal pools", "Moon phases"])))
    assert [page.extract_text() for page in reader.pages] == ["Tidal pools", "Moon phases"]


def test_pdf_one_section_per_page_skipping_empty_pages():
    doc = parse("Tides.pdf", make_pdf(["Tidal pools at dawn", "", "Moon phases"]))
    assert doc.file_type == "pdf" and doc.title == "Tides"
    assert [(s.heading_path, s.text, s.start_line, s.end_line) for s in doc.sections] == [
        (["Page 1"], "Tidal pools at dawn", 1, 1), (["Page 3"], "Moon phases", 3, 3)]
    assert doc.warnings == []


def test_pdf_page_that_fails_is_skipped_with_a_warning():
    doc = parse("t.pdf", make_pdf(["One", "Two", "Three"], broken_page=2))
    assert [s.text for s in doc.sections] == ["One", "Three"]
    assert len(doc.warnings) == 1 and doc.warnings[0].startswith("Page 2 could not be read")


def test_pdf_without_text_layer_has_no_sections_and_a_warning():
    doc = parse("scan.pdf", make_pdf(["", ""]))
    assert doc.sections == []
    assert doc.warnings[0].startswith("PDF has no text layer")


def test_broken_pdf_raises():
    with pytest.raises(ExtractionError, match="PDF could not be opened"):
        parse("broken.pdf", b"%PDF-1.4\nthis is not really a pdf")


# --- canvas -----------------------------------------------------------------------------------------

CANVAS = {
    "nodes": [
        {"id": "a1", "type": "text", "text": "# Plan\nRead [[Out of Control]] #books", "x": 0, "y": 0},
        {"id": "b2", "type": "file", "file": "Notes/Kyoto.md", "x": 10, "y": 0},
        {"id": "c3", "type": "link", "url": "https://stephango.com", "x": 20, "y": 0},
        {"id": "d4", "type": "group", "label": "Ideas", "x": 30, "y": 0},
        {"id": "e5", "type": "text", "text": "Second card `#nottag`", "x": 40, "y": 0},
    ],
    "edges": [],
}


def test_canvas_text_cards_file_cards_and_link_cards():
    text = '{\n\t"nodes":[\n' + ",\n".join("\t\t" + json.dumps(n)
                                           for n in CANVAS["nodes"]) + '\n\t],\n\t"edges":[]\n}\n'
    doc = parse("Board.canvas", text)
    assert doc.file_type == "canvas" and doc.title == "Board"
    assert [(s.text, s.start_line) for s in doc.sections] == [
        ("# Plan\nRead [[Out of Control]] #books", 3), ("https://stephango.com", 5), ("Second card `#nottag`", 7)]
    assert doc.tags == ["books"]
    assert doc.links == [Link("Out of Control", "wikilink"), Link("Notes/Kyoto.md", "file")]


def test_invalid_canvas_is_indexed_as_text():
    doc = parse("b.canvas", '{"nodes": [')
    assert doc.file_type == "canvas" and "not valid JSON" in doc.warnings[0]


# --- the real vaults --------------------------------------------------------------------------------

def vault(name: str) -> Path:
    root = CORPORA / name
    if not root.is_dir():
        pytest.skip(f"real corpus {root} is not present (see shared/corpora/README.md)")
    return root


def parse_real(root: Path, relative: str):
    path = root / relative
    return parse_file(path, path.read_bytes())


@pytest.mark.parametrize("name", ["kepano-obsidian", "logseq-docs"])
def test_every_real_note_parses_into_well_formed_sections(name):
    root = vault(name)
    paths = sorted(p for p in root.rglob("*") if file_type_for(p) in ("md", "base"))
    assert len(paths) > 100
    for path in paths:
        doc = parse_file(path, path.read_bytes())
        line_count = path.read_text(encoding="utf-8").count("\n") + 1
        json.dumps(doc.frontmatter)
        for section in doc.sections:
            assert 1 <= section.start_line <= section.end_line <= line_count, path
            assert section.text.strip(), path


def test_kepano_evergreen_note():
    doc = parse_real(vault("kepano-obsidian"),
                     "Notes/Evergreen notes turn ideas into objects that you can manipulate.md")
    assert doc.title == "Evergreen notes turn ideas into objects that you can manipulate"
    assert doc.tags == ["0🌲"]
    assert doc.created == "2023-09-14"
    assert doc.frontmatter["published"] == "2022-09-16"
    assert targets(doc, "wikilink")[:6] == ["Posts", "Clippings", "Steph Ango", "Evergreen", "Published", "evergreen"]
    assert "Creativity is combinatory uniqueness" in targets(doc, "wikilink")
    assert outline(doc) == [([], 17, 38)]
    assert doc.warnings == []


def test_kepano_person_note_with_embeds_and_late_h1():
    doc = parse_real(vault("kepano-obsidian"), "References/Kevin Kelly.md")
    assert doc.title == "Kevin Kelly"
    assert doc.created == "2023-09-12"
    assert targets(doc, "wikilink") == ["People", "Authors", "Books.base", "Clippings.base", "Podcast episodes.base"]
    assert outline(doc) == [(["Books"], 8, 10), (["Clippings"], 12, 14), (["Podcast episodes"], 16, 18)]


def test_kepano_meeting_created_comes_from_date():
    doc = parse_real(vault("kepano-obsidian"), "Notes/2023-09-12 Meeting with Steph.md")
    assert doc.created == "2023-09-12"
    assert targets(doc, "wikilink") == ["Meetings", "Obsidian", "Steph Ango", "Emergence", "Out of Control"]
    assert doc.frontmatter["loc"] == ["Remote"]


def test_kepano_template_with_date_placeholder_is_read_without_a_warning():
    doc = parse_real(vault("kepano-obsidian"), "Templates/Book Template.md")
    assert doc.warnings == []
    assert doc.title == "Book Template" and doc.tags == ["to-read"]
    assert doc.frontmatter["categories"] == ["[[Books]]"] and "created" not in doc.frontmatter
    assert "created: {{date}}" in doc.sections[0].text  # a template's fields stay searchable as its text
    assert targets(doc, "wikilink") == ["Books"]


def test_no_kepano_template_warns_about_its_placeholders():
    root = vault("kepano-obsidian")
    warned = {p.name: parse_real(root, str(p.relative_to(root))).warnings for p in (root / "Templates").glob("*.md")}
    assert len(warned) > 20 and not {name: w for name, w in warned.items() if w}


def test_logseq_flashcards_page():
    doc = parse_real(vault("logseq-docs"), "pages/Flashcards.md")
    assert doc.title == "Flashcards"
    assert doc.frontmatter["type"] == "Feature" and doc.frontmatter["tags"] == ["Academic"]
    assert doc.tags == ["academic", "card", "docs"]  # `#card` in code spans is not a tag; '- ... #card' is
    wikilinks = targets(doc, "wikilink")
    assert wikilinks[:2] == ["Feature", "All Platforms"] and "Left sidebar" in wikilinks and "card" not in wikilinks
    assert outline(doc)[:3] == [(["Usage"], 6, 21), (["Functionality"], 22, 22), (["Functionality",
                                                                                   'What\'s a "card"?'], 23, 40)]


def test_logseq_titles_from_properties_and_yaml():
    root = vault("logseq-docs")
    assert parse_real(root, "pages/New to Logseq%3F.md").title == "New to Logseq?"
    assert parse_real(root, "journals/2020_09_14.md").title == "Sep 14th, 2020"
    assert parse_real(root, "pages/Community.md").title == "Community"  # '- # Index' is a block, not the title


def test_a_stray_nul_in_a_csv_is_dropped_with_a_warning_not_called_binary():
    rows = "".join(f"{i},item {i},ok\n" for i in range(1000)).encode()
    early = parse("t.csv", b"id,name,state\n1,first\x00,ok\n" + rows)
    assert "NUL byte" in early.warnings[0] and "\x00" not in "".join(s.text for s in early.sections)
    late = parse("t.csv", rows + b"1001,late\x00,ok\n")  # past the first 8 KB
    assert "\x00" not in "".join(s.text for s in late.sections) and "late" in late.sections[-1].text


def test_a_canvas_of_the_wrong_shape_says_so():
    doc = parse("board.canvas", b'{"nodes": [{"id": "a", "type": "text", "text": 5}, 7]}')
    assert any("not text, file, link or group cards" in w for w in doc.warnings)
    assert doc.sections  # indexed as plain text instead of nothing
