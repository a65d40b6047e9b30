"""The search window through Flask's test client: every route as a full page and as an htmx partial."""
from __future__ import annotations

import html
import re

import pytest

from flask import template_rendered

from indexer.content.docs import USER_DOCS_NAME
from webapp import create_app
from support import app_client
from indexer import RelatedRequest, SearchRequest

BASE = "http://127.0.0.1:8765"
HX = {"HX-Request": "true"}


@pytest.fixture
def engine(make_engine, vault):
    return make_engine(vault, user_docs=True)


@pytest.fixture
def app(engine):
    return create_app({"TESTING": True, "ENGINE": engine, "SKMEMORY_PORT": 8765})


@pytest.fixture
def client(app):
    return app_client(app)


@pytest.fixture
def rendered(app):
    """The names of the templates rendered during the test, in order."""
    names: list[str] = []

    def record(sender, template, context, **extra):
        names.append(template.name)

    template_rendered.connect(record, app)
    yield names
    template_rendered.disconnect(record, app)


def doc_id(engine, title, project="notes"):
    return next(d["document_id"] for d in engine.documents(project)["documents"] if d["title"] == title)


def fetch(client, rendered, path, htmx=False, **headers):
    rendered.clear()
    response = client.get(path, base_url=BASE, headers={**(HX if htmx else {}), **headers})
    assert "HX-Request" in response.headers.get("Vary", ""), path
    return response


def routes(engine):
    garden = doc_id(engine, "Garden plan")
    return [
        ("/", "search/page.html", "search/_results.html"),
        ("/search?q=garden", "search/page.html", "search/_results.html"),
        ("/search/tags?tag_q=pro", "search/tags.html", "search/_tag_suggestions.html"),
        ("/files?folder=Projects", "files/page.html", "files/_documents.html"),
        (f"/documents/{garden}?project=notes", "documents/page.html", "documents/_panel.html"),
        (f"/documents/{garden}/related?project=notes", "documents/related.html", "documents/_related.html"),
        ("/status", "status/page.html", "status/_detail.html"),
        ("/status/widget", "status/page.html", "status/_widget.html"),
        ("/projects", "projects/page.html", "projects/_list.html"),
        ("/help?q=semantic", "help/page.html", "help/_results.html"),
        ("/strip?q=garden", "strip/page.html", "strip/_results.html"),
    ]


def test_every_route_has_a_page_and_a_partial(client, rendered, engine):
    for path, page, partial in routes(engine):
        full = fetch(client, rendered, path)
        assert full.status_code == 200, path
        assert rendered == [page], (path, rendered)  # the signal names the top-level template only
        assert b"htmx-2.0.4.min.js" in full.data
        part = fetch(client, rendered, path, htmx=True)
        assert part.status_code == 200, path
        assert rendered == [partial] and b"<html" not in part.data, (path, rendered)
        # A history restore needs the whole page even though htmx asks for it.
        fetch(client, rendered, path, htmx=True, **{"HX-History-Restore-Request": "true"})
        assert rendered == [page], path


def results_of(client, path):
    body = client.get(path, base_url=BASE, headers=HX).get_data(as_text=True)
    return body


def test_the_window_escapes_a_snippet_then_marks_its_matches(client, engine, vault):
    (vault / "html.md").write_text("# Markup\n\nThe <script>alert(1)</script> tag & the word otter, as 2 <= 3.\n")
    engine.reindex("notes")
    body = results_of(client, "/search?q=otter&kw=1")
    assert "<script" not in body and "alert(1)" not in body  # a snippet is what a reader reads: no tags, no script
    assert "The tag &amp;" in body
    assert "&amp; the word <mark>otter</mark>, as 2 &lt;= 3." in body  # and the text is escaped


