// Text helpers without a DOM (the service worker has none): a snippet arrives as plain text with `highlights`,
// the [start, end) character offsets of its matches; the popup marks them with <mark> elements and the omnibox
// with its small XML dialect's <match>.

const XML_ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };

/** Split a snippet into [{text, marked}] pieces by its highlights (offsets count characters, not UTF-16 units). */
export function snippetParts(text, highlights = []) {
  const chars = Array.from(String(text ?? ""));
  const parts = [];
  let last = 0;
  const push = (from, to, marked) => { if (to > from) parts.push({ text: chars.slice(from, to).join(""), marked }); };
  for (const [start, end] of [...(highlights ?? [])].sort((a, b) => a[0] - b[0])) {
    if (start < last) continue; // overlapping spans: the first one wins
    push(last, start, false);
    push(start, Math.min(end, chars.length), true);
    last = Math.min(end, chars.length);
  }
  push(last, chars.length, false);
  return parts;
}

/** Escape text for the omnibox's XML descriptions. */
export function escapeXml(text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => XML_ESCAPES[c]);
}

/** A snippet for the omnibox: escaped, matches in <match>, cut to about maxChars characters. */
export function omniboxSnippet(snippet, highlights = [], maxChars = 80) {
  let out = "";
  let left = maxChars;
  for (const { text, marked } of snippetParts(snippet, highlights)) {
    if (left <= 0) break;
    let piece = text.replace(/\s+/g, " ");
    if (piece.length > left) piece = piece.slice(0, left) + "…";
    left -= piece.length;
    out += marked ? `<match>${escapeXml(piece)}</match>` : escapeXml(piece);
  }
  return out.trim();
}

/** The selected text as a query: whitespace collapsed, cut at maxChars (a window URL stays short). */
export function cleanSelection(text, maxChars = 300) {
  return String(text ?? "").replace(/\s+/g, " ").trim().slice(0, maxChars).trim();
}
