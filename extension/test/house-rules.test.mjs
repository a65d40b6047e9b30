// The extension's rules, checked on its files: narrow permissions, one file with the server address,
// no markup parsing, no state in the service worker's globals.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

const ROOT = new URL("..", import.meta.url).pathname;
const manifest = JSON.parse(readFileSync(join(ROOT, "manifest.json"), "utf8"));
const sources = ["background.js", "popup.js", "options.js", ...readdirSync(join(ROOT, "lib")).map((f) => `lib/${f}`)]
  .filter((f) => f.endsWith(".js"))
  .map((f) => [f, readFileSync(join(ROOT, f), "utf8")]);

test("the manifest asks only for 127.0.0.1 and what the features need", () => {
  assert.equal(manifest.manifest_version, 3);
  assert.deepEqual(manifest.host_permissions, ["http://127.0.0.1/*"]);
  assert.deepEqual([...manifest.permissions].sort(), ["activeTab", "contextMenus", "notifications", "scripting", "storage"]);
  assert.deepEqual(manifest.background, { service_worker: "background.js", type: "module" });
  assert.equal(manifest.omnibox.keyword, "sk");
  assert.deepEqual(manifest.commands["search-sk-memory"].suggested_key, { default: "Ctrl+Shift+K", mac: "Command+Shift+K" });
  assert.match(manifest.key, /^[A-Za-z0-9+/]+=*$/); // a public key only: the id stays the same everywhere
  assert.ok(!("content_scripts" in manifest) && !("externally_connectable" in manifest));
});

test("only lib/server.js knows the server's address", () => {
  for (const [file, text] of sources) {
    if (file === "lib/server.js") continue;
    assert.doesNotMatch(text, /127\.0\.0\.1|localhost|8765|http:\/\//, file);
  }
});

test("no markup is parsed from strings", () => {
  for (const [file, text] of sources) {
    assert.doesNotMatch(text, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|DOMParser|eval\(/, file);
  }
});

test("the service worker's files keep no state in module globals", () => {
  for (const [file, text] of sources) {
    if (file === "popup.js" || file === "options.js") continue; // pages live as long as they are open
    assert.doesNotMatch(text, /^(let|var) /m, `${file} has a mutable top-level variable`);
  }
});
