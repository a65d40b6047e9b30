"""The Forge Graph of Cluster View: its API on a real vault with the real model, and the page around it."""
from __future__ import annotations

import math

import numpy as np
import pytest

from flask import template_rendered

from indexer.config import Settings
from indexer.content.docs import USER_DOCS_NAME, ensure_user_docs
from indexer.model.embeddings import NOT_LOADED, Embedder
from indexer.engine import Engine
from indexer.graph.build import SEMANTIC_THRESHOLD, semantic_edges
from indexer.graph.clusters import kmeans
from indexer.graph.layout import SPACING
from indexer.graph.source import read_source
from indexer.home import Home
from webapp import create_app
from support import WordEmbedder, app_client
from indexer import LightRequest

BASE = "http://127.0.0.1:8765"


def engine_in(home, vault, name="notes") -> Engine:
    home.add_project(vault, name)
    engine = Engine(home)
    engine.reindex(name)
    if home.embedder.load():
        engine.embed_pending(name)
    return engine


@pytest.fixture
def engine(home, vault):
    engine = engine_in(home, vault)
    yield engine
    engine.close()


@pytest.fixture
def client(engine):
    return app_client(create_app({"TESTING": True, "ENGINE": engine, "SKMEMORY_PORT": 8765}))


def get(client, path, status=200):
    response = client.get(path, base_url=BASE)
    assert response.status_code == status, response.get_json()
    return response.get_json()


def by_path(graph) -> dict:
    """A graph keyed by paths, which (unlike document ids) two indexes of the same vault share."""
    path = {n["id"]: n["path"] for n in graph["nodes"]}
    labels = {c["id"]: c["label"] for c in graph["clusters"]}
    return {
        "nodes": sorted((n["path"], n["title"], labels[n["cluster"]], n["size"], n["x"], n["y"])
                        for n in graph["nodes"]),
        "edges": sorted((path[e["source"]], path[e["target"]], e["kind"], e["weight"]) for e in graph["edges"]),
        "clusters": [(c["label"], c["color"], c["size"]) for c in graph["clusters"]],
    }


def refresh(engine, name="notes"):
    project = engine.writer(name)
    project.sync()
    if project.embedder.load():
        project.embed_pending()


def test_graph_has_nodes_edges_clusters_and_positions(client, engine):
    graph = get(client, "/api/graph?project=notes")
    docs = engine.documents("notes")["documents"]
    assert {n["id"] for n in graph["nodes"]} == {d["document_id"] for d in docs}
    assert graph["semantic"] and graph["layout"] == "semantic" and graph["notice"] is None
    assert graph["stats"]["embedded_documents"] == len(docs)
    node = next(n for n in graph["nodes"] if n["title"] == "Garden plan")
    assert node["path"] == "Projects/Garden plan.md" and node["folder"] == "Projects" and node["chunks"] >= 1
    assert set(node) >= {"id", "title", "path", "tags", "folder", "cluster", "size", "x", "y"}
    titles = {n["id"]: n["title"] for n in graph["nodes"]}
    links = {frozenset((titles[e["source"]], titles[e["target"]])) for e in graph["edges"] if e["kind"] == "link"}
    # [[Compost log]]; and Welcome links [[Search tips]], whose related_to names [[Welcome]] back: one edge a pair.
    assert links == {frozenset(("Garden plan", "Compost log")), frozenset(("Welcome to SK Memory", "Search tips"))}
    assert all(e["weight"] >= SEMANTIC_THRESHOLD for e in graph["edges"] if e["kind"] == "semantic")
    assert [c["id"] for c in graph["clusters"]] == list(range(len(graph["clusters"])))
    assert sum(c["size"] for c in graph["clusters"]) == len(docs)
    assert all(c["label"] and c["color"].startswith("#") for c in graph["clusters"])
    points = [(n["x"], n["y"]) for n in graph["nodes"]]
    assert len(set(points)) == len(points)
    again = get(client, "/api/graph?project=notes")
    assert again["cached"] and again["nodes"] == graph["nodes"] and again["edges"] == graph["edges"]


def test_the_same_vault_gives_the_same_graph_in_another_data_home(engine, vault, tmp_path, real_embedder):
    first = by_path(engine.graphs.graph("notes"))
    other = engine_in(Home(Settings.from_env(tmp_path / "home2"), embedder=real_embedder), vault)
    try:
        assert by_path(other.graphs.graph("notes")) == first
    finally:
        other.close()


