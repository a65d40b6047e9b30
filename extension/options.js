// The options page: the port of the app, and a button that tests it and reports success or the exact problem.

import { baseUrl, checkHealth, getPort, parsePort, setPort } from "./lib/server.js";

const form = document.getElementById("options-form");
const portInput = document.getElementById("port");
const testButton = document.getElementById("test");
const result = document.getElementById("result");

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