def test_toggles_choose_the_engine_mode(client, engine):
    hybrid = results_of(client, "/search?q=garden&kw=1&smart=1")
    assert 'mode-name">hybrid' in hybrid and "badge-hybrid" in hybrid and "<mark>Garden</mark>" in hybrid
    keyword = results_of(client, "/search?q=garden&kw=1")
    assert 'mode-name">keyword' in keyword and "badge-semantic" not in keyword and "badge-hybrid" not in keyword
    semantic = results_of(client, "/search?q=baking+bread+with+a+starter&smart=1")
    assert 'mode-name">semantic' in semantic and "Sourdough bread" in semantic and "badge-keyword" not in semantic
    assert "Nothing in &#39;notes&#39; matches" in results_of(client, "/search?q=yeasty+loaves+rising+overnight&kw=1")
    tag_and = results_of(client, "/search?tag=1&tags=project&tags=outdoors&op=all")
    assert 'mode-name">tag' in tag_and and "Garden plan" in tag_and and "Compost log" in tag_and
    assert "Sourdough" not in tag_and
    tag_or = results_of(client, "/search?tag=1&tags=outdoors&tags=baking&op=any")
    assert "Garden plan" in tag_or
    filtered = results_of(client, "/search?q=garden&kw=1&smart=1&tag=1&tags=outdoors")
    unfiltered = results_of(client, "/search?q=garden&kw=1&smart=1")
    assert filtered.count('class="result"') <= unfiltered.count('class="result"')
    assert "Welcome to SK Memory" in unfiltered and "Welcome to SK Memory" not in filtered
    everywhere = results_of(client, "/search?q=semantic+search&scope=all")
    assert "all projects" in everywhere and 'class="project-name">User Docs' in everywhere


def test_empty_states_and_errors_in_place(client):
    assert "Type to search" in results_of(client, "/search?q=")
    assert "Pick one or more tags" in results_of(client, "/search?tag=1")
    none = results_of(client, "/search?q=zzqqxx&kw=1")
    assert "Nothing in" in none and "zzqqxx" in none
    ghost = client.get("/search?q=x&project=ghost", base_url=BASE, headers=HX)
    assert ghost.status_code == 404 and "No project named" in ghost.get_data(as_text=True)
    assert "<html" not in ghost.get_data(as_text=True)
    long = client.get("/search?q=" + "x" * 1200, base_url=BASE, headers=HX)
    assert long.status_code == 400 and "shorten" in long.get_data(as_text=True)
    missing = client.get("/documents/nope?project=notes", base_url=BASE)
    assert missing.status_code == 404 and "No document" in missing.get_data(as_text=True)
    assert "<html" in missing.get_data(as_text=True)


def test_user_strings_are_escaped(client, vault, engine):
    (vault / "Evil <b>note.md").write_text(
        "---\ntags: [\"x<script>\"]\n---\n# <img src=x onerror=alert(1)> title\n\n<script>alert(1)</script> plain text "
        "[click](javascript:alert(1)) ![remote](http://example.com/pic.png)\n")
    engine.reindex("notes")
    found = results_of(client, "/search?q=onerror&kw=1")
    assert "<img" not in found and "<b>" not in found and "<script" not in found  # tags read as a reader reads them
    assert "#x&lt;script&gt;" in found and "plain text" in found  # and what is left is escaped
    evil = next(d for d in engine.documents("notes")["documents"] if "Evil" in d["path"])
    panel = results_of(client, f"/documents/{evil['document_id']}?project=notes")
    assert "<script>" not in panel and "<img" not in panel and 'href="javascript:' not in panel
    assert "&lt;script&gt;" in panel
    preview = panel.split('class="preview"')[1].split("</div>")[0]
    assert "http://example.com/pic.png" not in preview or "<img" not in panel


