// The one file that knows where SK Memory listens: http://127.0.0.1:<port>, the port from the options
// (chrome.storage.local, default 8765). Every other file asks here for URLs and for the server's answers.

export const HOST = "127.0.0.1";
export const DEFAULT_PORT = 8765;
const HEALTH_TIMEOUT_MS = 3000;
const SEARCH_TIMEOUT_MS = 10000;
const RELATED_TIMEOUT_MS = 15000;

/** Turn what the user typed into a port number, or throw an Error whose message says what to change. */
export function parsePort(value) {
  const text = String(value ?? "").trim();
  const port = Number(text);
  if (!/^\d+$/.test(text) || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`The port must be a whole number from 1 to 65535, not "${text}".`);
  }
  return port;
}

/** The port from the options, or the default when none (or a broken one) is stored. */
export async function getPort() {
  const { port } = await chrome.storage.local.get({ port: DEFAULT_PORT });
  try {
    return parsePort(port);
  } catch {
    return DEFAULT_PORT;
  }
}

/** Store the port for every later request; throws on a port that is not one. */
export async function setPort(value) {
  const port = parsePort(value);
  await chrome.storage.local.set({ port });
  return port;
}

/** The projects the extension searches, from the options: "" for every project (the default, merged by score as the
 * window merges them), else one project's name. */
export async function getSearchIn() {
  const { searchIn } = await chrome.storage.local.get({ searchIn: "" });
  return typeof searchIn === "string" ? searchIn : "";
}

/** Store which projects every later search, related-notes list, command and suggestion uses. */
export async function setSearchIn(value) {
  const searchIn = String(value ?? "").trim();
  await chrome.storage.local.set({ searchIn });
  return searchIn;
}

/** Where a search goes, as the API reads it: {scope: "all"} for every project, or {project}. */
export function scopeParams(searchIn) {
  return searchIn ? { project: searchIn } : { scope: "all" };
}

/** What was searched, in words: "every project" or "project “notes”". */
export function searchedIn(searchIn) {
  return searchIn ? `project “${searchIn}”` : "every project";
}

/** The base address of the app: http://127.0.0.1:<port>. */
export function baseUrl(port) {
  return `http://${HOST}:${port}`;
}

/** A full URL of the app for a path and query parameters (empty parameters are left out). */
export async function appUrl(path, params = {}, port) {
  const url = new URL(path, baseUrl(port ?? (await getPort())));
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(name, String(value));
  }
  return url.href;
}

/** The search window's page for a query, in the projects the options choose: /search?q=...&scope=all (or
 * &project=...), a bare /search when there is no query. */
export async function searchPageUrl(query) {
  return appUrl("/search", query ? { q: query, ...scopeParams(await getSearchIn()) } : {});
}

/** The search window's page of one document, at its passage when lines ([first, last]) are given. */
export function documentPageUrl(documentId, project, lines) {
  return appUrl(`/documents/${encodeURIComponent(documentId)}`,
    { project, lines: Array.isArray(lines) ? lines.join("-") : undefined });
}

/** The command that starts the app on this port, to tell a user who has not started it. */
export function startCommand(port) {
  return port === DEFAULT_PORT ? "skmemory serve" : `skmemory serve --port ${port}`;
}

function notRunning(port) {
  return {
    ok: false, port, problem: "not_running",
    message: `SK Memory is not running on port ${port}. Start it with: ${startCommand(port)}`,
  };
}

async function fetchJson(url, timeoutMs) {
  return fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers: { Accept: "application/json" } });
}

async function readJson(response) {
  try {
    return await response.json();
  } catch {
    return null;
  }
}

/**
 * Ask /api/health whether SK Memory answers on the port (the stored one unless given).
 * Resolves to {ok: true, port, health} or {ok: false, port, problem, message} with the exact problem;
 * never rejects.
 */
