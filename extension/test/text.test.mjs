import { test } from "node:test";
import assert from "node:assert/strict";
import { cleanSelection, escapeXml, omniboxSnippet, plainText, snippetParts } from "../lib/text.js";

test("snippets become plain text: tags dropped, entities decoded", () => {
  assert.equal(plainText("Feed the <mark>starter</mark> &amp; wait &lt;12h&gt; <b>then</b>\n bake &#39;x&#x27;"),
    "Feed the starter & wait <12h> then bake 'x'");
  assert.equal(plainText("<script>alert(1)</script>"), "alert(1)"); // text only: nothing to run
  assert.equal(plainText(null), "");
});

test("snippetParts keeps what was marked", () => {
  assert.deepEqual(snippetParts("a <mark>b &amp; c</mark> d"), [
    { text: "a ", marked: false }, { text: "b & c", marked: true }, { text: " d", marked: false },
  ]);
});

test("omnibox text is escaped XML with matches in <match>", () => {
  assert.equal(escapeXml(`a<b>&"c'`), "a&lt;b&gt;&amp;&quot;c&apos;");
  assert.equal(omniboxSnippet("x &lt;y&gt; <mark>bread & butter</mark>"), "x &lt;y&gt; <match>bread &amp; butter</match>");
  const long = omniboxSnippet("word ".repeat(100), 20);
  assert.ok(long.length <= 22 && long.endsWith("…"), long);
});

test("a selection becomes a short one-line query", () => {
  assert.equal(cleanSelection("  sourdough\n\n starter\t"), "sourdough starter");
  assert.equal(cleanSelection("x".repeat(1000)).length, 300);
  assert.equal(cleanSelection(undefined), "");
});
