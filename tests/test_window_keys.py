"""The search window as a keyboard user and a heavy vault meet it, in real headless Chromium against a real
`skmemory serve`: the keyboard keeps its place, results and files reach everything, and a note opens itself."""
from __future__ import annotations

import shutil
import sys

import pytest

from support import DEMO_NOTES, browser_page, needs_chromium, running_server, shot, sync_playwright_api

pytestmark = [pytest.mark.slow, needs_chromium]
expect = sync_playwright_api().expect
LOG_NOTES = 230  # more than a Files page (200)
WEATHER = 61  # of them tagged #weather: more than a search's first 30


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """An Obsidian vault: the demo notes and 230 daily logs, served with a recording "default application"."""
    root = tmp_path_factory.mktemp("window-keys")
    vault = root / "My Vault"
    shutil.copytree(DEMO_NOTES, vault)
    (vault / ".obsidian").mkdir()
    (vault / "Log").mkdir()
    for day in range(1, LOG_NOTES + 1):
        tag = " #weather" if day <= WEATHER else ""
        (vault / "Log" / f"Day {day:03d}.md").write_text(f"# Day {day:03d}\n\nDaily log entry {day}.{tag}\n")
    opened = root / "opened.txt"
    opener = root / "opener.py"
    opener.write_text(f"import sys\nopen({str(opened)!r}, 'a').write(sys.argv[1] + '\\n')\n")
    env = {"SKMEMORY_OPENER": f"{sys.executable} {opener}"}
    with running_server(root, vault, env=env) as live:
        yield live.url, vault, opened


@pytest.fixture
def page(browser, served):
    with browser_page(browser, served[0]) as page:
        yield page


def focused_text(page) -> str:
    return page.evaluate("() => document.activeElement?.textContent || ''")


def test_the_keyboard_keeps_its_place(page):
    page.goto("/search?q=garden")
    links = page.locator("#results [data-nav-item]")
    expect(links.nth(2)).to_be_visible()
    titles = [t.strip() for t in page.locator("#results .result-title").all_text_contents()]
    assert page.locator("#results .result-link:not([tabindex='-1'])").count() == 1  # one result in the Tab order

    page.locator("#q").press("ArrowDown")
    expect(links.first).to_be_focused()
    expect(page.locator("#doc-title")).to_have_text(titles[0])  # moving previews
    page.keyboard.press("ArrowDown")
    expect(links.nth(1)).to_be_focused()
    expect(page.locator("#doc-title")).to_have_text(titles[1])
    page.keyboard.press("Enter")
    expect(page.locator("#results .result.is-open .result-title")).to_have_text(titles[1])  # the open one is marked
    expect(links.nth(1)).to_be_focused()  # and the list keeps its place
    page.keyboard.press("ArrowDown")
    expect(links.nth(2)).to_be_focused()
    expect(page.locator("#doc-title")).to_have_text(titles[2])  # its preview lands before the panel is used
    page.keyboard.press("Escape")
    expect(page.locator("#q")).to_be_focused()

    path_copy = page.locator("#doc-panel button.copy[aria-label='Copy the path']")
    path_copy.focus()  # in the panel: / and Shift+Tab come back
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("() => !!document.activeElement.closest('#results li.result')")
    assert page.evaluate("() => document.activeElement.closest('li').querySelector('.result-title').textContent") \
        == titles[2]
    path_copy.focus()
    page.keyboard.press("/")
    expect(page.locator("#q")).to_be_focused()
    assert page.locator("#q").input_value() == "garden"  # the / was not typed into the box
    shot(page, "keyboard-place")


def test_load_more_reaches_every_result_and_says_the_true_total(page):
    page.goto("/search?m=1&tag=1&tags=weather")
    expect(page.locator("#results .result-count")).to_contain_text(f"30 of {WEATHER} documents")
    page.click("#results .load-more")
    expect(page.locator("#results .result")).to_have_count(60)
    expect(page.locator("#results .result-count")).to_contain_text(f"60 of {WEATHER} documents")
    expect(page.locator("#results [data-nav-item]").nth(30)).to_be_focused()  # the first new one
    page.click("#results .load-more")
    expect(page.locator("#results .result")).to_have_count(WEATHER)
    expect(page.locator("#results .result-count")).to_contain_text(f"{WEATHER} documents")
    expect(page.locator("#results .load-more")).to_have_count(0)