def test_a_logseq_outline_previews_as_lists_without_its_bookkeeping(client, vault, engine):
    """A passage that starts inside an indented outline is still a list (not a code block), and Logseq's hidden
    properties (id::, created-at::) and #+BEGIN_/#+END_ markers show neither in the preview nor in a snippet."""
    (vault / "Outline.md").write_text(
        "- ## Usage\n\t- toggle the markers\n- ## Functionality\n\t- ### Priorities\n\t\t- set priorities with "
        "commands\n\t\t  id:: 60af74c1-62f8-434a-827c-abc6d2a71734\n\t\t\t- type:: [[Command]]\n"
        "\t\t\t  created-at:: 1609232063516\n\t\t- #+BEGIN_NOTE\n\t\t  priorities sort the queue\n"
        "\t\t  #+END_NOTE\n")
    engine.reindex("notes")
    found = results_of(client, "/search?q=priorities&kw=1")
    assert "Outline" in found and "1609232063516" not in found and "60af74c1" not in found and "#+" not in found
    panel = results_of(client, f"/documents/{doc_id(engine, 'Outline')}?project=notes")
    preview = panel.split('class="preview"')[1]
    assert "<pre>" not in preview and "<code>" not in preview and "<li>" in preview
    assert "set priorities with commands" in preview and "60af74c1" not in preview and "BEGIN_NOTE" not in preview


def test_tag_suggestions_files_filter_and_panel(client, engine):
    suggestions = results_of(client, "/search/tags?tag_q=pro")
    assert 'data-add-tag="project/garden"' in suggestions and '<span class="count">2</span>' in suggestions
    chosen = results_of(client, "/search/tags?tag_q=pro&tags=project/garden")
    assert "project/garden" not in chosen
    files = client.get("/files", base_url=BASE).get_data(as_text=True)
    assert 'data-folder="Projects"' in files and 'data-tag="outdoors"' in files
    by_tag = results_of(client, "/files?tag=outdoors")
    assert "Tagged #outdoors" in by_tag and "Garden plan" in by_tag and "Sourdough" not in by_tag
    garden = doc_id(engine, "Garden plan")
    panel = results_of(client, f"/documents/{garden}?project=notes")
    for words in ("Garden plan", "Projects/Garden plan.md", "data-copy=", "Outline", "Watering", "Compost log",
                  "Related documents", "<h2>Spring</h2>"):
        assert words in panel, words
    related = results_of(client, f"/documents/{garden}/related?project=notes")
    assert "Compost log" in related and f"/documents/{garden}?" not in related


def test_help_searches_the_user_docs(client):
    found = results_of(client, "/help?q=semantic+search+local+embeddings")
    assert "Search modes" in found and 'badge-' in found
    topics = results_of(client, "/help")
    assert "Hybrid scoring and thresholds" in topics


def test_status_widget_polls_fast_only_while_work_is_pending(client):
    widget = results_of(client, "/status/widget")
    # Everything is embedded: a slow poll (the watcher may add files) and a refresh when a project changes.
    assert "notes" in widget and 'hx-trigger="every 15s, skm-status-changed from:body"' in widget
    page = client.get("/status", base_url=BASE).get_data(as_text=True)
    assert "Files that failed" in page and "notes" in page


def test_status_says_how_fast_files_are_read_and_what_long_notes_have_left(client, engine, monkeypatch):
    real = engine.status

    def reading() -> dict:  # a big folder half read, as the background indexer reports it
        status = real()
        notes = next(p for p in status["projects"] if p.get("project") == "notes")
        notes.update(pending=12_900, long_note_pending=12_400,
                     sync={"requested": 1, "done": 0, "running": {"files_done": 3_200, "files_total": 10_000,
                                                                  "files_per_second": 118.4, "eta_seconds": 57}})
        return status

    monkeypatch.setattr(engine, "status", reading)
    page = " ".join(html.unescape(client.get("/status", base_url=BASE).get_data(as_text=True)).split())
    assert "Reading notes: 3,200 of 10,000 files (118 files/s, about 57 s left)" in page
    assert "long notes: 12,400 passages left" in page
    widget = " ".join(results_of(client, "/status/widget").split())
    assert "reading 3,200/10,000 files · ~57 s left" in widget and "every 2s" in widget


