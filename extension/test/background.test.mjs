import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { installChrome, installFetch, HEALTHY, RESULTS } from "./chrome-mock.mjs";

const chrome = installChrome();
await import("../background.js");
const skm = globalThis.self.skm;
const TAB = { id: 7, url: "http://127.0.0.1:9000/page.html" };

beforeEach(() => {
  chrome.reset();
  installFetch({ "/api/health": { body: HEALTHY }, "/api/search": { body: RESULTS } });
});

const created = () => chrome.calls.filter(([name]) => name === "windows.create");

test("every listener is registered when the worker starts", () => {
  for (const ev of [chrome.runtime.onInstalled, chrome.runtime.onMessage, chrome.commands.onCommand,
    chrome.contextMenus.onClicked, chrome.omnibox.onInputChanged, chrome.omnibox.onInputEntered,
    chrome.windows.onRemoved]) {
    assert.equal(ev.listeners.length, 1);
  }
});

test("install creates the context-menu item on selections", async () => {
  await chrome.runtime.onInstalled.listeners[0]({ reason: "install" });
  await skm.onInstalled();
  const [, menu] = chrome.calls.find(([name]) => name === "contextMenus.create");
  assert.deepEqual(menu, { id: "search-sk-memory-selection", title: "Search SK Memory for “%s”", contexts: ["selection"] });
});

test("the command reads the selection and opens a popup window at /search", async () => {
  chrome.scripting.selection = "  sourdough\n starter ";
  const outcome = await skm.onCommand("search-sk-memory", TAB);
  assert.equal(outcome.opened, true);
  const [[, props]] = created();
  assert.equal(props.type, "popup");
  assert.equal(props.url, "http://127.0.0.1:8765/search?q=sourdough+starter&scope=all");
  const [, injection] = chrome.calls.find(([name]) => name === "scripting.executeScript");
  assert.equal(injection.target.tabId, 7);
  assert.deepEqual(await chrome.storage.session.get("searchWindow"),
    { searchWindow: { windowId: outcome.windowId, tabId: outcome.tabId } });
});

test("an open search window is focused and updated, not opened twice", async () => {
  const first = await skm.onCommand("search-sk-memory", TAB, "garden");
  const second = await skm.onCommand("search-sk-memory", TAB, "compost");
  assert.equal(created().length, 1);
  assert.equal(second.windowId, first.windowId);
  assert.deepEqual(chrome.calls.find(([name]) => name === "tabs.update"),
    ["tabs.update", first.tabId, { url: "http://127.0.0.1:8765/search?q=compost&scope=all", active: true }]);
  assert.deepEqual(chrome.calls.find(([name]) => name === "windows.update"), ["windows.update", first.windowId, { focused: true }]);
  assert.equal(chrome.openWindows.get(first.windowId).tabs[0].url, "http://127.0.0.1:8765/search?q=compost&scope=all");
});

test("a closed search window is forgotten and a new one opens", async () => {
  const first = await skm.onCommand("search-sk-memory", TAB, "garden");
  await chrome.closeWindow(first.windowId);
  assert.deepEqual(await chrome.storage.session.get("searchWindow"), {});
  const second = await skm.onCommand("search-sk-memory", TAB, "garden");
  assert.notEqual(second.windowId, first.windowId);
  assert.equal(created().length, 2);
});

test("a window closed while the worker slept is replaced too", async () => {
  const first = await skm.onCommand("search-sk-memory", TAB, "garden");
  chrome.openWindows.delete(first.windowId); // gone without onRemoved reaching us
  const second = await skm.onCommand("search-sk-memory", TAB, "garden");
  assert.equal(second.opened, true);
  assert.equal(created().length, 2);
});

test("a page the extension may not read searches with no query", async () => {
  chrome.scripting.selection = new Error("Cannot access a chrome:// URL");
  const outcome = await skm.onCommand("search-sk-memory", { id: 3, url: "chrome://settings" });
  assert.equal(outcome.url, "http://127.0.0.1:8765/search");
});

test("other commands are ignored", async () => {
  assert.equal(await skm.onCommand("something-else", TAB), null);
  assert.equal(created().length, 0);
});

