// The toolbar popup: a search box with the top results from the JSON API, and the notes related to the page
// the popup was opened on (read only now, through activeTab; sent to SK Memory on this computer alone; never stored). Built with
// textContent only: a snippet arrives as plain text with its highlights' offsets, split here into text and <mark>s.

import { isReadable, neverSites, readPage, setNever, siteOf } from "./lib/page.js";
import { checkHealth, getSearchIn, relatedNotes, searchNotes, searchedIn } from "./lib/server.js";
import { snippetParts } from "./lib/text.js";

const RESULT_LIMIT = 5;
const RELATED_LIMIT = 6;
const TYPING_PAUSE_MS = 200;

const form = document.getElementById("search-form");
const input = document.getElementById("query");
const status = document.getElementById("status");
const list = document.getElementById("results");
const relatedStatus = document.getElementById("related-status");
const relatedList = document.getElementById("related-results");
const pageLine = document.getElementById("page");
const neverButton = document.getElementById("never");
let typingTimer = 0;
let latestSearch = 0;

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Show a sentence in a status line (under the box by default); code spans in backticks are shown as code. */
function showStatus(message, problem = false, line = status) {
  line.replaceChildren();
  line.classList.toggle("problem", problem);
  message.split(/(`[^`]+`)/).forEach((piece) => {
    if (piece.startsWith("`")) line.append(element("code", "", piece.slice(1, -1)));
    else if (piece) line.append(piece);
  });
}

function snippetNode(result) {
  const node = element("span", "snippet");
  for (const { text, marked } of snippetParts(result.snippet, result.highlights)) {
    node.append(marked ? element("mark", "", text) : text);
  }
  return node;
}

function resultNode(result) {
  const button = element("button", "result");
  button.type = "button";
  button.dataset.documentId = result.document_id;
  button.append(element("span", "result-title", result.title),
    element("span", "result-path", result.path), snippetNode(result));
  const more = result.more_passages?.length || 0;
  if (more) button.append(element("span", "more-passages", `${more} more passage${more === 1 ? "" : "s"}`));
  button.addEventListener("click", () => {
    ask({ type: "open-document", documentId: result.document_id, project: result.project });
  });
  const item = element("li");
  item.append(button);
  return item;
}

/** Ask the service worker to open the search window (this popup closes when it does). */
async function ask(message) {
  const answer = await chrome.runtime.sendMessage(message);
  if (answer?.opened) window.close();
  else if (answer?.message) showStatus(answer.message, true);
}

function problemText(message) {
  return message.replace(/Start it with: (.+)$/, "Start it with `$1`.");
}

async function search() {
  const query = input.value.trim();
  const mine = ++latestSearch;
  if (!query) {
    list.replaceChildren();
    showStatus("");
    return;
  }
  try {
    const response = await searchNotes(query, { limit: RESULT_LIMIT });
    if (mine !== latestSearch) return; // a newer search is under way
    list.replaceChildren(...response.results.map(resultNode));
    showStatus(response.results.length ? "" : `No notes match “${query}”.`);
  } catch (problem) {
    if (mine !== latestSearch) return;
    list.replaceChildren();
    showStatus(problemText(problem.message), true);
  }
}

input.addEventListener("input", () => {
  clearTimeout(typingTimer);
  typingTimer = setTimeout(search, TYPING_PAUSE_MS);
});
form.addEventListener("submit", (event) => {
  event.preventDefault();
  ask({ type: "search", query: input.value });
});

/** Name the projects every search of this popup goes to (the options choose them). */
async function nameSearchedIn() {
  const where = searchedIn(await getSearchIn());
  const line = document.getElementById("searched-in");
  line.replaceChildren(`Searching ${where} · `);
  const change = element("a", "", "change");
  change.href = "options.html";
  change.target = "_blank";
  line.append(change);
  document.getElementById("related-in").textContent = `(${where})`;
}

nameSearchedIn();
checkHealth().then((health) => {
  if (!health.ok) showStatus(problemText(health.message), true);
});

function relatedNode(note) {
  const button = element("button", "result");
  button.type = "button";
  const title = element("span", "result-title", note.title);
  if (note.saved) title.append(element("span", "saved", "saved"));
  button.append(title, element("span", "result-path", note.path), snippetNode(note),
    element("span", "why", note.reason));
  button.addEventListener("click", () => {
    ask({ type: "open-document", documentId: note.document_id, project: note.project, lines: note.lines });
  });
  const item = element("li");
  item.append(button);
  return item;
}

/** The tab the popup relates: the active one (?tab=ID names another, as the tests open the popup). */
async function pageTab() {
  const asked = Number(new URLSearchParams(location.search).get("tab"));
  if (asked) return chrome.tabs.get(asked);
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  return tab;
}

function offerNever(site, never) {
  neverButton.hidden = !site;
  neverButton.textContent = never ? `Read pages of ${site} again` : `Never read pages of ${site}`;
  neverButton.onclick = async () => {
    await setNever(site, !never);
    relatedList.replaceChildren();
    if (never) showRelated();
    else {
      offerNever(site, true);
      showStatus(`Pages of ${site} will not be read.`, false, relatedStatus);
    }
  };
}

/** Read the page (only now, as the popup opens) and list the notes related to it. */
async function showRelated() {
  const tab = await pageTab();
  if (!tab || !isReadable(tab.url)) {
    showStatus("This page cannot be read (a browser page, or one the extension may not open).", false, relatedStatus);
    return;
  }
  const site = siteOf(tab.url);
  if ((await neverSites()).includes(site)) {
    offerNever(site, true);
    showStatus(`You asked never to read pages of ${site}.`, false, relatedStatus);
    return;
  }
  offerNever(site, false);
  showStatus("Reading the page…", false, relatedStatus);
  const page = await readPage(tab.id);
  if (!page || !(page.text.trim() || page.title.trim())) {
    showStatus("This page has no text to relate to your notes.", false, relatedStatus);
    return;
  }
  pageLine.textContent = page.selection ? "Your selection on this page" : page.title || page.url;
  try {
    const found = await relatedNotes({ ...page, limit: RELATED_LIMIT });
    relatedList.replaceChildren(...found.results.map(relatedNode));
    if (!found.results.length) showStatus("Nothing in your notes relates to this page.", false, relatedStatus);
    else if (!found.semantic_available) showStatus("Found by words only: meaning search is still loading.", false,
      relatedStatus);
    else showStatus("", false, relatedStatus);
  } catch (problem) {
    relatedList.replaceChildren();
    showStatus(problemText(problem.message), true, relatedStatus);
  }
}

showRelated();
