// The service worker. Every listener is registered at the top level, on every start, because Chrome wakes
// the worker for an event and then runs this file from the top; nothing is kept in globals between events
// (the search window and the omnibox suggestions live in chrome.storage.session).

import { openDocument, searchFor, selectedText } from "./lib/actions.js";
import { documentFor, suggestionsFor } from "./lib/omnibox.js";
import { forgetSearchWindow } from "./lib/search-window.js";

export const COMMAND = "search-sk-memory";
export const MENU_ID = "search-sk-memory-selection";

/** The keyboard command: search for the page's selection (given, or read from the tab). */
async function onCommand(command, tab, selection) {
  if (command !== COMMAND) return null;
  const text = selection ?? (await selectedText(tab));
  return searchFor(text);
}

/** The context-menu item on selected text. */
async function onContextMenu(info, tab) {
  if (info.menuItemId !== MENU_ID) return null;
  return searchFor(info.selectionText ?? "");
}

/** Create the context-menu item; menus persist, so once per install or update is enough. */
async function onInstalled() {
  await chrome.contextMenus.removeAll();
  chrome.contextMenus.create({ id: MENU_ID, title: "Search SK Memory for “%s”", contexts: ["selection"] });
}

/** Omnibox input after the keyword "sk": suggestions from the API. */
async function onOmniboxInput(text, suggest) {
  const { suggestions, defaultSuggestion } = await suggestionsFor(text);
  chrome.omnibox.setDefaultSuggestion({ description: defaultSuggestion });
  suggest(suggestions);
  return suggestions;
}

/** Omnibox Enter: the chosen suggestion's document, or a search for the typed text. */
async function onOmniboxEnter(text) {
  const doc = await documentFor(text);
  return doc ? openDocument(doc.documentId, doc.project) : searchFor(text);
}

/** Requests from the toolbar popup, which closes as soon as a window opens and so cannot do it itself. */
async function onPopupRequest(message) {
  if (message?.type === "search") return searchFor(message.query ?? "");
  if (message?.type === "open-document") return openDocument(message.documentId, message.project, message.lines);
  return { opened: false, problem: "unknown_request", message: `Unknown request ${JSON.stringify(message?.type)}.` };
}

chrome.runtime.onInstalled.addListener(() => {
  onInstalled();
});
chrome.commands.onCommand.addListener((command, tab) => {
  onCommand(command, tab);
});
chrome.contextMenus.onClicked.addListener((info, tab) => {
  onContextMenu(info, tab);
});
chrome.omnibox.onInputChanged.addListener((text, suggest) => {
  onOmniboxInput(text, suggest);
});
chrome.omnibox.onInputEntered.addListener((text) => {
  onOmniboxEnter(text);
});
chrome.windows.onRemoved.addListener((windowId) => {
  forgetSearchWindow(windowId);
});
chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  if (sender.id !== chrome.runtime.id) return false;
  onPopupRequest(message).then(sendResponse, (error) => sendResponse({ opened: false, message: String(error) }));
  return true; // the answer comes asynchronously
});

// The handlers, for the end-to-end tests to call through the worker (no shortcut can be pressed headless).
self.skm = { onCommand, onContextMenu, onInstalled, onOmniboxInput, onOmniboxEnter, onPopupRequest };