test("the context menu searches for the selection", async () => {
  const outcome = await skm.onContextMenu({ menuItemId: "search-sk-memory-selection", selectionText: "tmux detach" }, TAB);
  assert.equal(outcome.url, "http://127.0.0.1:8765/search?q=tmux+detach&scope=all");
  assert.equal(created()[0][1].type, "popup");
});

test("when the app is down: no window, a badge and a notification that say how to start it", async () => {
  installFetch({}, { down: [8765] });
  const outcome = await skm.onCommand("search-sk-memory", TAB, "garden");
  assert.deepEqual([outcome.opened, outcome.problem], [false, "not_running"]);
  assert.equal(created().length, 0);
  assert.equal(chrome.badge.text, "!");
  assert.match(chrome.badge.title, /Start it with: skmemory serve/);
  const note = chrome.notifications.shown.get("skmemory-not-running");
  assert.match(note.message, /skmemory serve/);
  assert.equal(note.type, "basic");

  installFetch({ "/api/health": { body: HEALTHY } }); // started: the warning goes away
  assert.equal((await skm.onCommand("search-sk-memory", TAB, "garden")).opened, true);
  assert.equal(chrome.badge.text, "");
  assert.equal(chrome.badge.title, "Search SK Memory");
  assert.equal(chrome.notifications.shown.size, 0);
});

test("the stored port is used for the check and the window", async () => {
  await chrome.storage.local.set({ port: 9123 });
  const outcome = await skm.onCommand("search-sk-memory", TAB, "x");
  assert.equal(outcome.url, "http://127.0.0.1:9123/search?q=x&scope=all");
});

test("omnibox suggestions come from the API, escaped, one per document", async () => {
  let suggested;
  await skm.onOmniboxInput("bread", (s) => { suggested = s; });
  assert.equal(suggested.length, 2);
  assert.deepEqual(suggested[0], {
    content: "Projects/Sourdough.md",
    description: "Sourdough bread <dim>Projects/Sourdough.md</dim> Feed the <match>starter</match> &amp; wait &lt;12h&gt; &lt;b&gt;then&lt;/b&gt; bake",
  });
  assert.equal(suggested[1].description, "Garden plan <dim>Projects/Garden plan.md</dim> Beds &amp; <match>bread</match>");
  const [, def] = chrome.calls.findLast(([name]) => name === "omnibox.setDefaultSuggestion");
  assert.equal(def.description, "Search SK Memory (every project) for <match>bread</match>");
});

test("choosing a suggestion opens its document; typed text opens a search", async () => {
  await skm.onOmniboxInput("bread", () => {});
  let outcome = await skm.onOmniboxEnter("Projects/Sourdough.md");
  assert.equal(outcome.url, "http://127.0.0.1:8765/documents/doc-sourdough?project=notes");
  outcome = await skm.onOmniboxEnter("rye <bread>");
  assert.equal(outcome.url, "http://127.0.0.1:8765/search?q=rye+%3Cbread%3E&scope=all");
});

test("the omnibox explains when the app is down", async () => {
  installFetch({}, { down: [8765] });
  let suggested;
  await skm.onOmniboxInput("bread", (s) => { suggested = s; });
  assert.deepEqual(suggested, []);
  const [, def] = chrome.calls.findLast(([name]) => name === "omnibox.setDefaultSuggestion");
  assert.match(def.description, /not running on port 8765\. Start it with: skmemory serve/);
});

test("the popup's requests open the search window; strangers are ignored", async () => {
  const [listener] = chrome.runtime.onMessage.listeners;
  const answer = await new Promise((resolve) => {
    assert.equal(listener({ type: "search", query: "garden" }, { id: chrome.runtime.id }, resolve), true);
  });
  assert.equal(answer.url, "http://127.0.0.1:8765/search?q=garden&scope=all");
  const doc = await skm.onPopupRequest({ type: "open-document", documentId: "doc-garden", project: "notes" });
  assert.equal(doc.url, "http://127.0.0.1:8765/documents/doc-garden?project=notes");
  assert.equal(listener({ type: "search" }, { id: "someone-else" }, () => assert.fail("answered a stranger")), false);
  assert.equal((await skm.onPopupRequest({ type: "nonsense" })).problem, "unknown_request");
});