def test_files_pages_filters_and_shows_the_list_where_the_eye_is(page):
    page.set_viewport_size({"width": 400, "height": 800})
    page.goto("/files")
    page.click(".folder-link[data-folder=Log]")
    head = page.locator("#file-list .file-list-head")
    expect(head).to_contain_text("Log/")
    expect(head).to_be_in_viewport()
    expect(page.locator("#file-list .pager").first).to_contain_text(f"1–200 of {LOG_NOTES}")
    page.locator("#file-list a[rel=next]").first.click()
    expect(page.locator("#file-list .pager").first).to_contain_text(f"201–{LOG_NOTES} of {LOG_NOTES}")
    expect(page.locator("#file-list .doc-title").first).to_have_text("Day 201")
    page.fill("#file-name", "day 12")  # any case, any part of the name, within the folder shown
    expect(page.locator("#file-list .doc-title")).to_have_count(10)  # Day 120 to Day 129
    expect(page.locator("#file-list h2")).to_contain_text("named “day 12”")
    page.click(".tag-link[data-tag=weather]")
    expect(page.locator("#file-list h2")).to_contain_text("Tagged #weather")
    expect(head).to_be_in_viewport()
    shot(page, "files-narrow")


def test_a_note_opens_in_obsidian_or_with_the_default_application(page, served):
    _, vault, opened = served
    page.goto("/files?folder=Log")
    page.click("#file-list .document-link >> nth=0")
    expect(page.locator("#doc-title")).to_have_text("Day 001")
    link = page.locator("#doc-panel a.open-obsidian")
    expect(link).to_have_attribute("href", "obsidian://open?vault=My%20Vault&file=Log%2FDay%20001.md")
    page.click("#doc-panel button.open-file")
    expect(page.locator("#doc-panel .open-said")).to_contain_text("Opened with")
    for _ in range(50):  # the application starts on its own

        if opened.exists() and opened.read_text():
            break
        page.wait_for_timeout(100)
    assert opened.read_text().splitlines() == [str((vault / "Log" / "Day 001.md").resolve())]

    refused = page.evaluate("""async () => {
        const r = await fetch('/documents/no-such-id/open', {method: 'POST', headers: {'HX-Request': 'true'}});
        return [r.status, await r.text()];
    }""")
    assert refused[0] == 404 and "no-such-id" in refused[1]
    page.console_errors.remove("Failed to load resource: the server responded with a status of 404 (NOT FOUND)")


def test_o_opens_the_result_in_focus_in_obsidian(page):
    """Issue 40 row 18: no key opened a result in Obsidian; Enter opened the panel and the link was Tabs away."""
    page.goto("/search?q=garden")
    page.evaluate("""() => document.addEventListener('click', e => {  // where the browser would hand the link over
        const link = e.target.closest('a.open-obsidian');
        if (link) { e.preventDefault(); window.handedOver = link.href; } }, true)""")
    page.locator("#q").press("ArrowDown")
    first = page.locator("#results [data-nav-item]").first
    expect(first).to_be_focused()
    expect(page.locator("#doc-panel a.open-obsidian")).to_be_visible()  # previewed as the arrow stopped on it
    page.keyboard.press("o")
    title = page.locator("#doc-title").inner_text()
    handed = page.evaluate("window.handedOver")
    assert handed and handed.startswith("obsidian://open?vault=My%20Vault&file=") and "garden" in handed.lower(), handed
    assert title.replace(" ", "%20") in handed
    expect(first).to_be_focused()  # the list keeps its place
    page.locator("#q").focus()
    page.keyboard.press("End")
    page.keyboard.press("o")  # typed into the box, never a shortcut there
    expect(page.locator("#q")).to_have_value("gardeno")


def test_only_a_file_inside_its_project_is_opened(tmp_path):
    from indexer.errors import InvalidQuery
    from webapp.opener import inside_project, obsidian_url

    root, outside = tmp_path / "vault", tmp_path / "secret.txt"
    root.mkdir()
    outside.write_text("not a note")
    (root / "note.md").write_text("# Note")
    (root / "escape.md").symlink_to(outside)
    doc = {"absolute_path": str(root / "note.md"), "path": "note.md"}
    assert inside_project(doc) == (root / "note.md").resolve()
    assert obsidian_url(doc) is None  # not an Obsidian vault: no link to Obsidian
    with pytest.raises(InvalidQuery, match="leads out of the project"):
        inside_project({"absolute_path": str(root / "escape.md"), "path": "escape.md"})
    with pytest.raises(InvalidQuery, match="no longer a file"):
        inside_project({"absolute_path": str(root / "gone.md"), "path": "gone.md"})


def test_on_a_narrow_window_arrows_preview_without_leaving_the_list(page):
    page.set_viewport_size({"width": 400, "height": 800})
    page.goto("/search?q=garden")
    links = page.locator("#results [data-nav-item]")
    expect(links.nth(1)).to_be_visible()
    second = page.locator("#results .result-title").nth(1).text_content().strip()
    page.locator("#q").press("ArrowDown")
    page.keyboard.press("ArrowDown")
    expect(page.locator("#doc-title")).to_have_text(second)  # previewed in the panel below the list
    expect(links.nth(1)).to_be_focused()
    expect(links.nth(1)).to_be_in_viewport()  # and the page did not jump down to it
    page.keyboard.press("Enter")  # opening is what brings the panel, at its matching passage, into view
    expect(page.locator("#doc-panel #match")).to_be_in_viewport()
    expect(links.nth(1)).to_be_focused()
