"""A search that arrives while the model still loads answers by keyword at once and says why (the server's way)."""
from __future__ import annotations

import html
import re
import threading
import time

from indexer import Engine
from indexer.config import Settings
from indexer.home import Home
from indexer.model.embeddings import Embedder
from support import app_client
from webapp import create_app
from indexer import SearchRequest


def test_a_search_before_the_model_is_ready_answers_by_keyword_and_says_so(home, vault):
    home.add_project(vault, "notes")
    indexed = Engine(home)
    indexed.embed_pending("notes")
    indexed.close()

    fresh = Embedder()  # a server just started: its model has not loaded yet
    fresh.wait_for_load = False
    release, real_load = threading.Event(), fresh.load

    def held_load():  # the real load, held until the checks below have seen the loading state
        release.wait(60)
        return real_load()

    fresh.load = held_load
    engine = Engine(Home(Settings.from_env(), embedder=fresh))
    try:
        started = time.monotonic()
        first = engine.search(SearchRequest("sourdough bread", mode="hybrid"))
        answered_in = time.monotonic() - started
        assert first["semantic_available"] is False and "still loading" in first["semantic_reason"]
        assert first["results"][0]["path"] == "Projects/Sourdough.md"  # the keyword side answered
        assert fresh.now.loading, "the first search answered before the model had loaded"
        vault_first = engine.search(SearchRequest("sourdough bread", mode="vault"))
        assert vault_first["search_mode"] == "fts" and "still loading" in vault_first["semantic_reason"]
        # A question no note holds every word of is answered by the words it does hold (BM25), and says so.
        question = "when should I feed the starter before the fence party"
        asked = engine.search(SearchRequest(question, mode="vault"))
        assert asked["search_mode"] == "fts" and asked["results"][0]["path"] == "Projects/Sourdough.md"
        by_hybrid = engine.search(SearchRequest(question, mode="hybrid"))
        assert by_hybrid["results"][0]["path"] == "Projects/Sourdough.md"
        assert by_hybrid["results"][0]["partial"] and "feed" in by_hybrid["results"][0]["matched_words"]
        assert "still loading" in by_hybrid["semantic_reason"]
        window = app_client(create_app({"TESTING": True, "ENGINE": engine, "SKMEMORY_PORT": 8765}))
        page = window.get("/search?q=sourdough", base_url="http://127.0.0.1:8765").get_data(as_text=True)
        notice = " ".join(page.split())
        assert "Meaning search is still loading" in notice and "Sourdough" in page
        # The notice asks again every second; while the model loads, the answer is "nothing yet" (204, no swap).
        again = re.search(r'hx-get="([^"]*when_ready=1[^"]*)" hx-trigger="every 1s"', page)
        assert again, "the notice does not re-run the search"
        rerun = html.unescape(again.group(1))
        assert window.get(rerun, base_url="http://127.0.0.1:8765").status_code == 204

        release.set()
        deadline = time.monotonic() + 120
        while not fresh.now.ready:
            assert time.monotonic() < deadline, fresh.now.reason
            time.sleep(0.1)
        answered = window.get(rerun, headers={"HX-Request": "true"}, base_url="http://127.0.0.1:8765")
        assert answered.status_code == 200  # the model is there: the same search, now by meaning too
        again_page = answered.get_data(as_text=True)
        assert "still loading" not in again_page and "Sourdough" in again_page
        assert re.search(r'class="badge badge-(hybrid|semantic)"', again_page)
        later = engine.search(SearchRequest("baking bread at home", mode="hybrid"))
        assert later["semantic_available"] is True and "semantic_reason" not in later
        assert any(r["search_type"] in ("semantic", "hybrid") for r in later["results"])
        print(f"\nfirst answer {answered_in * 1000:.0f} ms, while the model loaded")
    finally:
        engine.close()


def test_a_server_stopped_while_the_model_loads_does_not_wait_for_the_load(home, vault):
    from indexer import BackgroundIndexer

    home.add_project(vault, "notes")
    fresh = Embedder()
    release, real_load, entered, loaded = threading.Event(), fresh.load, threading.Event(), threading.Event()

    def held_load():  # a model that takes longer to load than anyone waits for a stop
        entered.set()
        release.wait(120)
        try:
            return real_load()
        finally:
            loaded.set()

    fresh.load = held_load
    background = BackgroundIndexer(Home(Settings.from_env(), embedder=fresh), role="tests").start()
    assert background.wait_idle(60)  # parsed and keyword-searchable; the embedder thread waits on the model
    stopper = threading.Thread(target=background.stop)
    stopper.start()
    stopper.join(20)  # the embedder thread was joined for up to 30 s
    stopped = not stopper.is_alive()
    release.set()
    if entered.is_set():  # the load ends inside the test: ONNX Runtime half-loaded at exit aborts the process
        loaded.wait(120)
    assert stopped, "stop() waited for the model to load"