export async function checkHealth(port) {
  port = port ?? (await getPort());
  let response;
  try {
    response = await fetchJson(await appUrl("/api/health", {}, port), HEALTH_TIMEOUT_MS);
  } catch (error) {
    if (error?.name === "TimeoutError" || error?.name === "AbortError") {
      return {
        ok: false, port, problem: "timeout",
        message: `Something on port ${port} did not answer within ${HEALTH_TIMEOUT_MS / 1000} seconds. ` +
          `Is SK Memory busy, or is another program using the port?`,
      };
    }
    return notRunning(port); // the connection was refused: nothing listens there
  }
  const body = await readJson(response);
  if (response.ok && body?.app === "sk-memory" && body?.status === "ok") {
    return { ok: true, port, health: body };
  }
  if (body?.error && body?.detail) { // SK Memory's own error shape: pass its sentence on
    return { ok: false, port, problem: body.error, message: `SK Memory on port ${port} answered: ${body.detail}` };
  }
  return {
    ok: false, port, problem: "not_skmemory",
    message: `Something else answers on port ${port} (HTTP ${response.status}), not SK Memory. ` +
      `Set the port SK Memory uses in the extension's options.`,
  };
}

/** An Error from the server's API, with the sentence to show. */
export class ServerProblem extends Error {
  constructor(message, problem) {
    super(message);
    this.name = "ServerProblem";
    this.problem = problem;
  }
}

/** The notes related to a page: POST /api/related with its text, title and address (to 127.0.0.1 only);
 * resolves to the API's response, rejects with a ServerProblem. */
export async function relatedNotes({ text, title, url, limit = 6 }) {
  const port = await getPort();
  let response;
  try {
    response = await fetch(await appUrl("/api/related", {}, port), {
      method: "POST", signal: AbortSignal.timeout(RELATED_TIMEOUT_MS),
      headers: { Accept: "application/json", "Content-Type": "application/json" },
      body: JSON.stringify({ text, title, url, limit, ...scopeParams(await getSearchIn()) }),
    });
  } catch (error) {
    if (error?.name === "TimeoutError") {
      throw new ServerProblem(`SK Memory did not answer within ${RELATED_TIMEOUT_MS / 1000} seconds.`, "timeout");
    }
    const down = notRunning(port);
    throw new ServerProblem(down.message, down.problem);
  }
  const body = await readJson(response);
  if (!response.ok || !body || !Array.isArray(body.results)) {
    const detail = body?.detail ?? `HTTP ${response.status}`;
    throw new ServerProblem(`Finding related notes failed: ${detail}`, body?.error ?? "bad_response");
  }
  return body;
}

/** Search the notes through /api/search, one result per document by default; resolves to the API's response,
 * rejects with a ServerProblem. */
export async function searchNotes(query, { limit = 5, mode = "hybrid", group = "document" } = {}) {
  const port = await getPort();
  let response;
  try {
    const where = scopeParams(await getSearchIn());
    response = await fetchJson(await appUrl("/api/search", { q: query, mode, limit, group, ...where }, port),
      SEARCH_TIMEOUT_MS);
  } catch {
    const down = notRunning(port);
    throw new ServerProblem(down.message, down.problem);
  }
  const body = await readJson(response);
  if (!response.ok || !body || !Array.isArray(body.results)) {
    const detail = body?.detail ?? `HTTP ${response.status}`;
    throw new ServerProblem(`The search failed: ${detail}`, body?.error ?? "bad_response");
  }
  return body;
}

/** The names of the server's projects (GET /api/projects), for the options' choice; rejects with a ServerProblem. */
export async function projectNames(port) {
  port = port ?? (await getPort());
  let response;
  try {
    response = await fetchJson(await appUrl("/api/projects", {}, port), HEALTH_TIMEOUT_MS);
  } catch {
    const down = notRunning(port);
    throw new ServerProblem(down.message, down.problem);
  }
  const body = await readJson(response);
  if (!response.ok || !Array.isArray(body?.projects)) {
    throw new ServerProblem(`Listing the projects failed: ${body?.detail ?? `HTTP ${response.status}`}`,
      body?.error ?? "bad_response");
  }
  return body.projects.map((project) => project.name);
}
