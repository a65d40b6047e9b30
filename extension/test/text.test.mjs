import { test } from "node:test";
import assert from "node:assert/strict";
import { cleanSelection, escapeXml, omniboxSnippet, snippetParts } from "../lib/text.js";

test("snippetParts marks the highlighted spans and leaves the rest as text", () => {
  assert.deepEqual(snippetParts("a b & c d", [[2, 7]]), [
    { text: "a ", marked: false }, { text: "b & c", marked: true }, { text: " d", marked: false },
  ]);
  assert.deepEqual(snippetParts("<script>x</script>", []), [{ text: "<script>x</script>", marked: false }]);
  assert.deepEqual(snippetParts(null), []);
});

test("highlight offsets count characters, so a match after an emoji is still marked right", () => {
  assert.deepEqual(snippetParts("🌱 seed bread", [[7, 12]]), [
    { text: "🌱 seed ", marked: false }, { text: "bread", marked: true },
  ]);
});

test("omnibox text is escaped XML with matches in <match>", () => {
  assert.equal(escapeXml(`a<b>&"c'`), "a&lt;b&gt;&amp;&quot;c&apos;");
  assert.equal(omniboxSnippet("x <y> bread & butter", [[6, 20]]), "x &lt;y&gt; <match>bread &amp; butter</match>");
  const long = omniboxSnippet("word ".repeat(100), [], 20);
  assert.ok(long.length <= 22 && long.endsWith("…"), long);
});

test("a selection becomes a short one-line query", () => {
  assert.equal(cleanSelection("  sourdough\n\n starter\t"), "sourdough starter");
  assert.equal(cleanSelection("x".repeat(1000)).length, 300);
  assert.equal(cleanSelection(undefined), "");
});