def test_the_top_bar_counts_your_notes_and_stays_one_short_line_while_embedding(client, engine, monkeypatch):
    """Issue 40 rows 15 and 20: "6582 docs" counted the help pages, and "N chunks waiting · rate · ETA" beside the
    notes searchable by meaning wrapped the top bar at 1280 px; the detail is in the tooltip."""
    import re

    real = engine.status

    def embedding() -> dict:  # a 6,571-note vault a little over half embedded, beside the built-in help pages
        status = real()
        status["embed_rate_per_second"] = 35.2
        notes = next(p for p in status["projects"] if p.get("project") == "notes")
        notes.update(documents=6_571, documents_with_text=6_500, documents_embedded=4_012, chunks=20_000,
                     embedded=8_000, pending=12_000, eta_seconds=341)
        assert any(p.get("project") == USER_DOCS_NAME for p in status["projects"])
        return status

    monkeypatch.setattr(engine, "status", embedding)
    widget = results_of(client, "/status/widget")
    shown = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", widget)).split())
    assert shown == "6,571 notes 40% 4,012 of 6,500 by meaning · ~6 min left", shown
    assert "12,000 passages waiting to be embedded, 35 a second" in html.unescape(widget)  # in the tooltip


def test_the_status_page_pauses_and_resumes_embedding(client, engine, monkeypatch):
    real = engine.status

    def waiting() -> dict:  # passages wait for the model, as while a big folder embeds
        status = real()
        next(p for p in status["projects"] if p.get("project") == "notes").update(pending=900)
        return status

    monkeypatch.setattr(engine, "status", waiting)
    page = " ".join(html.unescape(client.get("/status", base_url=BASE).get_data(as_text=True)).split())
    assert "Pause embedding</button>" in page and "Embedding is paused" not in page
    paused = client.post("/status/embedding", base_url=BASE, data={"paused": "1"}, headers=HX)
    text = " ".join(html.unescape(paused.get_data(as_text=True)).split())
    assert paused.status_code == 200 and "Embedding is paused: notes are still read and found by keyword" in text
    assert paused.headers["HX-Trigger"] == "skm-status-changed"  # the top bar's widget refreshes at once
    assert "Resume embedding</button>" in text and engine.embedding_paused
    widget = " ".join(results_of(client, "/status/widget").split())
    assert "embedding paused" in widget and "every 15s" in widget  # nothing to follow closely while paused
    plain = client.post("/status/embedding", base_url=BASE, data={"paused": "0"})  # without htmx: back to the page
    assert plain.status_code == 303 and plain.headers["Location"].endswith("/status") and not engine.embedding_paused
    assert "Pause embedding</button>" in client.get("/status", base_url=BASE).get_data(as_text=True)


def test_projects_page_adds_renames_reindexes_and_removes(client, tmp_path, engine):
    def post(url, **form):
        response = client.post(url, base_url=BASE, data=form, headers=HX)
        response.text = html.unescape(response.get_data(as_text=True))
        return response

    missing = post("/projects", path=str(tmp_path / "nope"))
    assert missing.status_code == 400 and "does not exist" in missing.text
    a_file = tmp_path / "file.md"
    a_file.write_text("# x\n")
    assert "is a file, not a folder" in post("/projects", path=str(a_file)).text
    notes_root = next(p["root"] for p in engine.projects() if p["name"] == "notes")
    assert "already the project" in post("/projects", path=notes_root).text
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "Otters.md").write_text("# Otters\n\nSea otters hold hands.\n")
    added = post("/projects", path=str(extra), name="Extra")
    assert added.status_code == 200 and "Added 'Extra'" in added.text
    assert "Re-indexing 'Extra'" in post("/projects/Extra/reindex").text
    assert "Otters" in results_of(client, "/search?q=otters&kw=1&project=Extra")
    assert "Renamed to 'Wild'" in post("/projects/Extra/rename", new_name="Wild").text
    assert "Otters" in results_of(client, "/search?q=otters&kw=1&project=Wild")
    builtin = post(f"/projects/{USER_DOCS_NAME}/remove")
    assert builtin.status_code == 400 and "built into SK Memory" in builtin.text
    removed = post("/projects/Wild/remove")
    assert "Removed 'Wild'" in removed.text and (extra / "Otters.md").exists()
    page = html.unescape(client.get("/projects", base_url=BASE).get_data(as_text=True))
    assert "Wild" not in page and "built-in, read-only" in page
    assert page.count('class="rename"') == 1  # only the user's project offers rename


