"""Cluster View in real headless Chromium (WebGL through SwiftShader) against a real `skmemory serve`."""
from __future__ import annotations

import json
import os
import shutil
import urllib.parse
import urllib.request

import warnings

import pytest

from support import REPO, SHOTS, ChromiumStalled, browser_page, relaunched, shot
from test_browser import expect, server  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow
README_SHOT = REPO / "docs" / "screenshots" / "cluster-view.png"
QUERY = "baking bread with a starter"


def api(server: str, path: str, **params) -> dict:
    with urllib.request.urlopen(f"{server}{path}?{urllib.parse.urlencode(params)}", timeout=30) as response:
        return json.load(response)


def on_a_page(browser, server: str, check) -> None:
    """CHECK on a fresh page, and once more on a fresh Chromium if the first one stopped answering: WebGL drawn by
    SwiftShader has stalled Chromium in this module twice in CI (each time in the first test, the rest of the run
    passing), never here in dozens of runs. A second stall fails the test, saying what Chromium was doing."""
    try:
        with browser_page(relaunched(browser), server) as page:
            check(page)
        return
    except ChromiumStalled as stall:
        warnings.warn(f"{stall}; running the test once more on a fresh Chromium")
    with browser_page(relaunched(browser), server) as page:
        check(page)


def click_node(page, node_id: str) -> None:
    """Click a node where the renderer draws it."""
    x, y = page.evaluate("""id => {
        const r = window.skmCluster.renderer, a = window.skmCluster.graph.getNodeAttributes(id);
        const p = r.graphToViewport({x: a.x, y: a.y}), box = r.getContainer().getBoundingClientRect();
        return [box.left + p.x, box.top + p.y];
    }""", node_id)
    page.mouse.move(x - 30, y - 30)
    page.mouse.move(x, y, steps=4)
    page.mouse.click(x, y)


def test_typing_lights_up_semantic_matches_and_a_click_opens_the_panel(browser, server):
    on_a_page(browser, server, lambda page: typing_lights_up_semantic_matches(page, server))


def typing_lights_up_semantic_matches(page, server: str) -> None:
    page.goto("/cluster?project=notes")
    page.wait_for_function("() => window.skmCluster && window.skmCluster.ready")
    graph = api(server, "/api/graph", project="notes")
    assert page.evaluate("() => window.skmCluster.graph.order") == len(graph["nodes"])
    expect(page.locator("#cluster-legend li")).to_have_count(len(graph["clusters"]))
    expect(page.locator("#cluster-status")).to_contain_text(f"{len(graph['nodes'])} documents")
    expect(page.locator("nav a[aria-current=page]")).to_have_text("Cluster View")

    page.locator("#cluster-q").press_sequentially(QUERY, delay=10)
    page.wait_for_function("q => { const s = window.skmCluster; return s.query === q && !s.searching && s.mode }",
                           arg=QUERY)
    found = api(server, "/api/search", project="notes", mode="semantic", limit=50, q=QUERY)
    expected = list(dict.fromkeys(r["document_id"] for r in found["results"]))
    assert expected and page.evaluate("() => window.skmCluster.highlighted") == expected
    assert page.evaluate("() => window.skmCluster.mode") == "semantic"
    expect(page.locator("#cluster-matches li")).to_have_count(len(expected))
    expect(page.locator("#cluster-matches li").first).to_contain_text("Sourdough")

    page.locator("#cluster-q").press("Enter")  # centres the camera on the best match
    page.wait_for_function("() => window.skmCluster.renderer.getCamera().ratio < 0.3")
    page.wait_for_timeout(500)  # the camera animation ends
    click_node(page, expected[0])
    expect(page.locator("#doc-title")).to_have_text("Sourdough")
    assert page.evaluate("() => window.skmCluster.selected") == expected[0]

    page.locator("#cluster-q").fill("")
    page.wait_for_function("() => window.skmCluster.highlighted.length === 0 && window.skmCluster.mode === null")
    page.evaluate("() => window.skmCluster.renderer.getCamera().animatedReset({duration: 0})")
    page.locator("#cluster-q").fill(QUERY)
    page.wait_for_function("() => window.skmCluster.highlighted.length > 0 && !window.skmCluster.searching")
    page.wait_for_timeout(300)
    shot(page, "cluster-view")
    if os.environ.get("SKMEMORY_SCREENSHOTS"):  # refresh the README's picture on request
        README_SHOT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SHOTS / "cluster-view.png", README_SHOT)


def test_legend_and_filters_hide_nodes_and_all_projects_loads(browser, server):
    on_a_page(browser, server, legend_and_filters_hide_nodes)


def legend_and_filters_hide_nodes(page) -> None:
    page.goto("/cluster?project=notes")
    page.wait_for_function("() => window.skmCluster && window.skmCluster.ready")
    hidden = ("() => window.skmCluster.graph.nodes()"
              ".filter(n => window.skmCluster.renderer.getNodeDisplayData(n)?.hidden).length")
    assert page.evaluate(hidden) == 0
    page.locator("#cluster-legend input").first.uncheck()
    size = page.evaluate("() => window.skmCluster.data.clusters[0].size")
    assert page.evaluate(hidden) == size
    page.locator("#cluster-legend input").first.check()
    page.select_option("#cluster-folder", "Projects")
    outside = page.evaluate("() => window.skmCluster.data.nodes.filter(n => n.folder !== 'Projects').length")
    assert page.evaluate(hidden) == outside

    page.goto("/cluster?scope=all")
    page.wait_for_function("() => window.skmCluster && window.skmCluster.ready")
    projects = page.evaluate("() => [...new Set(window.skmCluster.data.nodes.map(n => n.project))].sort()")
    assert projects == ["User Docs", "notes"]