def test_graph_follows_added_edited_and_deleted_documents(client, engine, vault):
    before = get(client, "/api/graph?project=notes")
    where = {n["path"]: (n["x"], n["y"]) for n in before["nodes"]}

    (vault / "Projects" / "Tomatoes.md").write_text(
        "# Tomatoes\n\nPlanting tomatoes in the vegetable garden beds this spring, beside the beans.\n")
    refresh(engine)
    added = get(client, "/api/graph?project=notes")
    assert not added["cached"] and not added["stats"]["laid_out_afresh"]
    now = {n["path"]: (n["x"], n["y"]) for n in added["nodes"]}
    assert {p: now[p] for p in where} == where  # nobody else moved
    src = read_source(engine.index("notes"))
    sims = src.vectors @ src.vectors[src.paths.index("Projects/Tomatoes.md")]
    sims[src.paths.index("Projects/Tomatoes.md")] = -1
    neighbour = src.paths[int(np.argmax(sims))]
    spot = now["Projects/Tomatoes.md"]
    assert math.dist(spot, where[neighbour]) == pytest.approx(SPACING, abs=1e-3)  # beside its nearest neighbour
    assert min(math.dist(spot, xy) for xy in where.values()) >= 0.8 * SPACING - 1e-3  # and clear of the others

    garden = vault / "Projects" / "Garden plan.md"
    garden.write_text(garden.read_text() + "\nSee also [[Sourdough]].\n")
    refresh(engine)
    edited = get(client, "/api/graph?project=notes")
    assert {n["path"]: (n["x"], n["y"]) for n in edited["nodes"]} == now
    titles = {n["id"]: n["title"] for n in edited["nodes"]}
    assert ("Garden plan", "Sourdough") in {(titles[e["source"]], titles[e["target"]])
                                                   for e in edited["edges"] if e["kind"] == "link"}

    (vault / "Projects" / "Compost log.md").unlink()
    refresh(engine)
    engine.refresh_graphs()  # as the server does in the background after notes change
    deleted = get(client, "/api/graph?project=notes")
    assert deleted["cached"]  # built before it was asked for: Cluster View's open does not wait for it
    paths = {n["path"]: (n["x"], n["y"]) for n in deleted["nodes"]}
    assert "Projects/Compost log.md" not in paths
    assert paths == {p: xy for p, xy in now.items() if p != "Projects/Compost log.md"}
    ids = {n["id"] for n in deleted["nodes"]}
    assert all(e["source"] in ids and e["target"] in ids for e in deleted["edges"])
    stored = engine.index("notes").sql("SELECT count(*) FROM graph_positions")[0][0]
    assert stored == len(deleted["nodes"])


def test_a_note_deleted_while_the_graph_is_built_is_left_out_of_the_saved_positions(engine, vault):
    """The server builds graphs in the background from a read snapshot and saves positions through the writer: a
    sync that deletes a note in between made the save fail ("FOREIGN KEY constraint failed") and logged a traceback."""
    from indexer.graph import ForgeGraphs

    def sync_then_save(name, changed, gone, afresh):
        (vault / "Projects" / "Compost log.md").unlink()
        engine.writer(name).sync()  # lands after the graph read its notes, before their positions are kept
        engine._save_positions(name, changed, gone, afresh)

    graphs = ForgeGraphs(engine._scope_indexes, engine.search, sync_then_save)
    graph = graphs.graph("notes")
    assert "Projects/Compost log.md" in {n["path"] for n in graph["nodes"]}  # drawn from what it read
    index = engine.index("notes")
    kept = index.sql("SELECT d.rel_path FROM graph_positions g JOIN documents d USING (document_id)")
    drawn = [n["path"] for n in graph["nodes"]]
    assert sorted(r[0] for r in kept) == sorted(p for p in drawn if p != "Projects/Compost log.md")
    refreshed = engine.graphs.graph("notes")
    assert "Projects/Compost log.md" not in {n["path"] for n in refreshed["nodes"]}