def test_posts_need_our_origin_and_gets_change_nothing(client):
    foreign = client.post("/projects", base_url=BASE, data={"path": "/tmp"}, headers={"Origin": "http://evil.example"})
    assert foreign.status_code == 403
    assert client.get("/projects/notes/remove", base_url=BASE).status_code == 405


def test_assets_are_local_and_pages_carry_a_csp(client):
    page = client.get("/", base_url=BASE)
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    html = page.get_data(as_text=True)
    assert "http://" not in html.replace("http://127.0.0.1", "") and "https://" not in html
    for asset in ("/static/htmx-2.0.4.min.js", "/static/js/app.js", "/static/css/app.css"):
        assert client.get(asset, base_url=BASE).status_code == 200


def test_a_bad_number_in_a_page_address_is_refused_with_the_same_sentence_as_the_api(client):
    page = client.get("/files?project=notes&offset=-5", base_url=BASE)
    api = client.get("/api/documents?project=notes&offset=-5", base_url=BASE)
    assert page.status_code == api.status_code == 400
    sentence = api.get_json()["detail"]
    assert sentence.startswith("offset must be a whole number from 0")
    assert html.escape(sentence) in page.get_data(as_text=True)
    assert client.get("/files?project=notes&offset=400", base_url=BASE).status_code == 200  # a later page


def test_a_result_opens_its_document_at_the_matching_passage(client, engine, vault):
    found = engine.search(SearchRequest("drip line", mode="keyword", project="notes", group=True))["results"][0]
    assert found["heading_path"] == ["Garden plan", "Watering"]
    page = results_of(client, "/search?q=drip+line&m=1&kw=1")
    link = f"/documents/{found['document_id']}?project=notes&amp;lines={found['lines'][0]}-{found['lines'][1]}"
    assert link in page and "› Garden plan › Watering" in page
    panel = html.unescape(results_of(client, html.unescape(link)))
    assert f"The match is at lines {found['lines'][0]}–{found['lines'][1]}, under “Garden plan › Watering”" in panel
    match = panel[panel.index('id="match"'):]
    assert "<h2>Watering</h2>" in match[:200] and "drip line" in match[:400]
    assert panel.count('class="passage') > 1 and panel.count('id="match"') == 1
    plain = results_of(client, f"/documents/{found['document_id']}?project=notes&lines=oops")
    assert 'id="match"' not in plain and "Watering" in plain  # a bad address still opens the document

    from test_extract import make_pdf

    (vault / "Tides.pdf").write_bytes(make_pdf(["Tidal pools at dawn", "Moon phases and spring tides"]))
    engine.writer("notes").sync()
    hit = engine.search(SearchRequest("spring tides", mode="keyword", project="notes"))["results"][0]
    pdf = html.unescape(results_of(client, f"/documents/{hit['document_id']}?project=notes&lines=2-2"))
    assert "The match is on page 2 of the PDF" in pdf
    assert "Moon phases" in pdf[pdf.index('id="match"'):]


def test_related_documents_say_why_they_are_related(client, engine):
    garden = doc_id(engine, "Garden plan")
    related = engine.related(RelatedRequest(garden, "notes"))["results"]
    compost = next(r for r in related if r["title"] == "Compost log")
    assert compost["reason"].startswith(("mentions “Garden plan”", "is close in meaning ("))
    shown = html.unescape(results_of(client, f"/documents/{garden}/related?project=notes"))
    assert f"It {compost['reason']}." in shown


def test_the_power_strip_corrects_a_typo_and_offers_the_words_as_typed(client):
    corrected = results_of(client, "/strip?q=gardn&kind=keyword")
    assert "Showing results for <strong class=\"corrected-query\">garden</strong>" in corrected
    assert "Garden plan" in corrected and "correct=0" in corrected
    as_typed = results_of(client, "/strip?q=gardn&kind=keyword&correct=0")
    assert "Showing results for" not in as_typed and "No documents match" in as_typed


