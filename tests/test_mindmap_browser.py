"""The Mind Map page in real headless Chromium against a real `skmemory serve`: open, edit, add, remove, Save."""
from __future__ import annotations

import json
import re
import shutil

import pytest

from support import (DEMO_NOTES, GARDEN, REPO, browser_page, needs_chromium, running_server, wait_across,
                     sync_playwright_api)
from test_mcp import api

SHOTS = REPO / "test-output" / "screenshots"
MAP = "Maps/Garden.mmdata"

pytestmark = [pytest.mark.slow, needs_chromium]
sync_api = sync_playwright_api()
expect = sync_api.expect


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`skmemory serve` on the demo notes plus the Garden map, once everything is embedded."""
    root = tmp_path_factory.mktemp("mindmap-browser")
    vault = root / "vault"
    shutil.copytree(DEMO_NOTES, vault)
    (vault / "Maps").mkdir()
    shutil.copy(GARDEN, vault / MAP)
    with running_server(root, vault) as live:
        wait_across(live.port)  # a save waits for its new passages' vectors, not behind the background's first work
        yield live.port, vault


@pytest.fixture
def page(browser, server):
    with browser_page(browser, f"http://127.0.0.1:{server[0]}") as page:
        yield page


def label(page, title: str):
    return page.locator("#mm-tree .mm-label").filter(has_text=re.compile(f"^{re.escape(title)}$"))


def test_open_edit_add_remove_and_save_a_map(page, server):
    port, vault = server
    page.goto("/mindmap?project=notes")
    page.get_by_role("link", name=re.compile("Garden")).click()
    expect(page.locator("#mm-tree")).to_contain_text("Raised beds")
    expect(page.locator("#mindmap")).to_have_attribute("data-active", "true")  # opening made it the active map
    assert api(port, "/api/mindmaps/active")["map"]["path"] == MAP
    expect(page.locator("#mm-node-title")).to_have_value("Garden")  # the root is selected first

    label(page, "Watering").click()
    expect(page.locator("#mm-node-body")).to_have_value(re.compile("^A drip line on a timer"))
    page.locator("#mm-node-title").fill("Irrigation")
    page.locator("#mm-node-body").press("End")
    page.locator("#mm-node-body").type(" Clean the filter every spring.")
    page.locator("#mm-node-tags").fill("water, irrigation")
    expect(label(page, "Irrigation")).to_be_visible()
    expect(page.locator("#mm-dirty")).to_be_visible()

    label(page, "Tomatoes").click()
    page.get_by_role("button", name="Add child").click()
    page.locator("#mm-node-title").fill("Cherry tomatoes")
    page.locator("#mm-node-body").fill("Sungold in the hanging basket by the kitchen door.")
    expect(page.locator('#mm-tree [aria-level="4"] > .mm-label')).to_have_text("Cherry tomatoes")

    label(page, "Herbs").click()
    page.get_by_role("button", name="Remove node").click()
    expect(label(page, "Herbs")).to_have_count(0)

    page.get_by_role("button", name="Save").click()
    expect(page.locator("#mm-status")).to_have_text("Saved revision 2 · node index current.")
    expect(page.locator("#mm-dirty")).to_be_hidden()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "mindmap-editor.png"))

    saved = json.loads((vault / MAP).read_text())
    nodes = {n["id"]: n for n in saved["nodes"]}
    assert saved["revision"] == 2 and "herbs" not in nodes
    assert nodes["watering"]["title"] == "Irrigation" and nodes["watering"]["tags"] == ["water", "irrigation"]
    assert nodes["watering"]["body"].endswith("Clean the filter every spring.")
    cherry = next(n for n in saved["nodes"] if n["title"] == "Cherry tomatoes")
    assert cherry["parent"] == "tomatoes"
    assert "zebrastripe" in nodes["tomatoes"]["private_notes"]  # kept, though the page never shows it
    assert nodes["watering"]["attachments"][0]["path"].endswith("quarksprocket-manual.pdf")

    found = api(port, "/api/mindmaps/search_nodes?q=sungold+hanging+basket&limit=3")
    assert found["index_state"] == "current"
    assert found["results"][0]["path"] == ["Garden", "Raised beds", "Tomatoes", "Cherry tomatoes"]

    page.reload()
    expect(label(page, "Irrigation")).to_be_visible()
    expect(page.locator("#mm-revision")).to_have_text("2")


def test_a_stale_save_is_refused_with_a_sentence(page, server):
    port, vault = server
    page.goto(f"/mindmap?project=notes&path={MAP}")
    expect(page.locator("#mindmap")).to_have_attribute("data-active", "true")
    on_disk = json.loads((vault / MAP).read_text())
    on_disk["revision"] += 1  # another program saved the map meanwhile
    (vault / MAP).write_text(json.dumps(on_disk, indent=2))
    page.locator("#mm-node-title").fill("Our garden")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#mm-error")).to_contain_text("reload the map")
    expect(page.locator("#mm-dirty")).to_be_visible()
    assert page.console_errors == ["Failed to load resource: the server responded with a status of 409 (CONFLICT)"]
    page.console_errors.clear()  # Chromium logs the refused save; that refusal is what this test wants


def test_create_a_new_map(page, server):
    port, vault = server
    page.goto("/mindmap?project=notes")
    page.get_by_label("Title").fill("Trips")
    page.get_by_label("File").fill("Maps/Trips")
    page.get_by_role("button", name="Create").click()
    expect(page.locator("#mm-node-title")).to_have_value("Trips")
    assert json.loads((vault / "Maps" / "Trips.mmdata").read_text())["revision"] == 1
    page.goto("/mindmap?project=notes")
    expect(page.locator("#mm-maps")).to_contain_text("Trips")