def test_graph_search_lights_up_what_semantic_search_returns(client):
    query = "baking bread with a starter"
    lit = get(client, f"/api/graph/search?project=notes&q={query}")
    found = get(client, f"/api/search?project=notes&mode=semantic&limit=50&q={query}")
    assert lit["mode"] == "semantic" and lit["notice"] is None
    assert [m["id"] for m in lit["matches"]] == list(dict.fromkeys(r["document_id"] for r in found["results"]))
    assert lit["matches"][0]["title"] == "Sourdough"
    assert get(client, "/api/graph/search?project=notes&q=", 400)["error"] == "invalid_request"
    assert get(client, "/api/graph?project=notes&scope=nowhere", 400)["error"] == "invalid_request"
    assert get(client, "/api/graph?project=nowhere", 404)["error"] == "not_found"


def test_all_projects_sit_side_by_side_with_prefixed_ids(engine, client):
    ensure_user_docs(engine.home)
    engine.embed_pending(USER_DOCS_NAME)
    graph = get(client, "/api/graph?scope=all")
    assert graph["scope"] == "all" and set(graph["projects"]) == {"notes", USER_DOCS_NAME}
    assert all(n["id"] == f"{n['project']}:{n['document_id']}" for n in graph["nodes"])
    assert all(c["label"].startswith(c["project"] + ": ") for c in graph["clusters"])
    right_of = {p: [n["x"] for n in graph["nodes"] if n["project"] == p] for p in graph["projects"]}
    first, second = graph["projects"]
    assert max(right_of[first]) < min(right_of[second])
    lit = get(client, "/api/graph/search?scope=all&q=baking bread with a starter")
    assert lit["matches"][0]["id"] in {n["id"] for n in graph["nodes"]}


def test_without_embeddings_the_graph_groups_by_folder_and_search_says_keyword(data_home, vault, real_embedder):
    engine = engine_in(Home(Settings.from_env(), embedder=Embedder(data_home / "missing-model")), vault)
    try:
        graph = engine.graphs.graph("notes")
        assert not graph["semantic"] and graph["layout"] == "folder" and "unavailable" in graph["notice"]
        assert not [e for e in graph["edges"] if e["kind"] == "semantic"]
        assert sorted(c["label"] for c in graph["clusters"]) == [
            "(top level)", "Conversations", "Journal", "Projects", "Reference"]
        lit = engine.graphs.search(LightRequest("sourdough", "notes"))
        assert lit["mode"] == "keyword" and "keyword" in lit["notice"]
        assert lit["matches"][0]["title"] == "Sourdough"
    finally:
        engine.close()
    # The model comes back: once the documents are embedded, the folder layout gives way to one by meaning.
    engine = Engine(Home(Settings.from_env(), embedder=real_embedder))
    try:
        engine.embed_pending("notes")
        graph = engine.graphs.graph("notes")
        assert graph["semantic"] and graph["stats"]["laid_out_afresh"] and graph["notice"] is None
        assert engine.graphs.search(LightRequest("baking bread with a starter", "notes"))["mode"] == "semantic"
    finally:
        engine.close()


class StillLoading(WordEmbedder):
    """The model of a server in its first seconds: not loaded yet, while every passage has its stored vector."""

    now = NOT_LOADED

    def load(self) -> bool:
        return False

    def ready_for_queries(self) -> bool:
        return False


def test_while_the_model_loads_the_graph_is_laid_out_by_meaning_from_the_stored_vectors(make_engine):
    """Issue 40 row 11: Cluster View opened in the first seconds said "Embeddings are unavailable" and grouped by
    folder, though every note had its vectors; a graph needs the stored vectors, not the model."""
    engine = make_engine(embedder="words")
    engine.index("notes").embedder = StillLoading()
    graph = engine.graphs.graph("notes")
    assert graph["semantic"] and graph["layout"] == "semantic" and graph["notice"] is None
    assert graph["stats"]["embedded_documents"] == graph["stats"]["documents"]
    lit = engine.graphs.search(LightRequest("sourdough",
                                            "notes"))  # a query does need the model: by keyword meanwhile, saying so
    assert lit["mode"] == "keyword" and "keyword" in lit["notice"]


