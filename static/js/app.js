/* SK Memory search window: keyboard navigation, Ctrl+K / Cmd+K Power Strip, F1 help, tag chips, copy button.
   Everything the server sends is rendered by the server; this file only builds chips, with textContent.

   The keyboard never loses its place: / focuses the search box from anywhere, Esc returns to it, ↑/↓ move through
   the results (or the Files list) and preview each in the panel, Enter opens one there and keeps the place in the
   list, the open one is marked, and only one result of a list is in the Tab order (Shift+Tab from the panel comes
   back to it, not to the 30th result). */
(function () {
  "use strict";

  const LISTS = { q: "#results", "strip-q": "#strip-results", "help-q": "#help-results" };

  function navItems(container) {
    return container ? Array.from(container.querySelectorAll("[data-nav-item]")) : [];
  }

  function moveFrom(item, step) {
    const list = item.closest("[data-nav-list]");
    const items = navItems(list);
    const next = items[items.indexOf(item) + step];
    if (next) {
      focusItem(next);
      if (next.closest(".sidebar")) previewSoon(next);
    } else if (step < 0) {
      const input = item.closest("dialog, .sidebar")?.querySelector("input[type=search]");
      if (input) input.focus();
    }
  }

  // Only one item of a sidebar list is in the Tab order: the one focused last, else the open one, else the first.
  function focusItem(item) {
    rove(item);
    item.focus();
    item.scrollIntoView({ block: "nearest" });
  }

  function rove(current) {
    const row = (el) => el.closest("li") || el;
    for (const list of document.querySelectorAll(".sidebar [data-nav-list]")) {
      for (const item of navItems(list)) {
        const inTabOrder = current ? row(item) === row(current) : false;
        for (const el of row(item).querySelectorAll("a[href], button, summary")) {
          if (inTabOrder) el.removeAttribute("tabindex");
          else el.setAttribute("tabindex", "-1");
        }
      }
    }
  }

  function sidebarLists() {
    return Array.from(document.querySelectorAll(".sidebar [data-nav-list]"));
  }

  // The list's place: the open result, else the first.
  function listPlace() {
    const items = sidebarLists().flatMap(navItems);
    return items.find((i) => i.closest("li")?.classList.contains("is-open")) || items[0] || null;
  }

  // Moving with ↑/↓ previews the result in the panel once the keys rest for a moment (a held key does not fetch
  // every document it passes); the focus stays in the list.
  let previewTimer = null;
  let previewing = false;  // the panel's next document is a preview: on a narrow window the page stays on the list
  function previewSoon(item) {
    clearTimeout(previewTimer);
    previewTimer = setTimeout(() => {
      if (document.activeElement === item && item.getAttribute("hx-get")) {
        previewing = true;
        htmx.ajax("GET", item.getAttribute("hx-get"), { target: "#doc-panel", swap: "innerHTML" });
      }
    }, 120);
  }

  // The result whose document the panel shows is marked (class is-open, aria-current), in every sidebar list.
  function markOpen() {
    const shown = document.querySelector("#doc-panel [data-document-id]")?.dataset.documentId;
    for (const row of document.querySelectorAll(".sidebar li[data-document-id]")) {
      const open = row.dataset.documentId === shown;
      row.classList.toggle("is-open", open);
      const link = row.querySelector("[data-nav-item]");
      if (open) link?.setAttribute("aria-current", "true");
      else link?.removeAttribute("aria-current");
    }
  }

  // Back to the search box (the Files tab's name filter there), its text selected to type over. Says whether it could.
  function focusSearchBox(from) {
    const box = document.getElementById("q") || document.getElementById("file-name");
    if (!box || box === from) return false;
    box.focus();
    box.select();
    return true;
  }

  function typing(target) {
    return target.closest?.("input, textarea, select, [contenteditable=true]") !== null
      && !target.matches?.("input[type=checkbox], input[type=radio]");
  }

  function openStrip() {
    const dialog = document.getElementById("power-strip");
    if (!dialog) return;
    if (!dialog.open) dialog.showModal();
    const input = document.getElementById("strip-q");
    input.focus();
    input.select();
  }

  function openHelp() {
    const active = document.activeElement;
    const aboutSmart = active && (active.id === "t-smart" || active.closest?.("#smart-hint"))
      || document.querySelector("label[for=t-smart]:hover, #smart-hint:hover");
    const helpInput = document.getElementById("help-q");
    if (helpInput && !aboutSmart) {
      helpInput.focus();
      return;
    }
    const query = aboutSmart ? "smart semantic search local embeddings" : "";
    window.location.assign("/help" + (query ? "?q=" + encodeURIComponent(query) : ""));
  }

  function searchForm() {
    return document.getElementById("search-form");
  }

  function addTag(name) {
    name = (name || "").trim().replace(/^#+/, "").toLowerCase();
    const chips = document.getElementById("tag-chips");
    if (!name || !chips) return;
    const exists = Array.from(chips.querySelectorAll("input[name=tags]")).some((i) => i.value === name);
    if (!exists) {
      const chip = document.createElement("span");
      chip.className = "chip";
      chip.dataset.tag = name;
      const hidden = document.createElement("input");
      hidden.type = "hidden";
      hidden.name = "tags";
      hidden.value = name;
      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "chip-remove";
      remove.setAttribute("aria-label", "Remove tag " + name);
      remove.textContent = "×";
      chip.append(hidden, document.createTextNode("#" + name), remove);
      chips.append(chip);
    }
    const input = document.getElementById("tag-q");
    input.value = "";
    input.focus();
    clearSuggestions();
    htmx.trigger(searchForm(), "tags-changed");
  }

  function tagText(input) {
    return input.value.trim().toLowerCase().replace(/^#+/, "").replace(/\/+$/, "");
  }

  // Enter adds the best real tag for the typed text (never a chip that matches nothing): the shown suggestions
  // when they are for this text, otherwise the server's best match, asked now rather than after the typing delay.
  async function pickTag(input) {
    const text = tagText(input);
    if (!text) return;
    const shown = document.querySelector("#tag-suggest .suggestion-set");
    const first = shown?.querySelector("[data-add-tag]");
    if (shown && shown.dataset.for === text) {
      if (first) addTag(first.dataset.addTag);
      return;
    }
    const project = document.getElementById("project-select")?.value || "";
    const url = "/api/tags?limit=1&prefix=" + encodeURIComponent(text) + "&project=" + encodeURIComponent(project);
    try {
      const best = (await (await fetch(url)).json()).tags?.[0];
      if (best && tagText(input) === text) {
        addTag(best.tag);
        return;
      }
    } catch (err) {
      /* the suggestions below say what happened */
    }
    htmx.trigger(input, "input");  // shows "No tag matches …" under the box
  }

  function clearSuggestions() {
    const box = document.getElementById("tag-suggest");
    if (box) box.replaceChildren();
    document.getElementById("tag-q")?.setAttribute("aria-expanded", "false");
  }

  async function copy(button) {
    const text = button.dataset.copy;
    try {
      await navigator.clipboard.writeText(text);
    } catch (err) {
      const area = document.createElement("textarea");
      area.value = text;
      document.body.append(area);
      area.select();
      document.execCommand("copy");
      area.remove();
    }
    button.textContent = "Copied";
    setTimeout(() => { button.textContent = "Copy"; }, 1500);
  }

  document.addEventListener("keydown", (event) => {
    const target = event.target;
    if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "k") {
      event.preventDefault();
      openStrip();
      return;
    }
    if (event.key === "Escape" && target.closest?.("#power-strip")) {
      // A search box's first Esc would only clear its text; in the Power Strip one Esc closes it, as it says.
      event.preventDefault();
      document.getElementById("power-strip").close();
      return;
    }
    if (event.key === "F1") {
      event.preventDefault();
      openHelp();
      return;
    }
    const slash = event.key === "/" && !typing(target) && !event.ctrlKey && !event.metaKey && !event.altKey;
    const escape = event.key === "Escape" && target.id !== "tag-q"
      && (!typing(target) || target.id === "file-name" && !target.value);
    if ((slash || escape) && !target.closest?.("dialog")) {
      if (focusSearchBox(target)) event.preventDefault();
      return;
    }
    if (target.id === "tag-q") {
      const first = document.querySelector("#tag-suggest [data-add-tag]");
      if (event.key === "Enter") {
        event.preventDefault();
        pickTag(target);
      } else if (event.key === "ArrowDown" && first) {
        event.preventDefault();
        first.focus();
      } else if (event.key === "Escape") {
        clearSuggestions();
      }
      return;
    }
    if (target.matches?.("[data-add-tag]") && (event.key === "ArrowDown" || event.key === "ArrowUp")) {
      event.preventDefault();
      const sibling = event.key === "ArrowDown" ? target.nextElementSibling : target.previousElementSibling;
      (sibling || document.getElementById("tag-q")).focus();
      return;
    }
    if (event.key.toLowerCase() === "o" && !typing(target) && !event.ctrlKey && !event.metaKey && !event.altKey) {
      // O opens the result in focus, or the note in the panel, in Obsidian (when its project is an Obsidian vault).
      const link = document.querySelector("#doc-panel a.open-obsidian");
      const shown = document.querySelector("#doc-panel .doc-info")?.dataset.documentId;
      const item = target.matches?.("[data-nav-item]") ? target.closest("[data-document-id]") : null;
      if (link && (item ? item.dataset.documentId === shown : target.closest?.("#doc-panel"))) {
        event.preventDefault();
        link.click();
      }
      return;
    }
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    if (target === document.body) {  // the focused element was swapped away: take up the list's place again
      const place = listPlace();
      if (place) {
        event.preventDefault();
        focusItem(place);
      }
      return;
    }
    const list = LISTS[target.id] || (target.id === "file-name" ? "#file-list" : null);
    if (list && event.key === "ArrowDown") {
      const first = navItems(document.querySelector(list))[0];
      if (first) {
        event.preventDefault();
        focusItem(first);
        if (first.closest(".sidebar")) previewSoon(first);
      }
    } else if (target.matches?.("[data-nav-item]")) {
      event.preventDefault();
      moveFrom(target, event.key === "ArrowDown" ? 1 : -1);
    }
  });

  // A result clicked or tabbed to becomes the list's place in the Tab order.
  document.addEventListener("focusin", (event) => {
    if (event.target.matches?.(".sidebar [data-nav-item]")) rove(event.target);
  });

  document.addEventListener("click", (event) => {
    const target = event.target;
    const suggestion = target.closest("[data-add-tag]");
    if (suggestion) {
      addTag(suggestion.dataset.addTag);
      return;
    }
    const removeChip = target.closest(".chip-remove");
    if (removeChip) {
      removeChip.closest(".chip").remove();
      htmx.trigger(searchForm(), "tags-changed");
      return;
    }
    // A folder, a tag or "Show all" picks a new listing: the name filter starts again empty.
    if (target.closest(".folder-link, .tag-link, .clear-filter")) {
      const filter = document.getElementById("file-name");
      if (filter) filter.value = "";
      // A folder's name lists it and unfolds it (its ▸ alone folds it again): the link's click, taken by htmx,
      // never reached the <summary> around it.
      const folder = target.closest("summary > .folder-link")?.closest("details");
      if (folder) folder.open = true;
    }
    const more = target.closest("button.load-more");
    if (more) focusAfterSwap = Number(more.dataset.focusResult);
    const copyButton = target.closest("button.copy");
    if (copyButton) {
      copy(copyButton);
      return;
    }
    if (target.closest("#strip-open")) {
      openStrip();
      return;
    }
    const stripItem = target.closest("#power-strip a[data-panel]");
    if (stripItem && document.getElementById("doc-panel")) {
      event.preventDefault();
      document.getElementById("power-strip").close();
      htmx.ajax("GET", stripItem.getAttribute("href"), { target: "#doc-panel", swap: "innerHTML" });
      return;
    }
    // A wikilink in a preview opens its note in the panel (the sanitised preview carries no htmx attributes).
    const wikilink = target.closest("#doc-panel .preview a.wikilink");
    if (wikilink) {
      event.preventDefault();
      htmx.ajax("GET", wikilink.getAttribute("href"), { target: "#doc-panel", swap: "innerHTML" });
    }
  });

  document.addEventListener("change", (event) => {
    if (event.target.matches("select[data-autosubmit]")) event.target.form.requestSubmit();
  });

  // A document opened from a result shows its matching passage: scroll the preview to it. On a narrow screen the
  // panel sits under the results, so bring the panel itself into view first; but not for a preview (↑/↓), which
  // leaves the page on the list. The focus moves to the passage only when it was not in a list: the list keeps it.
  function showOpenedDocument(panel) {
    const active = document.activeElement;
    const inList = active?.closest?.(".sidebar [data-nav-list]");
    const narrow = window.matchMedia("(max-width: 800px)").matches;
    const preview = previewing;
    previewing = false;
    if (narrow && preview) return;  // the panel is below the list there: ↑/↓ keep the list in view
    if (narrow) panel.scrollIntoView({ block: "start" });
    const match = panel.querySelector("#match");
    if (match) {
      const box = match.closest(".preview");
      if (box) {
        // Only the preview scrolls to the match: scrolling the panel (or, narrow, the page) as well put the note's
        // title and details under the top bar, or the page sideways to a wide line (issue 40 row 14).
        const at = match.getBoundingClientRect(), view = box.getBoundingClientRect();
        box.scrollTop += at.top - view.top - Math.max(0, (view.height - at.height) / 2);
        if (!narrow) panel.scrollTop = 0;
      } else {
        match.scrollIntoView({ block: narrow ? "nearest" : "center" });
      }
      if (!inList) match.focus({ preventScroll: true });
    }
  }

  let focusAfterSwap = null;  // "Load more": the first new result takes the focus

  document.addEventListener("htmx:afterSwap", (event) => {
    const swapped = event.detail.target;
    if (swapped.id === "doc-panel") {
      showOpenedDocument(swapped);
      markOpen();
    }
    if (swapped.id === "file-list") {  // a folder or tag picked above: the list it changed comes into view
      const head = swapped.querySelector(".file-list-head");
      const top = head?.getBoundingClientRect().top ?? 0;
      if (head && (top < 0 || top > window.innerHeight - 120)) head.scrollIntoView({ block: "start" });
    }
    if (swapped.id === "results" || swapped.id === "file-list") {
      markOpen();
      rove(listPlace());
      if (focusAfterSwap !== null) {
        const item = navItems(swapped)[focusAfterSwap];
        if (item) focusItem(item);
        focusAfterSwap = null;
      }
    }
    if (event.detail.target.id === "tag-suggest") {
      const open = event.detail.target.querySelector("[data-add-tag]") !== null;
      document.getElementById("tag-q")?.setAttribute("aria-expanded", open ? "true" : "false");
    }
  });

  // A result's "why" fetches its explanation the first time it opens (the list is sent without them: half its
  // HTML). 'toggle' does not bubble, so it is caught on the way down.
  document.addEventListener("toggle", (event) => {
    const why = event.target;
    if (!why.matches?.("details[data-why]") || !why.open || why.dataset.asked) return;
    const list = why.closest("[data-why-url]"), row = why.closest("[data-document-id]");
    if (!list || !row) return;
    why.dataset.asked = "1";
    const url = list.dataset.whyUrl + "&document_id=" + encodeURIComponent(row.dataset.documentId);
    htmx.ajax("GET", url, { target: why.querySelector(".why-pop"), swap: "innerHTML" });
  }, true);

  // Each search the box sends while typing is numbered for this tab, so the server can drop one a newer search has
  // overtaken instead of working on it for nobody (the browser has already aborted it).
  const tab = Math.random().toString(36).slice(2, 12);
  let sent = 0;
  document.addEventListener("htmx:configRequest", (event) => {
    if (event.detail.elt?.id === "search-form") event.detail.headers["X-SKMemory-Typing"] = tab + ":" + (++sent);
  });

  document.addEventListener("DOMContentLoaded", () => {
    const panel = document.getElementById("doc-panel");
    if (panel?.querySelector("#match")) showOpenedDocument(panel);
    markOpen();
    rove(listPlace());
    const shortcut = document.querySelector("#strip-open .shortcut");
    if (shortcut && /Mac|iPhone|iPad/.test(navigator.platform)) shortcut.textContent = "⌘K";
  });
})();
