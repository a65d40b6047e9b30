/* Cluster View: draws the Forge Graph from /api/graph with sigma.js (WebGL) and lights up the documents
   semantic search returns. window.skmCluster exposes what the page shows (the highlighted node ids, the
   search mode, timings) for tests and benchmarks. Text is set with textContent only. */
(function () {
  "use strict";

  const root = document.getElementById("cluster-view");
  if (!root || !window.Sigma || !window.graphology) return;

  const DIM = "#9a9aa0";
  const LINK_EDGE = "rgba(110, 110, 120, 0.55)";
  const NEAR_EDGE = "rgba(140, 140, 150, 0.22)";
  const MATCH_EDGE = "rgba(90, 90, 100, 0.6)";
  const started = performance.now();
  const $ = (id) => document.getElementById(id);
  const state = (window.skmCluster = {
    ready: false, error: null, scope: root.dataset.scope, mode: null, query: "", highlighted: [], matches: [],
    notice: null, selected: null, hovered: null, tag: "", folder: "", hiddenClusters: [], timings: {},
    graph: null, renderer: null, data: null,
  });
  let lit = new Map(); // node id -> brightness 0..1
  let background = "#ffffff"; // the page's, for dimming towards
  const labels = []; // [element, {x, y}, cluster id] of the cluster names drawn over the canvas
  let searchSeq = 0;

  function mix(hex, towards, t) {
    const a = parseInt(hex.slice(1), 16), b = parseInt(towards.slice(1), 16);
    const ch = (v, s) => (v >> s) & 255;
    const m = (s) => Math.round(ch(a, s) * t + ch(b, s) * (1 - t));
    return "#" + ((1 << 24) + (m(16) << 16) + (m(8) << 8) + m(0)).toString(16).slice(1);
  }

  function visible(id, attrs) {
    if (state.hiddenClusters.includes(attrs.cluster)) return false;
    if (state.tag && !attrs.tags.includes(state.tag)) return false;
    if (state.folder && attrs.folder !== state.folder && !attrs.folder.startsWith(state.folder + "/")) return false;
    return true;
  }

  function nodeReducer(id, attrs) {
    const out = { ...attrs };
    if (!visible(id, attrs)) {
      out.hidden = true;
      return out;
    }
    if (lit.size) {
      const b = lit.get(id);
      if (b === undefined) {
        out.color = mix(attrs.color, background, 0.22);
        out.label = "";
        out.zIndex = 0;
      } else {
        out.color = mix(attrs.color, background, 0.45 + 0.55 * b);
        out.size = attrs.size * (1.4 + b);
        out.zIndex = 2;
        out.forceLabel = b >= 0.999;
      }
    }
    if (id === state.selected) {
      out.highlighted = true;
      out.zIndex = 3;
    }
    return out;
  }

  function edgeReducer(id, attrs) {
    const graph = state.graph;
    if (!lit.size) return attrs;
    const [s, t] = graph.extremities(id);
    if (lit.has(s) && lit.has(t)) return { ...attrs, color: MATCH_EDGE };
    return { ...attrs, hidden: true };
  }

  function hex(rgb) {
    const [r, g, b] = (rgb.match(/\d+/g) || [255, 255, 255]).map(Number);
    return "#" + ((1 << 24) + (r << 16) + (g << 8) + b).toString(16).slice(1);
  }

  function buildLabels(data) {
    const sums = new Map();
    for (const n of data.nodes) {
      const s = sums.get(n.cluster) || { x: 0, n: 0, low: Infinity, high: -Infinity };
      s.x += n.x;
      s.n += 1;
      s.low = Math.min(s.low, -n.y);
      s.high = Math.max(s.high, -n.y);
      sums.set(n.cluster, s);
    }
    const layer = $("cluster-labels");
    for (const c of data.clusters) {
      const s = sums.get(c.id);
      if (!s) continue;
      const el = document.createElement("span");
      el.className = "cluster-label";
      el.textContent = c.label;
      layer.append(el);
      labels.push([el, [{ x: s.x / s.n, y: s.low }, { x: s.x / s.n, y: s.high }], c.id]);
    }
  }

  function placeLabels() {
    // Each cluster's name sits just above its disc, whichever way up the camera draws the graph. Names never cover
    // each other: the clusters come largest first, and a name that would overlap one already placed waits until
    // zooming in makes room for it.
    const placed = [];
    for (const [el, ends] of labels) {
      if (el.hidden) continue;
      const [a, b] = ends.map((at) => state.renderer.graphToViewport(at));
      const p = a.y < b.y ? a : b;
      const x = Math.round(p.x), y = Math.round(p.y - 4);
      el.style.transform = "translate(" + x + "px, " + y + "px) translate(-50%, -100%)";
      if (!el.dataset.w) {
        el.dataset.w = el.offsetWidth;
        el.dataset.h = el.offsetHeight;
      }
      const w = Number(el.dataset.w), h = Number(el.dataset.h);
      const box = { left: x - w / 2 - 2, right: x + w / 2 + 2, top: y - h - 1, bottom: y + 1 };
      const clash = placed.some((o) => box.left < o.right && o.left < box.right && box.top < o.bottom && o.top < box.bottom);
      el.classList.toggle("crowded", clash);
      if (!clash) placed.push(box);
    }
  }

  function nodeSize(size, count) {
    const scale = count > 2000 ? 0.9 : count > 200 ? 1.6 : 3;  // small vaults get bigger dots
    return Math.max(1.5, Math.min(16, scale * size));
  }

  function build(data) {
    const graph = new graphology.Graph({ type: "undirected", multi: false });
    const colours = new Map(data.clusters.map((c) => [c.id, c.color]));
    for (const n of data.nodes) {
      graph.addNode(n.id, {
        x: n.x, y: -n.y, size: nodeSize(n.size, data.nodes.length), color: colours.get(n.cluster) || DIM,
        label: n.title, title: n.title, path: n.path, project: n.project, document_id: n.document_id,
        tags: n.tags, folder: n.folder, cluster: n.cluster,
      });
    }
    for (const e of data.edges) {
      if (e.source === e.target || graph.hasEdge(e.source, e.target)) continue;
      graph.addEdge(e.source, e.target, {
        kind: e.kind, size: e.kind === "link" ? 1 : 0.5, color: e.kind === "link" ? LINK_EDGE : NEAR_EDGE,
      });
    }
    return graph;
  }

  function documentUrl(attrs) {
    const base = root.dataset.documentUrl.replace("DOCUMENT_ID", encodeURIComponent(attrs.document_id));
    return base + "?project=" + encodeURIComponent(attrs.project);
  }

  function openPanel(id) {
    const attrs = state.graph.getNodeAttributes(id);
    state.selected = id;
    state.renderer.refresh({ skipIndexation: true });
    htmx.ajax("GET", documentUrl(attrs), { target: "#doc-panel", swap: "innerHTML" });
  }

  function centre(id) {
    const shown = state.renderer.getNodeDisplayData(id);
    if (shown) state.renderer.getCamera().animate({ x: shown.x, y: shown.y, ratio: 0.2 }, { duration: 400 });
  }

  function showTooltip(id, event) {
    const a = state.graph.getNodeAttributes(id);
    const tip = $("cluster-tooltip");
    const title = document.createElement("strong");
    title.textContent = a.title;
    const path = document.createElement("div");
    path.className = "cluster-tooltip-path";
    path.textContent = (state.scope === "all" ? a.project + " · " : "") + a.path;
    const parts = [title, path];
    if (a.tags.length) {
      const tags = document.createElement("div");
      tags.className = "cluster-tooltip-tags";
      tags.textContent = a.tags.map((t) => "#" + t).join(" ");
      parts.push(tags);
    }
    tip.replaceChildren(...parts);
    tip.style.left = event.x + 14 + "px";
    tip.style.top = event.y + 14 + "px";
    tip.hidden = false;
  }

  function fillSelect(select, values) {
    for (const [value, count] of values) {
      const option = document.createElement("option");
      option.value = value;
      option.textContent = (value || "(top level)") + " (" + count + ")";
      select.append(option);
    }
  }

  function counts(values) {
    const m = new Map();
    for (const v of values) m.set(v, (m.get(v) || 0) + 1);
    return m;
  }

  function buildControls(data) {
    const tags = counts(data.nodes.flatMap((n) => n.tags));
    fillSelect($("cluster-tag"), [...tags].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 300));
    const folders = counts(data.nodes.flatMap((n) => n.folder.split("/").map((_, i, p) => p.slice(0, i + 1).join("/")))
      .filter(Boolean));
    fillSelect($("cluster-folder"), [...folders].sort((a, b) => (a[0] < b[0] ? -1 : 1)).slice(0, 500));
    const legend = $("cluster-legend");
    for (const c of data.clusters) {
      const item = document.createElement("li");
      const label = document.createElement("label");
      const box = document.createElement("input");
      box.type = "checkbox";
      box.checked = true;
      box.dataset.cluster = c.id;
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.style.background = c.color;
      const text = document.createElement("span");
      text.textContent = c.label;
      const size = document.createElement("span");
      size.className = "muted";
      size.textContent = String(c.size);
      label.append(box, swatch, text, size);
      item.append(label);
      legend.append(item);
    }
  }

  function showMatches(matches) {
    const list = $("cluster-matches");
    list.replaceChildren(...matches.map((m, i) => {
      const item = document.createElement("li");
      const link = document.createElement("a");
      link.href = documentUrl(state.graph.getNodeAttributes(m.id));
      link.dataset.node = m.id;
      link.dataset.navItem = "";
      link.className = "cluster-match";
      const title = document.createElement("span");
      title.textContent = m.title;
      const score = document.createElement("span");
      score.className = "similarity";
      score.textContent = state.mode === "semantic" ? Math.round(m.score * 100) + "%" : "#" + (i + 1);
      link.append(title, score);
      const path = document.createElement("div");
      path.className = "result-path";
      path.textContent = (state.scope === "all" ? m.project + " · " : "") + m.path;
      item.append(link, path);
      return item;
    }));
  }

  function applyMatches(found) {
    state.mode = found.mode;
    state.notice = found.notice;
    state.matches = found.matches.filter((m) => state.graph.hasNode(m.id));
    state.highlighted = state.matches.map((m) => m.id);
    const sims = state.matches.map((m) => m.score);
    const hi = Math.max(...sims), lo = Math.min(...sims);
    lit = new Map(state.matches.map((m) => [m.id, hi > lo ? (m.score - lo) / (hi - lo) : 1]));
    const mode = $("cluster-mode");
    const label = found.mode === "semantic" ? "Semantic matches" : "Keyword matches (no embeddings)";
    mode.textContent = label + ": " + state.matches.length + " documents." + (found.notice ? " " + found.notice : "");
    mode.classList.toggle("warn", found.mode !== "semantic" || !!found.notice);
    showMatches(state.matches);
    state.renderer.refresh({ skipIndexation: true });
  }

  function clearMatches() {
    lit = new Map();
    Object.assign(state, { highlighted: [], matches: [], mode: null, notice: null });
    $("cluster-matches").replaceChildren();
    $("cluster-mode").textContent = "Type to light up matching documents.";
    $("cluster-mode").classList.remove("warn");
    state.renderer.refresh({ skipIndexation: true });
  }

  async function search(query) {
    const seq = ++searchSeq;
    state.query = query;
    state.searching = true;
    if (!query) {
      state.searching = false;
      clearMatches();
      return;
    }
    const url = new URL(root.dataset.searchUrl, window.location.origin);
    url.searchParams.set("q", query);
    try {
      const response = await fetch(url, { headers: { Accept: "application/json" } });
      const body = await response.json();
      if (seq !== searchSeq) return; // a newer query is on its way
      if (!response.ok) throw new Error(body.detail || response.statusText);
      applyMatches(body);
    } catch (err) {
      if (seq !== searchSeq) return;
      $("cluster-mode").textContent = "Search failed: " + err.message;
      $("cluster-mode").classList.add("warn");
    } finally {
      if (seq === searchSeq) state.searching = false;
    }
  }

  function wire() {
    const renderer = state.renderer;
    renderer.on("enterNode", ({ node, event }) => {
      state.hovered = node;
      showTooltip(node, event);
    });
    renderer.on("leaveNode", () => {
      state.hovered = null;
      $("cluster-tooltip").hidden = true;
    });
    renderer.on("afterRender", placeLabels);
    renderer.on("clickNode", ({ node }) => openPanel(node));
    let timer = null;
    const input = $("cluster-q");
    input.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => search(input.value.trim()), 250);
    });
    input.addEventListener("keydown", async (event) => {
      if (event.key !== "Enter") return;
      event.preventDefault();
      clearTimeout(timer);
      if (input.value.trim() !== state.query || !state.matches.length) await search(input.value.trim());
      if (state.matches.length) centre(state.matches[0].id);
    });
    $("cluster-matches").addEventListener("click", (event) => {
      const link = event.target.closest("a[data-node]");
      if (!link) return;
      event.preventDefault();
      centre(link.dataset.node);
      openPanel(link.dataset.node);
    });
    $("cluster-tag").addEventListener("change", (e) => { state.tag = e.target.value; renderer.refresh(); });
    $("cluster-folder").addEventListener("change", (e) => { state.folder = e.target.value; renderer.refresh(); });
    $("cluster-legend").addEventListener("change", (event) => {
      const id = Number(event.target.dataset.cluster);
      state.hiddenClusters = event.target.checked
        ? state.hiddenClusters.filter((c) => c !== id) : [...state.hiddenClusters, id];
      for (const [el, , c] of labels) el.hidden = state.hiddenClusters.includes(c);
      renderer.refresh();
    });
  }

  async function load() {
    const response = await fetch(root.dataset.graphUrl, { headers: { Accept: "application/json" } });
    const data = await response.json();
    if (!response.ok) throw new Error(data.detail || response.statusText);
    state.timings.fetch_ms = Math.round(performance.now() - started);
    state.data = data;
    state.graph = build(data);
    const text = getComputedStyle(document.body).color;
    background = hex(getComputedStyle(document.body).backgroundColor);
    state.renderer = new Sigma(state.graph, $("cluster-canvas"), {
      nodeReducer, edgeReducer, zIndex: true,
      hideEdgesOnMove: data.nodes.length > 3000, hideLabelsOnMove: data.nodes.length > 3000,
      labelRenderedSizeThreshold: data.nodes.length > 2000 ? 9 : 4, labelColor: { color: text },
      labelFont: "system-ui, sans-serif", minCameraRatio: 0.01, maxCameraRatio: 4,
    });
    state.renderer.once("afterRender", () => {
      state.timings.first_render_ms = Math.round(performance.now() - started);
      state.ready = true;
    });
    buildControls(data);
    buildLabels(data);
    wire();
    const s = data.stats;
    $("cluster-status").textContent = s.documents.toLocaleString() + " documents · " +
      (s.link_edges + s.semantic_edges).toLocaleString() + " edges (" + s.link_edges.toLocaleString() +
      " links) · " + data.clusters.length + " clusters · " + data.layout + " layout";
    if (data.notice) {
      $("cluster-notice").textContent = data.notice;
      $("cluster-notice").hidden = false;
    }
    state.renderer.refresh();
  }

  document.addEventListener("DOMContentLoaded", () => {
    load().catch((err) => {
      state.error = err.message;
      $("cluster-status").textContent = "The graph could not be drawn: " + err.message;
    });
  });
})();
