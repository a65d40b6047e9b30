"""The search window in real headless Chromium against a real `skmemory serve` on an indexed vault."""
from __future__ import annotations

import re
import shutil

import pytest

from support import DEMO_NOTES, browser_page, needs_chromium, running_server, shot, sync_playwright_api


pytestmark = [pytest.mark.slow, needs_chromium]
sync_api = sync_playwright_api()
expect = sync_api.expect


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`skmemory serve` on a copy of the demo vault (plus the built-in User Docs), once everything is embedded."""
    root = tmp_path_factory.mktemp("browser")
    vault = root / "vault"
    shutil.copytree(DEMO_NOTES, vault)
    (vault / "Kanban plugin.md").write_text(PLUGIN_NOTE)
    (vault / "Journal" / "Weekend.md").write_text(WEEKEND_NOTE)
    (vault / "Reference" / "Field notes").mkdir()
    (vault / "Reference" / "Field notes" / "Field log.md").write_text(FIELD_LOG)
    with running_server(root, vault, projects={"notes", "User Docs"}) as live:
        yield live.url


@pytest.fixture
def page(browser, server):
    with browser_page(browser, server) as page:
        yield page



# The HTML of a public plugin vault's notes, where the preview showed `<span class="git-footer">` as text, badges
# as "!GitHub all releases" links and `^block` ids; and what a hostile note would try.
PLUGIN_NOTE = """# Kanban plugin