def test_a_search_overtaken_while_typing_is_dropped_not_rendered(client):
    typed = {**HX, "X-SKMemory-Typing": "tab1:2"}
    newest = client.get("/search?q=sourdough", headers=typed, base_url=BASE)
    assert newest.status_code == 200 and "Sourdough" in newest.get_data(as_text=True)
    older = client.get("/search?q=sourdou", headers={**HX, "X-SKMemory-Typing": "tab1:1"}, base_url=BASE)
    assert older.status_code == 204 and older.get_data() == b""  # the window swaps nothing
    other_tab = client.get("/search?q=sourdou", headers={**HX, "X-SKMemory-Typing": "tab2:1"}, base_url=BASE)
    assert other_tab.status_code == 200  # another tab's numbers are its own
    plain = client.get("/search?q=sourdou", headers=HX, base_url=BASE)
    assert plain.status_code == 200  # a link, a reload or Load more carries no number


def test_help_shows_this_servers_address_and_answers_about_every_part(engine):
    client = app_client(create_app({"TESTING": True, "ENGINE": engine, "SKMEMORY_PORT": 9123}))
    page = engine.documents(USER_DOCS_NAME, name="the search window")["documents"][0]
    shown = client.get(f"/documents/{page['document_id']}?project={USER_DOCS_NAME}", headers=HX,
                       base_url="http://127.0.0.1:9123").get_data(as_text=True)
    assert "127.0.0.1:9123" in shown and "8765" not in shown
    for words, title in (("keyboard shortcuts", "Keyboard shortcuts"), ("power strip", "The Power Strip"),
                         ("cluster view", "Cluster View"), ("mind maps", "Mind maps"),
                         ("why popover", "Why a result ranked where it did: the why popover")):
        found = client.get(f"/help?q={words}", headers=HX, base_url="http://127.0.0.1:9123").get_data(as_text=True)
        assert html.escape(title, quote=False) in found.split("result-title")[1], (words, found[:400])


def test_a_results_why_is_fetched_when_opened_with_the_numbers_of_the_api(client, engine):
    listed = results_of(client, "/search?q=tmux&kw=1&smart=1")
    assert 'class="why-legs"' not in listed  # the list, sent on every keystroke, leaves the explanations out
    why_url = html.unescape(listed.split('data-why-url="', 1)[1].split('"', 1)[0])
    api = client.get("/api/search?q=tmux&mode=hybrid&explain=true&group=document&limit=30", base_url=BASE).get_json()
    assert "results" in api, api
    first = api["results"][0]
    assert f'data-document-id="{first["document_id"]}"' in listed

    why = client.get(f"{why_url}&document_id={first['document_id']}", headers=HX, base_url=BASE)
    assert why.status_code == 200
    body = why.get_data(as_text=True)
    assert 'class="why-legs"' in body and f'{first["explain"]["score"]:.4f}' in body
    for name, leg in first["explain"]["legs"].items():
        assert f'data-leg="{name}"' in body
        if leg.get("rank"):
            assert f'<td class="why-rank">{leg["rank"]}</td>' in body
    assert "Matched: tmux" in body

    gone = client.get(f"{why_url}&document_id=no-such-document", headers=HX, base_url=BASE).get_data(as_text=True)
    assert "no longer among the search's results" in gone and "why-legs" not in gone
    weaker = results_of(client, "/search?q=how+do+I+keep+a+server+running+after+logout&m=1&smart=1")
    assert "weaker-list" in weaker and "why-toggle" not in weaker  # weaker matches are offered, not ranked
    tag = results_of(client, "/search?tag=1&tags=project")
    assert "data-why-url" not in tag and "why-toggle" not in tag  # a tag search lists, it does not rank
    assert "no longer among" in client.get("/search/why?tag=1&tags=project&document_id=x", base_url=BASE,
                                           headers=HX).get_data(as_text=True)


def test_counts_and_labels_say_what_was_searched(client):
    """Issue 40 row 15: a search by tags alone was labelled "hybrid", and "Load 30 more" was offered with 1 left."""
    page = " ".join(html.unescape(results_of(
        client, "/search?project=notes&kw=1&smart=1&tag=1&tags=project&limit=1")).split())
    assert '<span class="mode-name">tag</span>' in page, page[:2000]
    assert "1 of 2 documents" in page and "Load 1 more</button>" in page


