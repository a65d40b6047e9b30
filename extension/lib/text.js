// Text helpers without a DOM (the service worker has none): snippets arrive as HTML with <mark> around the
// matches; the popup shows them as plain text and the omnibox as its small XML dialect.

const ENTITIES = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" };
const XML_ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" };

/** Decode the character references a server-escaped snippet can hold. */
export function decodeEntities(text) {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ref) => {
    if (ref[0] === "#") {
      const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[ref.toLowerCase()] ?? whole;
  });
}

/** Split a snippet into [{text, marked}] pieces: the text between tags, marked when inside <mark>. */
export function snippetParts(html) {
  const parts = [];
  let marked = false;
  for (const piece of String(html ?? "").split(/(<[^>]*>)/)) {
    if (piece.startsWith("<")) {
      if (/^<mark\b/i.test(piece)) marked = true;
      else if (/^<\/mark\s*>/i.test(piece)) marked = false;
      continue; // every other tag is dropped
    }
    if (piece) parts.push({ text: decodeEntities(piece), marked });
  }
  return parts;
}

/** The plain text of a snippet, whitespace collapsed. */
export function plainText(html) {
  return snippetParts(html).map((p) => p.text).join("").replace(/\s+/g, " ").trim();
}

/** Escape text for the omnibox's XML descriptions. */
export function escapeXml(text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => XML_ESCAPES[c]);
}

/** A snippet for the omnibox: escaped, matches in <match>, cut to about maxChars characters. */
export function omniboxSnippet(html, maxChars = 80) {
  let out = "";
  let left = maxChars;
  for (const { text, marked } of snippetParts(html)) {
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
