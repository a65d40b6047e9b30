import { test, beforeEach } from "node:test";
import assert from "node:assert/strict";
import { installChrome, installFetch, HEALTHY, RESULTS } from "./chrome-mock.mjs";

const chrome = installChrome();
const server = await import("../lib/server.js");

beforeEach(() => chrome.reset());

test("the port defaults to 8765 and a stored port is used", async () => {
  assert.equal(await server.getPort(), 8765);
  assert.equal(await server.searchPageUrl("sourdough starter"),
    "http://127.0.0.1:8765/search?q=sourdough+starter&scope=all");
  await server.setPort(" 9001 ");
  assert.equal(await server.getPort(), 9001);
  assert.equal(await server.appUrl("/api/health"), "http://127.0.0.1:9001/api/health");
});

test("a broken stored port falls back to the default", async () => {
  await chrome.storage.local.set({ port: "http://evil.example" });
  assert.equal(await server.getPort(), 8765);
});

test("parsePort refuses what is not a port with a sentence", () => {
  for (const bad of ["", "0", "65536", "80.5", "-1", "8765x", "abc"]) {
    assert.throws(() => server.parsePort(bad), /whole number from 1 to 65535/, bad);
  }
  assert.equal(server.parsePort("65535"), 65535);
});

test("URLs are encoded and the search window's pages are built here", async () => {
  assert.equal(await server.searchPageUrl("a&b=c #tag ü"),
    "http://127.0.0.1:8765/search?q=a%26b%3Dc+%23tag+%C3%BC&scope=all");
  assert.equal(await server.searchPageUrl(""), "http://127.0.0.1:8765/search");
  assert.equal(await server.documentPageUrl("x/y", "my notes"), "http://127.0.0.1:8765/documents/x%2Fy?project=my+notes");
});

test("checkHealth says ok for SK Memory", async () => {
  installFetch({ "/api/health": { body: HEALTHY } });
  const health = await server.checkHealth();
  assert.equal(health.ok, true);
  assert.equal(health.health.embeddings, "ready");
});

test("checkHealth names the exact problem", async () => {
  installFetch({ "/api/health": { body: HEALTHY } }, { down: [8765, 9100] });
  let health = await server.checkHealth();
  assert.deepEqual([health.ok, health.problem], [false, "not_running"]);
  assert.match(health.message, /not running on port 8765\. Start it with: skmemory serve$/);
  health = await server.checkHealth(9100);
  assert.match(health.message, /skmemory serve --port 9100$/);

  installFetch({}); // another web server: 404 with HTML
  health = await server.checkHealth();
  assert.equal(health.problem, "not_skmemory");
  assert.match(health.message, /Something else answers on port 8765 \(HTTP 404\)/);

  installFetch({ "/api/health": { status: 400, body: { error: "bad_host", detail: "This server only answers to ..." } } });
  health = await server.checkHealth();
  assert.equal(health.problem, "bad_host");
  assert.match(health.message, /answered: This server only answers/);

  globalThis.fetch = async () => { throw new DOMException("timed out", "TimeoutError"); };
  health = await server.checkHealth();
  assert.equal(health.problem, "timeout");
});

test("searchNotes asks the API and reports failures as sentences", async () => {
  const fetched = installFetch({ "/api/search": { body: RESULTS } });
  const response = await server.searchNotes("bread", { limit: 5 });
  assert.equal(response.results[0].title, "Sourdough bread");
  assert.equal(fetched[0], "http://127.0.0.1:8765/api/search?q=bread&mode=hybrid&limit=5&group=document&scope=all");  // one row per document

  installFetch({ "/api/search": { status: 400, body: { error: "invalid_request", detail: "limit must be ..." } } });
  await assert.rejects(server.searchNotes("x"), { name: "ServerProblem", problem: "invalid_request", message: /limit must be/ });
  installFetch({}, { down: [8765] });
  await assert.rejects(server.searchNotes("x"), { problem: "not_running", message: /skmemory serve/ });
});

test("every search goes where the options say: every project by default, or the one chosen, and says so", async () => {
  assert.equal(await server.getSearchIn(), "");
  assert.equal(server.searchedIn(await server.getSearchIn()), "every project");
  await server.setSearchIn(" recipes ");
  assert.equal(server.searchedIn(await server.getSearchIn()), "project “recipes”");
  const fetched = installFetch({ "/api/search": { body: RESULTS } });
  await server.searchNotes("bread");
  assert.equal(fetched[0], "http://127.0.0.1:8765/api/search?q=bread&mode=hybrid&limit=5&group=document&project=recipes");
  assert.equal(await server.searchPageUrl("rye"), "http://127.0.0.1:8765/search?q=rye&project=recipes");
  await server.setSearchIn("");
  assert.equal(await server.searchPageUrl("rye"), "http://127.0.0.1:8765/search?q=rye&scope=all");
});

test("projectNames lists the server's projects for the options", async () => {
  installFetch({ "/api/projects": { body: { projects: [{ name: "notes" }, { name: "recipes" }] } } });
  assert.deepEqual(await server.projectNames(), ["notes", "recipes"]);
  installFetch({}, { down: [8765] });
  await assert.rejects(server.projectNames(), { problem: "not_running" });
});
