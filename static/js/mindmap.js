/* SK Memory Mind Map page: an outline tree to edit node titles, bodies and tags, add and remove nodes, and Save.
   The map comes from the page (a JSON data block); opening it makes it the active map (POST /api/mindmaps/active)
   and Save posts the whole map to /api/mindmaps/save. DOM built with textContent only. */
(function () {
  "use strict";

  async function api(path, body) {
    const response = await fetch(path, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    });
    let answer = {};
    try { answer = await response.json(); } catch (e) { answer = { detail: "The server answered " + response.status + "." }; }
    if (!response.ok) throw new Error(answer.detail || "The request failed (" + response.status + ").");
    return answer;
  }

  function newId() {
    return "n-" + (window.crypto && crypto.randomUUID ? crypto.randomUUID().slice(0, 8)
      : Math.random().toString(16).slice(2, 10));
  }

  function parseTags(text) {
    return text.split(/[,\s]+/).map((t) => t.replace(/^#/, "").trim()).filter(Boolean);
  }

  function editor(root) {
    const map = JSON.parse(document.getElementById("mm-data").textContent);
    const project = root.dataset.project;
    const path = root.dataset.path;
    const $ = (id) => document.getElementById(id);
    const tree = $("mm-tree"), form = $("mm-node"), status = $("mm-status"), error = $("mm-error");
    let selected = null;

    const byId = () => new Map(map.nodes.map((n) => [n.id, n]));
    const childrenOf = (id) => map.nodes.filter((n) => (n.parent ?? null) === id);

    let dirty = false;
    function setDirty(value) { dirty = value; $("mm-dirty").hidden = !value; }
    // Leaving (a reload, a link, closing the tab) with unsaved changes asks first: the map lives in the file.
    window.addEventListener("beforeunload", (event) => {
      if (dirty) {
        event.preventDefault();
        event.returnValue = "";
      }
    });
    function showError(message) { error.textContent = message; error.hidden = !message; }

    function renderTree() {
      tree.replaceChildren(...childrenOf(null).map((n) => item(n, 1)));
    }

    function item(node, level) {
      const li = document.createElement("li");
      li.setAttribute("role", "treeitem");
      li.setAttribute("aria-level", String(level));
      li.setAttribute("aria-selected", String(node.id === selected));
      li.dataset.nodeId = node.id;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "mm-label";
      button.textContent = node.title || "(untitled)";
      button.addEventListener("click", () => select(node.id));
      li.append(button);
      const kids = childrenOf(node.id);
      if (kids.length) {
        const ul = document.createElement("ul");
        ul.setAttribute("role", "group");
        ul.append(...kids.map((k) => item(k, level + 1)));
        li.append(ul);
      }
      return li;
    }

    function select(id) {
      selected = id;
      const node = byId().get(id);
      form.hidden = !node;
      if (node) {
        $("mm-node-heading").textContent = node.title || "(untitled)";
        $("mm-node-title").value = node.title || "";
        $("mm-node-body").value = node.body || "";
        $("mm-node-tags").value = (node.tags || []).join(", ");
        $("mm-remove").disabled = node.parent == null && childrenOf(null).length === 1;
      }
      renderTree();
      const current = tree.querySelector('[aria-selected="true"] > .mm-label');
      if (current) current.focus();
    }

    function edit(field, value) {
      const node = byId().get(selected);
      if (!node) return;
      node[field] = value;
      setDirty(true);
      if (field === "title") {
        $("mm-node-heading").textContent = value || "(untitled)";
        const label = tree.querySelector('[aria-selected="true"] > .mm-label');
        if (label) label.textContent = value || "(untitled)";
      }
    }

    $("mm-node-title").addEventListener("input", (e) => edit("title", e.target.value));
    $("mm-node-body").addEventListener("input", (e) => edit("body", e.target.value));
    $("mm-node-tags").addEventListener("input", (e) => edit("tags", parseTags(e.target.value)));
    $("mm-map-title").addEventListener("input", (e) => { map.title = e.target.value; setDirty(true); });
    form.addEventListener("submit", (e) => e.preventDefault());

    $("mm-add-child").addEventListener("click", () => {
      const node = { id: newId(), parent: selected, title: "New node", body: "", tags: [], relationships: [],
                     attachments: [], private_notes: "" };
      map.nodes.push(node);
      setDirty(true);
      select(node.id);
      $("mm-node-title").focus();
      $("mm-node-title").select();
    });

    $("mm-remove").addEventListener("click", () => {
      const gone = new Set([selected]);
      let grew = true;
      while (grew) {  // the node and everything below it
        grew = false;
        for (const n of map.nodes) {
          if (!gone.has(n.id) && gone.has(n.parent)) { gone.add(n.id); grew = true; }
        }
      }
      const parent = byId().get(selected)?.parent ?? null;
      map.nodes = map.nodes.filter((n) => !gone.has(n.id));
      for (const n of map.nodes) {
        n.relationships = (n.relationships || []).filter((r) => !gone.has(r.target));
      }
      setDirty(true);
      select(parent ?? (childrenOf(null)[0] || {}).id);
    });

    $("mm-save").addEventListener("click", async () => {
      showError("");
      status.textContent = "Saving…";
      try {
        const saved = await api("/api/mindmaps/save", { project, path, map });
        map.revision = saved.map.revision;
        $("mm-revision").textContent = String(saved.map.revision);
        setDirty(false);
        status.textContent = "Saved revision " + saved.map.revision + " · node index " + saved.index_state + ".";
      } catch (e) {
        status.textContent = "";
        showError(e.message);
      }
    });

    renderTree();
    select((childrenOf(null)[0] || {}).id);
    api("/api/mindmaps/active", { project, path })
      .then(() => { root.dataset.active = "true"; })
      .catch((e) => showError("This map could not be made the active map: " + e.message));
  }

  function newMapForm(form) {
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const title = form.elements.title.value.trim();
      let path = form.elements.path.value.trim() || "Maps/" + title + ".mmdata";
      if (!/\.mmdata$/i.test(path)) path += ".mmdata";
      const out = form.querySelector(".mm-status");
      try {
        await api("/api/mindmaps/save", { project: form.dataset.project, path, map: {
          title, nodes: [{ id: "root", parent: null, title, body: "", tags: [] }] } });
        const url = new URL(form.dataset.editor, location.href);
        url.searchParams.set("project", form.dataset.project);
        url.searchParams.set("path", path);
        location.assign(url);
      } catch (err) {
        out.textContent = err.message;
      }
    });
  }

  function start() {
    const root = document.getElementById("mindmap");
    if (root) editor(root);
    const form = document.getElementById("mm-new");
    if (form) newMapForm(form);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
