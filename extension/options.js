// The options page: the port of the app, a button that tests it and reports success or the exact problem, and the
// projects the extension searches (every project, or one of those the server lists).

import {
  baseUrl, checkHealth, getPort, getSearchIn, parsePort, projectNames, searchedIn, setPort, setSearchIn,
} from "./lib/server.js";

const form = document.getElementById("options-form");
const portInput = document.getElementById("port");
const testButton = document.getElementById("test");
const result = document.getElementById("result");
const searchIn = document.getElementById("search-in");

function report(message, ok) {
  result.textContent = message;
  result.className = `result ${ok ? "ok" : "problem"}`;
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    const port = await setPort(portInput.value);
    report(`Saved: the extension now talks to ${baseUrl(port)}/.`, true);
  } catch (error) {
    report(error.message, false);
  }
});

testButton.addEventListener("click", async () => {
  let port;
  try {
    port = parsePort(portInput.value);
  } catch (error) {
    report(error.message, false);
    return;
  }
  report(`Testing ${baseUrl(port)}/ …`, true);
  const health = await checkHealth(port);
  if (health.ok) {
    const embeddings = health.health.embeddings ?? "unknown";
    report(`Connected: SK Memory answers on port ${port} (embeddings: ${embeddings}).`, true);
  } else {
    report(health.message, false);
  }
});

getPort().then((port) => {
  portInput.value = String(port);
});

/** Offer every project and the server's projects, the stored choice selected (kept, and said, when the server
 * does not list it now). */
async function offerProjects() {
  const chosen = await getSearchIn();
  let names = [];
  try {
    names = await projectNames();
  } catch (problem) {
    report(`${problem.message} The projects are listed once it answers.`, false);
  }
  if (chosen && !names.includes(chosen)) {
    names.push(chosen);
    if (names.length > 1) report(`The server has no project “${chosen}” now; choose another.`, false);
  }
  searchIn.replaceChildren(new Option("Every project", ""), ...names.map((name) => new Option(name, name)));
  searchIn.value = chosen;
}

searchIn.addEventListener("change", async () => {
  const chosen = await setSearchIn(searchIn.value);
  report(`Saved: the extension searches ${searchedIn(chosen)}.`, true);
});

offerProjects();