def test_semantic_edges_are_the_exact_top_k_and_clusters_are_deterministic():
    rng = np.random.default_rng(7)
    v = rng.normal(size=(300, 16)).astype(np.float32)
    v[:150] += 3 * rng.normal(size=16).astype(np.float32)  # two groups
    v[150:] += 3 * rng.normal(size=16).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    has = np.ones(300, dtype=bool)
    has[5] = False
    edges = semantic_edges(np.where(has[:, None], v, 0), has, k=3, threshold=0.3, block=64)
    sims = v @ v.T
    np.fill_diagonal(sims, -np.inf)
    sims[5, :] = sims[:, 5] = -np.inf
    expected = set()
    for i in np.flatnonzero(has):
        for j in np.argsort(-sims[i])[:3]:
            if sims[i, j] >= 0.3:
                expected.add((min(i, j), max(i, j)))
    assert {(a, b) for a, b, _ in edges} == expected
    labels = kmeans(v, 2)
    assert np.array_equal(labels, kmeans(v, 2))
    assert len(set(labels[:150])) == 1 and len(set(labels[150:])) == 1 and labels[0] != labels[200]


def test_cluster_page_and_partial(client):
    rendered: list[str] = []

    def record(sender, template, context, **extra):
        rendered.append(template.name)

    template_rendered.connect(record, client.application)
    page = client.get("/cluster?project=notes", base_url=BASE)
    assert page.status_code == 200 and rendered[0] == "cluster/page.html"
    html = page.get_data(as_text=True)
    assert 'aria-current="page">Cluster View</a>' in html
    assert "sigma-3.0.3.min.js" in html and "graphology-0.25.4.umd.min.js" in html
    assert 'data-graph-url="/api/graph?project=notes"' in html
    rendered.clear()
    partial = client.get("/cluster?scope=all", base_url=BASE, headers={"HX-Request": "true"})
    assert rendered[0] == "cluster/_view.html"
    assert 'data-graph-url="/api/graph?scope=all"' in partial.get_data(as_text=True)
    assert "HX-Request" in partial.headers["Vary"]
    assert client.get("/cluster?project=nowhere", base_url=BASE).status_code == 404


def test_a_cluster_is_named_by_what_its_notes_say_not_by_their_badges_and_markup():
    """Issue 40 row 12: on a plugin-heavy vault 12 of 32 clusters were named "manifest · total", others "blob",
    "span", "e7a" and "shields": words of badge URLs, HTML tags and colours in the notes' first lines."""
    from indexer.graph.clusters import describe, terms_of

    def readme(name: str, about: str) -> str:  # the opening of a public vault's plugin notes, as written
        return (f"# {name}\n\n![GitHub manifest version](https://img.shields.io/github/manifest-json/v/someone/"
                f"{name.lower()}) ![GitHub all releases](https://img.shields.io/github/downloads/someone/"
                f"{name.lower()}/total)\n\n<span class=\"plugin-note\" style=\"color: #e7a\">{about}</span> "
                f"[{name}](https://github.com/someone/{name.lower()}/blob/main/README.md)\n")

    # Each note says something of its own; what the notes of a cluster share is one word in some of them, and
    # the badges and markup in every one of them.
    boards = [readme("Kanban", "Cards in lanes, one board per note."), readme("Tasks", "A board of today's tasks."),
              readme("Projects", "Every project as a board."), readme("Focus", "Pomodoro timer in the sidebar."),
              readme("Sorting", "Drag items to reorder lists.")]
    dates = [readme("Journal", "A calendar of daily notes."), readme("Week", "The calendar week at a glance."),
             readme("Periodic", "Monthly notes from the calendar."), readme("Moon", "Phases of the moon."),
             readme("Clock", "World clocks for your timezones.")]
    kitchen = [f"# Bread {i}\n\nFlour, water and salt; a loaf of sourdough bread." for i in range(30)]
    documents = [terms_of(text.splitlines()[0][2:], [], text) for text in boards + dates + kitchen]
    names = describe([0] * 5 + [1] * 5 + [2] * 30, documents)
    noise = {"manifest", "total", "shields", "span", "blob", "github", "img", "releases", "e7a", "plugin", "color",
             "style", "class", "someone", "readme", "main", "version", "downloads", "note"}
    assert not noise & {w for name in names for w in name.split(" · ")}, names
    assert names[0].startswith("board") and names[1].startswith("calendar"), names


