// What the command, the context menu, the omnibox and the popup do: check the app, then show a page of it
// in the search window, or say how to start the app (never a window with a browser error page).

import { checkHealth, documentPageUrl, searchPageUrl } from "./server.js";
import { clearServerDown, reportServerDown } from "./server-status.js";
import { openSearchWindow } from "./search-window.js";
import { cleanSelection } from "./text.js";

/** Check the app; when it answers, open the page pageUrl() builds in the search window. */
export async function showInSearchWindow(pageUrl) {
  const health = await checkHealth();
  if (!health.ok) {
    await reportServerDown(health);
    return { opened: false, problem: health.problem, message: health.message };
  }
  await clearServerDown();
  const url = await pageUrl();
  const shown = await openSearchWindow(url);
  return { opened: true, url, ...shown };
}

/** Search for text (the selection, a typed query) in the search window. */
export function searchFor(text) {
  const query = cleanSelection(text);
  return showInSearchWindow(() => searchPageUrl(query));
}

/** Open one document's page in the search window (at its passage when lines are given). */
export function openDocument(documentId, project, lines) {
  return showInSearchWindow(() => documentPageUrl(documentId, project, lines));
}

/** The text selected in a tab; empty where the extension may not look (chrome:// pages, the web store). */
export async function selectedText(tab) {
  if (!tab?.id || tab.id < 0) return "";
  try {
    const [frame] = await chrome.scripting.executeScript({
      target: { tabId: tab.id },
      func: () => globalThis.getSelection?.().toString() ?? "",
    });
    return typeof frame?.result === "string" ? frame.result : "";
  } catch {
    return "";
  }
}