[<button id=HH>Open in Obsidian</button>](obsidian://show-plugin?id=obsidian-kanban) · \
[GitHub repository](https://github.com/mgmeyers/obsidian-kanban)

![GitHub all releases](https://img.shields.io/github/downloads/mgmeyers/obsidian-kanban/total)

> [!tip] Boards in markdown
> Lanes of cards, each a list item. See [[Garden plan|the garden]] and [[Nowhere at all]]. ^lanes

- [x] install the plugin
- [ ] make a board

<span class="git-footer">Edit on GitHub</span>
<img src=x onerror="document.title='pwned'"><script>document.title='pwned'</script>
<a href="javascript:document.title='pwned'">click me</a><details open ontoggle="document.title='pwned'">
<summary>More</summary>Hidden text</details><iframe src="https://example.com"></iframe>
<svg onload="document.title='pwned'"><circle r="4"/></svg><div style="position:fixed;inset:0" onclick="x()">Styled</div>
"""


WEEKEND_NOTE = ("# Weekend\n\nBaked with the Sourdough bread recipe again.\n\nChecked the [[Compost log]] and the "
                "tmux cheatsheet.\n")


# A long note whose match is far down, with an address too long for a phone's width (issue 40 row 14).
FIELD_LOG = ("# Field log\n\n" + "".join(f"Day {i}: walked the lower meadow and counted the usual birds.\n\n"
                                         for i in range(1, 80))
             + "Day 80: found the heronry by the old mill, eleven nests.\n\n"
             "Source: <https://example.org/birds/records/2026/lowermeadow.oldmill.heronry/countsbyseasonandnestinthelowermeadow.html>\n")


def search(page, text: str) -> None:
    page.fill("#q", text)
    expect(page.locator("#results .result-count")).to_be_visible()
    expect(page).to_have_url(re.compile(r"q=" + re.escape(text.split()[0])))


def test_typing_shows_badged_results_and_arrows_open_one(page):
    page.goto("/")
    page.locator("#q").press_sequentially("garden", delay=40)
    first = page.locator("#results .result").first
    expect(first.locator(".result-title")).to_have_text("Garden plan")
    expect(first.locator(".badge")).to_have_text("hybrid")
    expect(first.locator(".similarity")).to_have_text(re.compile(r"\d+%"))
    expect(first.locator(".snippet mark").first).to_have_text(re.compile("garden", re.I))
    page.locator("#q").press("ArrowDown")
    expect(page.locator("#results [data-nav-item]").first).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(page.locator("#results [data-nav-item]").nth(1)).to_be_focused()
    page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")
    expect(page.locator("#doc-title")).to_have_text("Garden plan")
    expect(page.locator("#related .related-link").first).to_be_visible()
    # Issue 40 row 14: the note's frontmatter properties are shown, as Obsidian shows them (its tags are above)
    properties = page.locator("#doc-panel .properties")
    expect(properties).to_contain_text("status")
    expect(properties).to_contain_text("active")
    expect(properties).not_to_contain_text("project/garden")
    shot(page, "search")


@pytest.mark.parametrize("width", [1280, 400])
def test_opening_a_result_shows_its_title_and_its_match_and_never_widens_the_page(page, width):
    """Issue 40 row 14: at 1280 px the panel scrolled to the match and hid the note's title under the top bar; at
    400 px a long address widened the page past the screen."""
    page.set_viewport_size({"width": width, "height": 800})
    page.goto("/search?q=heronry")
    page.locator("#results .result a").first.click()
    title = page.locator("#doc-title")
    expect(title).to_have_text("Field log")
    expect(page.locator("#match")).to_contain_text("heronry")
    expect(page.locator("#match")).to_be_in_viewport()
    if width == 1280:  # beside the list, the whole panel's head stays in view
        top_bar = page.locator(".topbar").bounding_box()
        assert title.bounding_box()["y"] >= top_bar["y"] + top_bar["height"], "the title is under the top bar"
        expect(title).to_be_in_viewport()
    preview = page.locator(".doc-main").bounding_box()
    assert preview["x"] + preview["width"] <= width, preview  # a long address wraps inside the screen
    expect(page.locator(".doc-info time").first).to_have_text(re.compile(r"^\d{1,2} [A-Z][a-z]{2} \d{4}"))
    shot(page, f"opened-{width}")


def test_each_toggle_changes_the_results(page):
    page.goto("/search?q=baking+bread+with+a+starter+culture")
    expect(page.locator("#results .result").first).to_contain_text("Sourdough bread")
    page.click("label[for=t-smart]")  # Keyword alone: no note holds every word (stopwords are never required)
    expect(page.locator("#results .mode-name")).to_have_text("keyword")
    expect(page.locator("#results")).to_contain_text("Nothing in 'notes' matches")
    page.click("label[for=t-smart]")
    page.click("label[for=t-kw]")  # Smart alone: semantic search finds it by meaning
    expect(page.locator("#results .mode-name")).to_have_text("semantic")
    expect(page.locator("#results .result").first.locator(".badge")).to_have_text("semantic")
    expect(page.locator("#results .result").first).to_contain_text("Sourdough bread")
    page.click("label[for=t-smart]")
    page.click("label[for=t-tag]")  # Tag alone: tag search with chips from the tag table
    expect(page.locator("#results")).to_contain_text("Pick one or more tags")
    page.locator("#tag-q").press_sequentially("out", delay=40)
    suggestion = page.locator("#tag-suggest [data-add-tag=outdoors]")
    expect(suggestion).to_contain_text("2")
    suggestion.click()
    expect(page.locator("#tag-chips .chip")).to_have_text(re.compile("#outdoors"))
    expect(page.locator("#results .mode-name")).to_have_text("tag")
    titles = page.locator("#results .result-title")
    expect(titles).to_have_count(2)
    expect(page).to_have_url(re.compile(r"tags=outdoors"))
    shot(page, "tag-search", readme="tag-search")
    page.click("label[for=t-kw]")  # Tag with Keyword: the tag filters keyword search
    page.fill("#q", "compost")
    expect(page.locator("#results .mode-name")).to_have_text("keyword")
    expect(page.locator("#results .result-title").first).to_have_text(re.compile("Compost log|Garden plan"))
    page.click("#tag-chips .chip-remove")
    expect(page.locator("#tag-chips .chip")).to_have_count(0)


def test_the_why_popover_shows_the_numbers_the_api_gives(page):
    page.goto("/search?q=tmux")
    first = page.locator("#results .result").first
    expect(first.locator(".result-title")).to_have_text("tmux cheatsheet")
    first.locator(".why-toggle").click()
    pop = first.locator(".why-pop")
    expect(pop).to_be_visible()
    api = page.evaluate("async () => (await fetch('/api/search?q=tmux&explain=true&limit=30')).json()")
    why = api["results"][0]["explain"]
    assert api["results"][0]["title"] == "tmux cheatsheet"
    for name in ("keyword", "semantic"):
        row = pop.locator(f"tr[data-leg={name}]")
        leg = why["legs"][name]
        expect(row.locator(".why-rank")).to_have_text(str(leg["rank"]))
        expect(row.locator(".why-score")).to_have_text(f"{leg.get('similarity') or leg['score']:.4f}")
    expect(pop.locator(".why-total")).to_have_text(f"{why['score']:.4f}")
    expect(pop.locator(".why-rule")).to_contain_text(why["rule"])
    expect(pop.locator(".why-words")).to_have_text("Matched: tmux")
    shot(page, "why-popover", readme="why-popover")
    first.locator(".why-toggle").click()
    expect(pop).to_be_hidden()


def test_all_projects_scope_names_the_project(page):
    page.goto("/search?q=semantic+search")
    page.check("input[name=scope][value=all]")
    expect(page.locator("#results .result-count")).to_contain_text("all projects")
    expect(page.locator("#results .project-name").first).to_be_visible()


def test_clicking_a_folder_name_lists_it_and_unfolds_it(page):
    """Issue 40 row 17: the name listed the folder's notes but left its subfolders folded away."""
    page.goto("/files")
    child = page.locator(".folder-link[data-folder='Reference/Field notes']")
    expect(child).to_be_hidden()
    page.click(".folder-link[data-folder=Reference]")
    expect(page.locator("#file-list h2")).to_contain_text("Reference")
    expect(child).to_be_visible()
    page.click(".folder-link[data-folder=Reference]")  # a second click on the name keeps it open; ▸ folds it
    expect(child).to_be_visible()
    child.click()
    expect(page.locator("#file-list .doc-title")).to_have_text(["Field log"])


def test_files_tag_filter_and_folder_tree(page):
    page.goto("/files")
    expect(page.locator(".folder-link[data-folder=Projects] .count")).to_have_text("3")
    page.click(".tag-link[data-tag=outdoors]")
    expect(page.locator("#file-list h2")).to_contain_text("Tagged #outdoors")
    expect(page.locator("#file-list .doc-title")).to_have_count(2)
    expect(page).to_have_url(re.compile(r"/files\?.*tag=outdoors"))
    page.click("#file-list .document-link >> nth=0")
    expect(page.locator("#doc-title")).to_be_visible()
    expect(page.locator("#doc-panel .outline li").first).to_be_visible()
    shot(page, "files")


def test_document_panel_shows_related_documents(page):
    page.goto("/search?q=garden")
    page.click("#results .result-link >> nth=0")
    panel = page.locator("#doc-panel")
    expect(panel.locator("#doc-title")).to_have_text("Garden plan")
    expect(panel.locator(".outline")).to_contain_text("Watering")
    expect(panel.locator(".preview h2").first).to_have_text("Spring")
    related = panel.locator("#related .related-link")
    expect(related.first).to_be_visible()
    assert "Compost log" in related.all_inner_texts() and "Garden plan" not in related.all_inner_texts()
    panel.get_by_label("Copy the path").click()
    expect(panel.get_by_label("Copy the path")).to_have_text("Copied")
    related.filter(has_text="Compost log").click()
    expect(panel.locator("#doc-title")).to_have_text("Compost log")
    shot(page, "document-panel")


@pytest.mark.parametrize("width", [1280, 400])
def test_the_panel_suggests_links_a_note_could_have_with_the_link_to_copy(page, width):
    page.set_viewport_size({"width": width, "height": 900})
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto("/search?q=weekend")
    page.locator("#results .result-link", has_text="Weekend").first.click()
    panel = page.locator("#doc-panel")
    expect(panel.locator("#doc-title")).to_have_text("Weekend")
    suggestions = panel.locator("#suggestions .suggestion")
    expect(suggestions.first).to_be_visible()
    sourdough = suggestions.filter(has=page.locator("code", has_text="[[Sourdough]]"))
    expect(sourdough).to_contain_text("Named on line 3 without a link")
    expect(sourdough.locator("code")).to_have_text("[[Sourdough]]")
    assert "Compost log" not in panel.locator("#suggestions .suggestion > a").all_inner_texts()  # already linked
    sourdough.locator("button.copy").click()
    expect(sourdough.locator("button.copy")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == "[[Sourdough]]"
    panel.locator("#suggestions").scroll_into_view_if_needed()
    shot(page, f"link-suggestions-{width}")


def test_a_notes_raw_html_is_rendered_safely_as_its_reading_view(page):
    """The preview renders the note (callout, task list, links by their text, wikilinks that open their note) and
    keeps none of its hostile HTML: nothing runs, no button, no frame, no remote image, no javascript: link."""
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto("/search?q=kanban+plugin")
    page.click("#results .result-link >> nth=0")
    panel = page.locator("#doc-panel")
    expect(panel.locator("#doc-title")).to_have_text("Kanban plugin")
    preview = panel.locator(".preview")
    expect(preview.locator(".callout .callout-title")).to_have_text("Boards in markdown")
    expect(preview.locator("input[type=checkbox]")).to_have_count(2)
    expect(preview).to_contain_text("Edit on GitHub")
    expect(preview).to_contain_text("Open in Obsidian")
    expect(preview).not_to_contain_text("^lanes")
    expect(preview).not_to_contain_text("GitHub all releases")  # a badge is no words
    for selector in ("button", "script", "iframe", "svg", "img", "[onerror]", "[onclick]", "[ontoggle]", "[style]",
                     "a[href^='javascript:']", "a[href^='obsidian:']"):
        expect(preview.locator(selector)).to_have_count(0)
    expect(preview.locator(".wikilink.unresolved")).to_have_text("Nowhere at all")
    assert page.title() != "pwned" and dialogs == []
    shot(page, "preview-plugin-note")
    preview.locator("a.wikilink", has_text="the garden").click()  # a wikilink opens its note in the panel
    expect(panel.locator("#doc-title")).to_have_text("Garden plan")
    assert page.title() != "pwned"


def test_a_typo_shows_results_for_the_correction_and_offers_the_words_as_typed(page):
    page.goto("/search?q=sourdogh")
    notice = page.locator("#results .notice.corrected")
    expect(notice).to_contain_text("Showing results for sourdough")
    expect(page.locator("#results .result").first).to_contain_text("Sourdough")
    notice.locator("a.as-typed").click()
    expect(page.locator("#results .notice.corrected")).to_have_count(0)
    expect(page).to_have_url(re.compile(r"correct=0"))


def test_ctrl_k_opens_the_power_strip(page):
    page.goto("/")
    page.keyboard.press("Control+k")
    strip = page.locator("#power-strip")
    expect(strip).to_be_visible()
    expect(page.locator("#strip-q")).to_be_focused()
    page.keyboard.type("sourdough")
    expect(strip.locator(".strip-item").first).to_contain_text("Sourdough")
    shot(page, "power-strip")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    expect(strip).to_be_hidden()
    expect(page.locator("#doc-title")).to_have_text("Sourdough")
    page.keyboard.press("Control+k")
    page.check("#power-strip input[value=semantic]")
    # A question about the note's text: the whole note is one packed chunk, so a two-word query that only echoes
    # its title stays under the 0.5 of direct semantic search (it matched a heading-only chunk before packing).
    page.fill("#strip-q", "when to plant tomatoes in raised beds")
    expect(strip.locator(".strip-item").first).to_contain_text("Garden plan")


def test_f1_from_the_smart_hint_finds_the_semantic_search_docs(page):
    page.goto("/")
    page.hover("label[for=t-smart]")
    expect(page.locator("#smart-hint")).to_be_visible()
    expect(page.locator("#smart-hint")).to_contain_text("F1")
    page.focus("#t-smart")
    page.keyboard.press("F1")
    expect(page).to_have_url(re.compile(r"/help\?q="))
    first = page.locator("#help-results .result").first
    expect(first.locator(".result-title")).to_have_text("Search modes")
    first.locator(".result-link").click()
    expect(page.locator("#doc-panel")).to_contain_text("local embeddings")
    shot(page, "help")


def test_a_help_topic_reads_as_a_page_at_an_address_of_its_own(page, server):
    """Issue 40 row 16: a topic opened as a file (the checkout's path, size, an Open button), at no address of its
    own, and said port 8765 whatever the server's."""
    page.goto("/help")
    page.click("#help-results .document-link >> text=The search window")
    expect(page).to_have_url(re.compile(r"/help/The(%20| )search(%20| )window$"))
    panel = page.locator("#doc-panel")
    expect(panel.locator("#doc-title")).to_have_text("The search window")
    for file_detail in (".doc-path", "button.open-file", "dl.facts"):
        expect(panel.locator(file_detail)).to_have_count(0)
    port = server.rsplit(":", 1)[1]
    expect(panel).to_contain_text(f"127.0.0.1:{port}")
    if port != "8765":
        expect(panel).not_to_contain_text("8765")
    expect(page).to_have_title("The search window · Help · SK Memory")  # the tab names the topic, as a reload does
    page.reload()  # the address opens the same topic on its own
    expect(page.locator("#doc-panel #doc-title")).to_have_text("The search window")
    shot(page, "help-topic")
    # A related topic opens as a help topic too, at its own address, not as a file of the checkout.
    related = panel.locator("#related .related-link").first
    expect(related).to_have_attribute("href", re.compile(r"^/help/"))
    title = related.inner_text()
    related.click()
    expect(panel.locator("#doc-title")).to_have_text(title)
    expect(page).to_have_url(re.compile(r"/help/[^/]+$"))
    expect(page).to_have_title(f"{title} · Help · SK Memory")
    expect(panel.locator(".doc-path")).to_have_count(0)
    missing = page.request.get("/help/No such topic")
    assert missing.status == 404 and "There is no help topic &#39;No such topic&#39;" in missing.text()


def test_back_restores_the_previous_search(page):
    page.goto("/")
    search(page, "garden")
    expect(page.locator("#results .result-title").first).to_have_text("Garden plan")
    search(page, "sourdough")
    expect(page.locator("#results .result-title").first).to_have_text("Sourdough")
    page.go_back()
    expect(page).to_have_url(re.compile(r"q=garden"))
    expect(page.locator("#q")).to_have_value("garden")
    expect(page.locator("#results .result-title").first).to_have_text("Garden plan")


def test_status_widget_status_page_and_projects_page(page):
    page.goto("/projects")
    expect(page.locator("table.projects")).to_contain_text("User Docs")
    expect(page.locator("table.projects")).to_contain_text("built-in, read-only")
    page.fill("input[name=path]", "/definitely/not/here")
    page.click("text=Add project")
    expect(page.locator(".notice.error")).to_contain_text("does not exist")
    page.console_errors.remove("Failed to load resource: the server responded with a status of 400 (BAD REQUEST)")
    expect(page.locator("#status-widget")).to_contain_text(re.compile(r"\d+ notes"))
    shot(page, "projects")
    page.click("#status-widget a")
    expect(page.locator("h1")).to_have_text("Indexer status")
    expect(page.locator(".status-project").first).to_contain_text("Files that failed")
    shot(page, "status")


@pytest.fixture
def slow_server(server):
    """The same server behind a proxy that answers each search 0.35 s late: a busy machine, as a browser sees it."""
    import http.server
    import threading
    import time
    import urllib.request

    class Late(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            if self.path.startswith("/search?"):
                time.sleep(0.35)
            forwarded = urllib.request.Request(server.rstrip("/") + self.path, headers={
                k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")})
            try:
                with urllib.request.urlopen(forwarded, timeout=60) as answer:
                    status, headers, body = answer.status, answer.headers.items(), answer.read()
            except urllib.error.HTTPError as refused:
                status, headers, body = refused.code, refused.headers.items(), refused.read()
            self.send_response(status)
            for key, value in headers:
                if key.lower() not in ("connection", "transfer-encoding", "content-length"):
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Late)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{proxy.server_address[1]}/"
    finally:
        proxy.shutdown()
        proxy.server_close()


def test_results_follow_the_typing_when_searches_are_slow(browser, slow_server):
    """Issue 40 row 9: typing a question at 110 ms a key, each search dropped the one before it, so one update came
    for 25 keys, after the last; now one search stays in flight and the newest keystroke's waits behind it."""
    with browser_page(browser, slow_server) as page:
        page.goto("/")
        page.evaluate("""() => { window.swaps = [];
            document.body.addEventListener('htmx:afterSwap', e => {
                if (e.detail.target.id === 'results') window.swaps.push(document.getElementById('q').value); }); }""")
        question = "how do I keep a process running after I log out"
        page.locator("#q").press_sequentially(question, delay=110)
        expect(page).to_have_url(re.compile(r"q=how(%20|\+)do.*log(%20|\+)out&"))
        expect(page.locator("#results .result-list")).to_contain_text("tmux")
        swaps = page.evaluate("window.swaps")
        assert len(swaps) >= 4, swaps  # results came while typing, not once at the end
        assert swaps[-1] == question


def test_the_window_reopens_on_the_project_last_chosen(page):
    """Issue 61: a fresh `/` opened on the alphabetically first project again, whatever was chosen."""
    page.goto("/search?q=semantic+search")
    page.select_option("#project-select", "User Docs")
    expect(page).to_have_url(re.compile(r"project=User"))
    expect(page.locator("#results .result-count")).to_be_visible()
    page.goto("/")  # a new visit, as from a bookmark or the extension's "open the window"
    expect(page.locator("#project-select")).to_have_value("User Docs")
    search(page, "semantic search")
    expect(page).to_have_url(re.compile(r"project=User"))
    page.goto("/files")
    expect(page.locator("#project-select")).to_have_value("User Docs")
    page.select_option("#project-select", "notes")  # and back: the choice is the last one made
    expect(page).to_have_url(re.compile(r"project=notes"))
    page.wait_for_load_state()
    page.goto("/")
    expect(page.locator("#project-select")).to_have_value("notes")