def test_the_o_key_is_named_only_where_a_project_is_an_obsidian_vault(client, vault):
    """O opens a result in Obsidian, which only an Obsidian vault (a folder holding .obsidian/) can do: the window's
    key list named it for every folder."""
    page = client.get("/", base_url=BASE).get_data(as_text=True)
    assert "opens in Obsidian" not in page and "<kbd>Enter</kbd> opens" in page
    (vault / ".obsidian").mkdir()
    assert "<kbd>O</kbd> opens in Obsidian" in client.get("/", base_url=BASE).get_data(as_text=True)


def test_a_table_split_across_passages_previews_every_row(client, engine, vault):
    """A long table is cut into several passages; the preview renders each passage apart, so the rows after a cut
    must still read as table rows (the help's key list lost every row after its first passage)."""
    rows = "".join(f"| Ctrl+{n} | moves the cursor to the place numbered {n} in the list of places you keep |\n"
                   for n in range(120))
    (vault / "Keys.md").write_text(f"# Keys\n\n| Key | What it does |\n|---|---|\n{rows}\nAfter the table.\n")
    engine.reindex("notes")
    panel = results_of(client, f"/documents/{doc_id(engine, 'Keys')}?project=notes")
    preview = panel.split('class="preview"')[1]
    assert panel.count('class="passage') > 1  # the table really was cut
    assert preview.count("<td>Ctrl+") == 120 and "| Ctrl+" not in preview
    assert preview.count("<th>Key</th>") == 1 and '<table class="continued">' in preview  # one header, no gap
    assert "After the table." in preview


def test_the_window_offers_the_common_spelling_of_a_rare_one(tmp_path, make_engine):
    vault = tmp_path / "cards"
    vault.mkdir()
    for i in range(12):
        (vault / f"Card {i}.md").write_text(f"A zettelkasten card about idea {i}.\n", encoding="utf-8")
    (vault / "Draft.md").write_text("My zettlekasten, spelt wrong.\n", encoding="utf-8")
    engine = make_engine(vault, project="cards", embedder="none")
    client = app_client(create_app({"TESTING": True, "ENGINE": engine, "SKMEMORY_PORT": 8765}))
    page = client.get("/search?q=zettlekasten&project=cards", headers=HX, base_url=BASE).get_data(as_text=True)
    assert "Did you mean" in page and "<strong>zettelkasten</strong>" in page and "q=zettelkasten" in page
    assert "Draft" in page  # searched as typed


def test_a_partial_match_names_the_words_it_holds_or_none_at_all():
    """Issue 61: "partial match:" was shown with an empty list when the words it held were only in its properties."""
    from webapp.ui import match_label

    row = {"search_type": "keyword", "partial": True, "matched_words": ["sync"], "cosine": None, "score": 1.0}
    assert match_label(row) == "partial match: sync"
    assert match_label({**row, "matched_words": []}) == "partial match"
    assert match_label({**row, "search_type": "hybrid", "matched_words": [], "cosine": 0.42}) == \
        "partial match · 42% similar"


def test_the_window_reopens_on_the_project_last_chosen(make_engine, tmp_path):
    """Issue 61: a fresh `/` opened on the first project again, whichever one the person had chosen."""
    engine = make_engine(embedder="words")  # "notes", the demo
    other = tmp_path / "recipes"
    other.mkdir()
    (other / "Bread.md").write_text("# Bread\n\nA loaf of rye bread, baked in a pot.\n", encoding="utf-8")
    engine.home.add_project(other, "recipes")
    engine.reindex("recipes")
    client = app_client(create_app({"TESTING": True, "ENGINE": engine, "SKMEMORY_PORT": 8765}))

    def chosen(page: str) -> str:
        return re.search(r'<option value="([^"]+)" selected', page).group(1)

    base = "http://127.0.0.1:8765"
    assert chosen(client.get("/", base_url=base).get_data(as_text=True)) == "notes"  # the default, first
    assert "Bread" in client.get("/search?q=rye+bread&project=recipes", base_url=base).get_data(as_text=True)
    fresh = client.get("/", base_url=base).get_data(as_text=True)
    assert chosen(fresh) == "recipes"
    assert "Bread" in client.get("/search?q=rye+bread", base_url=base).get_data(as_text=True)  # searched there
    assert chosen(client.get("/files", base_url=base).get_data(as_text=True)) == "recipes"
    engine.remove_project("recipes")
    assert chosen(client.get("/", base_url=base).get_data(as_text=True)) == "notes"  # gone: the default again


