// The toolbar popup: a search box with the top results from the JSON API. Built with textContent only:
// a snippet arrives as plain text with its highlights' offsets, split here into text and <mark>ed text.

import { checkHealth, searchNotes } from "./lib/server.js";
import { snippetParts } from "./lib/text.js";

const RESULT_LIMIT = 5;
const TYPING_PAUSE_MS = 200;

const form = document.getElementById("search-form");
const input = document.getElementById("query");
const status = document.getElementById("status");
const list = document.getElementById("results");
let typingTimer = 0;
let latestSearch = 0;

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Show a sentence under the box; code spans in backticks are shown as code. */
function showStatus(message, problem = false) {
  status.replaceChildren();
  status.classList.toggle("problem", problem);
  message.split(/(`[^`]+`)/).forEach((piece) => {
    if (piece.startsWith("`")) status.append(element("code", "", piece.slice(1, -1)));
    else if (piece) status.append(piece);
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

checkHealth().then((health) => {
  if (!health.ok) showStatus(problemText(health.message), true);
});