def test_every_cluster_gets_a_name_of_its_own():
    from indexer.graph.clusters import describe

    # Three clusters of plugin notes share their top words (a public vault had six clusters named "manifest ·
    # total · releases"), and the word that sets each apart is in only some of its notes, so it scores lower.
    plugin = {"manifest", "total", "releases"}
    documents, labels = [], []
    for cluster, word in enumerate(("kanban", "calendar", "dataview")):
        documents += [plugin | {word}] * 2 + [set(plugin)] * 3
        labels += [cluster] * 5
    documents += [{"bread", "flour"}] * 60
    labels += [3] * 60
    names = describe(labels, documents)
    assert len(set(names)) == 4, names
    assert names[1].startswith("calendar") and names[2].startswith("dataview") and "bread" in names[3], names


def test_clusters_are_named_by_what_their_notes_are_about_in_their_language():
    """Issue 61: a plugin vault's clusters were named by its template's words ("notes · developed · compatible"), and
    every cluster of a Chinese project in Latin ("tldr · impacket · decompress")."""
    from indexer.graph.clusters import describe, terms_of

    template = "This plugin is developed by the community and compatible with the latest release of the app."
    topics = [("calendar", "daily", "week"), ("kanban", "board", "cards"), ("dataview", "query", "table"),
              ("excalidraw", "drawing", "sketch"), ("reminders", "todo", "due"), ("templater", "template", "script")]
    documents, labels = [], []
    for c, words in enumerate(topics):
        for i in range(4):
            documents.append(terms_of(f"{words[0]} {words[i % 3]}", [], f"{' '.join(words)}. {template}"))
            labels.append(c)
    for name, words in zip(describe(labels, documents), topics):
        shown = set(name.split(" · "))
        assert shown <= set(words), name  # none of "developed", "compatible", "community", "release", "plugin"

    pages = [("解压缩文件", "使用 unzip 命令解压缩 zip 文件到指定的目录"),
             ("创建压缩包", "用 tar 把目录压缩成一个文件"), ("压缩图片", "用 convert 压缩图片的大小"),
             ("查看进程", "列出正在运行的进程和它们占用的内存"), ("结束进程", "用 kill 按编号结束一个进程"),
             ("进程树", "用 pstree 显示进程之间的关系"),
             ("网络连接", "显示网络连接和监听的端口"), ("测试网络", "用 ping 测试到主机的网络是否通畅"),
             ("网络接口", "用 ip 查看网络接口的地址")]
    documents = [terms_of(title, [], f"tldr {text}") for title, text in pages]
    assert {"解压", "压缩", "文件"} <= documents[0] and "的目" not in documents[0]  # a pair holding 的 says nothing
    names = describe([0, 0, 0, 1, 1, 1, 2, 2, 2], documents)
    assert [name.split(" · ")[0] for name in names] == ["压缩", "进程", "网络"], names


def test_a_chinese_template_sentence_lends_its_words_not_the_pairs_that_straddle_them():
    """tldr's Chinese alias pages all say "此命令为 X 的别名。查看原命令的文档": without spaces its character pairs
    include 此命, 令为 and 原命, which named the biggest cluster "令为 · 此命 · 查看" (and 15 of 28 names held such
    a piece: 务器 of 服务器, 示所 of 显示所有)."""
    from indexer.graph.clusters import describe, fragments, readable_head, terms_of

    aliases = [(f"{name}", f"此命令为 {name} 的别名。\n\n- 查看原命令的文档：\n\n`tldr {name}`")
               for name in ("egrep", "fgrep", "gawk", "vi", "view", "pico", "nawk", "rgrep")]
    servers = [(f"{name}", f"启动一个 {name} 服务器，并显示所有连接的服务器状态。{more}")
               for name, more in (("httpd", "查看服务的日志。"), ("nginx", "显示服务的配置。"), ("sshd", "停止服务。"),
                                  ("redis", "查看数据库。"), ("caddy", "显示版本。"))]
    pages = aliases + servers
    pieces = fragments(readable_head(title, text) for title, text in pages)
    assert {"此命", "令为", "原命", "看原", "务器", "示所"} <= pieces
    assert not {"命令", "别名", "查看", "文档", "服务", "显示"} & pieces
    names = describe([0] * len(aliases) + [1] * len(servers),
                     [terms_of(title, [], text, pieces) for title, text in pages])
    for name in names:
        assert not set(name.split(" · ")) & pieces, names
    assert "别名" in names[0] and "服务" in names[1], names