def test_a_model_being_prepared_for_this_computer_says_what_is_made_and_for_how_long(make_engine, tmp_path):
    """Issue 61: on a fresh computer the window said "still loading (a few seconds after the start)" for minutes and
    `skmemory status` "embeddings: unavailable: None", while the model's copies for its CPU were being made."""
    from indexer.model import derived
    from indexer.model.embeddings import Embedder
    from support import WordEmbedder
    from webapp.cli import embeddings_state

    embedder, seen = Embedder(model_path=tmp_path / "model"), {}

    def build():  # as load() makes a copy: holding the model's lock
        with embedder._lock:
            seen["now"] = embedder.now
        (tmp_path / "copy.bin").write_bytes(b"made")

    derived.ensure([tmp_path / "copy.bin"], build, "the int8 copy of model (about a minute)", tmp_path)
    now = seen["now"]
    assert now.word == "not loaded" and now.preparing.startswith("the int8 copy of model (about a minute): 0 s so far")
    assert derived.making() is None and embedder.now.preparing is None  # made: nothing is being prepared now
    said = embeddings_state({"embeddings_available": False, "embeddings_preparing": now.preparing, "model": "m"})
    assert said.startswith("not ready yet: the m model is being prepared for this computer, once: making the int8")

    class Preparing(WordEmbedder):
        def __init__(self):
            self.now = now

        def ready_for_queries(self) -> bool:
            return False

        def load(self) -> bool:
            return False

    engine = make_engine(embedder="words")
    engine.index("notes").embedder = Preparing()
    page = app_client(create_app({"TESTING": True, "ENGINE": engine, "SKMEMORY_PORT": 8765})).get(
        "/search?q=garden", base_url="http://127.0.0.1:8765").get_data(as_text=True)
    assert ("Meaning search is being prepared for this computer, once: making the int8 copy of model (about a "
            "minute): 0 s so far (about a minute in all on two cores), so keyword search answered alone"
            ) in " ".join(page.split())

    # Asked again every second meanwhile: the notice itself comes back, with how long so far, in its own place
    engine.home._embedder = engine.index("notes").embedder  # the data home's model, as a server without projects
    client = app_client(create_app({"TESTING": True, "ENGINE": engine, "SKMEMORY_PORT": 8765}))
    again = client.get("/search?q=garden&when_ready=1", headers={"HX-Request": "true"},
                       base_url="http://127.0.0.1:8765")
    assert again.status_code == 200 and again.headers["HX-Retarget"] == "#loading-notice"
    assert "once: making the int8 copy of model (about a minute): 0 s so far" in " ".join(again.get_data(True).split())

    from flask import render_template
    from webapp.ui.status import summary

    app = create_app({"TESTING": True, "ENGINE": engine, "SKMEMORY_PORT": 8765})
    told = summary({"projects": [{"project": "notes", "documents": 11, "chunks": 30, "pending": 30}],
                    "embeddings": "not loaded", "embeddings_preparing": now.preparing})
    assert told["busy"] and told["preparing"] == now.preparing  # the top bar asks again every 2 s meanwhile
    with app.test_request_context("/status/widget"):
        bar = " ".join(render_template("status/_widget.html", summary=told).split())
    assert "preparing the model · 0 s so far</span>" in bar  # one short line; which copy in its title
    assert 'making the int8 copy of model (about a minute): 0 s so far">' in bar
