"""Cluster View at scale: time to build the Forge Graph, time to first render, and frames per second while
panning, measured in real Chromium.

Run by hand (not part of the test suite):

    .venv/bin/python tests/bench/bench_graph.py ../shared/corpora/tldr-en --home /tmp/skm-bench-graph

The folder is indexed and embedded with the real model first (with --home the index is kept and reused, so
later runs skip straight to the graph). Then, on the engine every surface uses:

- build, fresh layout: the graph built with no stored positions (clusters, exact semantic edges, layout);
- build, stored layout: rebuilt after a change, positions read back from the index;
- cached: asked again with nothing changed.

Then `/cluster` is served on a free localhost port and opened in headless Chromium (WebGL on SwiftShader,
the CPU, unless the machine gives Chromium a GPU): the page's own timings from navigation start to the
graph fetched and to sigma's first frame; then the frames sigma draws per second while the mouse drags the
canvas for --seconds (each move waits for the page to take it, as a user's would; edges are hidden while the
camera moves, as in the page), and while the camera is moved on every animation frame for --seconds (how fast
it can draw). --screenshot saves the page with a query lit up.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from indexer.config import Settings  # noqa: E402
from indexer.engine import Engine  # noqa: E402
from indexer.errors import ProjectNotFound  # noqa: E402
from indexer.graph import ForgeGraphs  # noqa: E402
from indexer.home import Home  # noqa: E402

CHROMIUM = "/usr/lib/chromium/chromium"
ARGS = ["--headless=new", "--no-sandbox", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


def prepare(home: Home, folder: Path, name: str) -> None:
    """Index and embed the folder (a no-op for an index kept with --home that is already complete)."""
    try:
        home.project(name)
    except ProjectNotFound:
        home.add_project(folder, name)
    with home.open_project(name, role="bench") as project:
        started = time.perf_counter()
        project.sync()
        pending = project.store.counts()["pending"]
        if pending:
            print(f"embedding {pending} chunks with the real model (once per --home)...", flush=True)
            project.embed_pending()
        print(f"index ready in {time.perf_counter() - started:.1f} s: {project.store.counts()}")


def timed(fn):
    started = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - started


def bench_build(engine: Engine, name: str) -> dict:
    store = engine.writer(name).store
    index = engine.index(name)
    with store.lock, store.conn:
        store.conn.execute("DELETE FROM graph_positions")
    fresh, fresh_s = timed(lambda: engine.graphs.graph(name))
    # rebuilt, its positions read back
    stored, stored_s = timed(lambda: ForgeGraphs(lambda *_: [index], engine.search).graph())
    cached, cached_s = timed(lambda: engine.graphs.graph(name))
    assert fresh["stats"]["laid_out_afresh"] and not stored["stats"]["laid_out_afresh"] and cached["cached"]
    assert [n["x"] for n in fresh["nodes"]] == [n["x"] for n in stored["nodes"]]
    s = fresh["stats"]
    print(f"graph: {s['documents']} documents ({s['embedded_documents']} embedded), {s['link_edges']} link edges, "
          f"{s['semantic_edges']} semantic edges, {len(fresh['clusters'])} clusters, "
          f"{len(json.dumps(fresh)) / 1e6:.1f} MB of JSON")
    print(f"build, fresh layout:  {fresh_s:.2f} s")
    print(f"build, stored layout: {stored_s:.2f} s")
    print(f"cached:               {cached_s * 1000:.0f} ms")
    return fresh


@contextlib.contextmanager
def serving(engine: Engine):
    from werkzeug.serving import make_server

    from webapp import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = make_server("127.0.0.1", port, create_app({"ENGINE": engine, "SKMEMORY_PORT": port}), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.shutdown()


PAN_COUNTER = """() => {
    const s = window.skmCluster;
    s.bench = {renders: 0, frames: 0, running: true};
    s.renderer.on("afterRender", () => { s.bench.renders += 1; });
    const tick = () => { s.bench.frames += 1; if (s.bench.running) requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
}"""


CAMERA_PAN = """seconds => new Promise(done => {
    const s = window.skmCluster, camera = s.renderer.getCamera();
    let renders = 0;
    const count = () => { renders += 1; };
    s.renderer.on("afterRender", count);
    const start = performance.now();
    const step = now => {
        const t = (now - start) / 1000;
        if (t >= seconds) {
            s.renderer.off("afterRender", count);
            return done({renders, seconds: t});
        }
        camera.setState({x: 0.5 + 0.2 * Math.sin(t * 2), y: 0.5 + 0.1 * Math.cos(t * 2)});
        requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
})"""


def bench_browser(url: str, name: str, seconds: float, screenshot: Path | None) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        started = time.perf_counter()
        page.goto(f"{url}/cluster?project={name}")
        page.wait_for_function("() => window.skmCluster && (window.skmCluster.ready || window.skmCluster.error)",
                               timeout=120_000)
        wall = time.perf_counter() - started
        timings = page.evaluate("() => window.skmCluster.timings")
        renderer = page.evaluate("""() => {
            const c = document.createElement('canvas').getContext('webgl2');
            const info = c && c.getExtension('WEBGL_debug_renderer_info');
            return info ? c.getParameter(info.UNMASKED_RENDERER_WEBGL) : 'unknown';
        }""")
        print(f"browser: {renderer}")
        print(f"page: graph fetched and parsed at {timings['fetch_ms']} ms, first render at "
              f"{timings['first_render_ms']} ms after navigation start; ready {wall:.2f} s after goto")
        box = page.locator("#cluster-canvas").bounding_box()
        cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.evaluate(PAN_COUNTER)
        page.mouse.move(cx, cy)
        page.mouse.down()
        began, step = time.perf_counter(), 0
        while time.perf_counter() - began < seconds:
            step += 1
            dx = 150 * ((step // 60) % 2 * 2 - 1)  # back and forth
            page.mouse.move(cx + dx * (step % 60) / 60, cy + dx * (step % 60) / 120)
        page.mouse.up()
        elapsed = time.perf_counter() - began
        counts = page.evaluate("() => { window.skmCluster.bench.running = false; return window.skmCluster.bench; }")
        print(f"panning {elapsed:.1f} s ({step} mouse moves): {counts['renders'] / elapsed:.1f} frames drawn/s, "
              f"{counts['frames'] / elapsed:.1f} animation frames/s")
        page.evaluate("() => window.skmCluster.renderer.getCamera().animatedReset({duration: 0})")
        page.wait_for_timeout(300)
        own = page.evaluate("""() => {
            const r = window.skmCluster.renderer, t0 = performance.now();
            for (let i = 0; i < 20; i++) r.render();
            return (performance.now() - t0) / 20;
        }""")
        print(f"sigma's own work per frame (JavaScript, the rest is the GPU's): {own:.1f} ms")
        glide = page.evaluate(CAMERA_PAN, seconds)
        print(f"camera panned each frame for {glide['seconds']:.1f} s: {glide['renders'] / glide['seconds']:.1f} "
              f"frames drawn/s")
        if screenshot:
            page.reload()  # nothing left hovered by the panning
            page.wait_for_function("() => window.skmCluster && window.skmCluster.ready", timeout=120_000)
            page.fill("#cluster-q", "compress files into an archive")
            page.wait_for_function("() => window.skmCluster.highlighted.length && !window.skmCluster.searching")
            page.locator("#cluster-matches a").first.click()  # the panel opens; the camera goes there...
            page.locator("#doc-title").wait_for()
            page.evaluate("() => window.skmCluster.renderer.getCamera().animatedReset({duration: 0})")  # ...and back
            page.wait_for_timeout(800)
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot))
            print(f"screenshot: {screenshot}")
        assert not errors, errors
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, nargs="?", default=Path("../shared/corpora/tldr-en"),
                        help="folder to index (default ../shared/corpora/tldr-en)")
    parser.add_argument("--home", type=Path, help="keep the data home (and its index) here, to reuse it")
    parser.add_argument("--name", default="bench")
    parser.add_argument("--seconds", type=float, default=5.0, help="how long to pan (default 5)")
    parser.add_argument("--screenshot", type=Path, help="save the page with a query lit up, e.g. "
                                                         "docs/screenshots/cluster-view.png")
    parser.add_argument("--no-browser", action="store_true", help="only time the graph data")
    args = parser.parse_args()
    if not args.path.is_dir():
        parser.error(f"{args.path} is not a folder")
    with contextlib.ExitStack() as stack:
        folder = args.home or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="skm-bench-graph-")))
        home = Home(Settings.from_env(folder))
        prepare(home, args.path, args.name)
        engine = Engine(home)
        stack.callback(engine.close)
        home.embedder.load()  # as `serve` does at start; the graph is timed without it
        engine.writer(args.name)  # the project as `serve` opens it
        engine.index(args.name).cache.ensure_loaded()
        bench_build(engine, args.name)
        if not args.no_browser:
            with serving(engine) as url:
                bench_browser(url, args.name, args.seconds, args.screenshot)


if __name__ == "__main__":
    main()
