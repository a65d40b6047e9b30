// The page the popup relates to your notes: read only when the person opens the popup (or presses its shortcut),
// through activeTab and scripting; sent to SK Memory on this computer (lib/server.js) and nowhere else; never stored. A site the
// person marks "never" is not read again (its host name is kept in chrome.storage.local, nothing else).

export const MAX_PAGE_CHARS = 1_000_000; // the server reads no more of a text than this

/** Whether the extension may read a page at this address: web pages only (not chrome://, the web store, files). */
export function isReadable(url) {
  return /^https?:\/\//i.test(String(url ?? "")) && !/^https:\/\/chromewebstore\.google\.com\//i.test(url);
}

/** The site a page belongs to: its host name ("" for an address that is not one). */
export function siteOf(url) {
  try {
    return new URL(url).hostname;
  } catch {
    return "";
  }
}

/** The sites the person asked never to read. */
export async function neverSites() {
  const { neverSites } = await chrome.storage.local.get({ neverSites: [] });
  return Array.isArray(neverSites) ? neverSites : [];
}

/** Mark a site never to be read (never = true), or readable again. */
export async function setNever(site, never) {
  const sites = (await neverSites()).filter((s) => s !== site);
  if (never) sites.push(site);
  await chrome.storage.local.set({ neverSites: sites });
  return sites;
}

/** Runs inside the page: its title, address, selection and main text (an article or main element, else the body). */
export function pageReader() {
  const selection = String(globalThis.getSelection?.() ?? "").trim();
  const main = document.querySelector("article, main, [role=main]") ?? document.body;
  return { title: document.title, url: location.href, selection, text: main?.innerText ?? "" };
}

/** What to relate: the selection when there is one, else the main text, cut to MAX_PAGE_CHARS. */
export function textToRelate(read) {
  const text = (read?.selection || read?.text || "").slice(0, MAX_PAGE_CHARS);
  return { title: String(read?.title ?? "").slice(0, 1000), url: String(read?.url ?? ""), text,
           selection: Boolean(read?.selection) };
}

/** Read a tab's page (null where the extension may not look). */
export async function readPage(tabId) {
  try {
    const [frame] = await chrome.scripting.executeScript({ target: { tabId }, func: pageReader });
    return frame?.result ? textToRelate(frame.result) : null;
  } catch {
    return null;
  }
}
