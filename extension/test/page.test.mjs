// The page the popup relates: which pages may be read, the "never on this site" list, what is sent.
import { test } from "node:test";
import assert from "node:assert/strict";

import { installChrome, installFetch } from "./chrome-mock.mjs";

const chrome = installChrome();
const page = await import("../lib/page.js");
const server = await import("../lib/server.js");

test("only web pages are read, never browser pages or the web store", () => {
  assert.ok(page.isReadable("https://example.com/a"));
  assert.ok(page.isReadable("http://127.0.0.1:9000/page.html"));
  for (const url of ["chrome://settings", "chrome-extension://x/popup.html", "file:///etc/passwd",
    "https://chromewebstore.google.com/detail/x", "", undefined]) {
    assert.equal(page.isReadable(url), false, url);
  }
  assert.equal(page.siteOf("https://news.example.org/a?b"), "news.example.org");
  assert.equal(page.siteOf("not a url"), "");
});

test("a site marked never stays marked until it is allowed again", async () => {
  chrome.storage.local.reset();
  assert.deepEqual(await page.neverSites(), []);
  await page.setNever("bank.example", true);
  await page.setNever("mail.example", true);
  assert.deepEqual(await page.neverSites(), ["bank.example", "mail.example"]);
  await page.setNever("bank.example", false);
  assert.deepEqual(await page.neverSites(), ["mail.example"]);
  assert.deepEqual(Object.keys(chrome.storage.local.dump()), ["neverSites"]); // nothing of the page is kept
});

test("the selection wins over the page's text, and a huge page is cut to what the server reads", () => {
  const chosen = page.textToRelate({ title: "T", url: "https://e.x/", selection: "just this", text: "all of it" });
  assert.equal(chosen.text, "just this");
  assert.equal(chosen.selection, true);
  const huge = page.textToRelate({ title: "T", url: "https://e.x/", selection: "", text: "a".repeat(2_000_000) });
  assert.equal(huge.text.length, page.MAX_PAGE_CHARS);
});

test("relatedNotes posts the page to the server's /api/related and passes its sentence on", async () => {
  let sent = null;
  globalThis.fetch = async (input, init) => {
    sent = { url: String(input), init };
    return new Response(JSON.stringify({ results: [{ title: "Sourdough bread" }], semantic_available: true }));
  };
  const found = await server.relatedNotes({ text: "starter", title: "Bread", url: "https://e.x/" });
  assert.equal(found.results[0].title, "Sourdough bread");
  assert.equal(sent.url, "http://127.0.0.1:8765/api/related");
  assert.equal(sent.init.method, "POST");
  assert.deepEqual(JSON.parse(sent.init.body), { text: "starter", title: "Bread", url: "https://e.x/", limit: 6,
    scope: "all" });

  installFetch({ "/api/related": { status: 400, body: { error: "invalid_request", detail: "Give the text" } } });
  await assert.rejects(server.relatedNotes({ text: "" }), /Finding related notes failed: Give the text/);
  installFetch({}, { down: [8765] });
  await assert.rejects(server.relatedNotes({ text: "x" }), /SK Memory is not running on port 8765/);
});
