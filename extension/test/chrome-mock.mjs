// A small stand-in for the chrome.* APIs the extension uses, with in-memory storage and a log of calls,
// and a fetch stand-in that answers from a table of routes. Install it before importing extension code.

function event() {
  const listeners = [];
  return {
    listeners,
    addListener: (fn) => listeners.push(fn),
    removeListener: (fn) => listeners.splice(listeners.indexOf(fn), 1),
    hasListener: (fn) => listeners.includes(fn),
  };
}

function storageArea() {
  let data = {};
  return {
    reset: () => { data = {}; },
    dump: () => structuredClone(data),
    async get(keys) {
      if (keys === null || keys === undefined) return structuredClone(data);
      if (typeof keys === "string") keys = [keys];
      if (Array.isArray(keys)) {
        return Object.fromEntries(keys.filter((k) => k in data).map((k) => [k, structuredClone(data[k])]));
      }
      return Object.fromEntries(Object.entries(keys).map(([k, d]) => [k, k in data ? structuredClone(data[k]) : d]));
    },
    async set(items) { Object.assign(data, structuredClone(items)); },
    async remove(keys) { for (const k of [].concat(keys)) delete data[k]; },
  };
}

/** Install globalThis.chrome (and self); returns the mock with .calls, .openWindows and .reset(). */
export function installChrome() {
  const calls = [];
  const log = (name) => async (...args) => { calls.push([name, ...args]); };
  const windows = new Map(); // id -> {id, type, state, tabs: [{id, url}]}
  let nextId = 100;
  const badge = { text: "", title: "Search SK Memory" };

  const chrome = {
    calls, openWindows: windows, badge,
    runtime: {
      id: "fphfhnaleelndngdmghiokeflbahepef",
      getURL: (path) => `chrome-extension://fphfhnaleelndngdmghiokeflbahepef/${path}`,
      onInstalled: event(), onMessage: event(),
    },
    storage: { local: storageArea(), session: storageArea(), sync: storageArea() },
    commands: { onCommand: event() },
    contextMenus: {
      onClicked: event(),
      create: (props) => { calls.push(["contextMenus.create", props]); return props.id; },
      removeAll: log("contextMenus.removeAll"),
    },
    omnibox: {
      onInputChanged: event(), onInputEntered: event(),
      setDefaultSuggestion: (s) => calls.push(["omnibox.setDefaultSuggestion", s]),
    },
    windows: {
      onRemoved: event(),
      async create(props) {
        calls.push(["windows.create", props]);
        const win = { id: nextId++, type: props.type, state: "normal", tabs: [{ id: nextId++, url: props.url }] };
        windows.set(win.id, win);
        return structuredClone(win);
      },
      async get(id) {
        if (!windows.has(id)) throw new Error(`No window with id: ${id}.`);
        return structuredClone(windows.get(id));
      },
      async update(id, props) {
        calls.push(["windows.update", id, props]);
        if (!windows.has(id)) throw new Error(`No window with id: ${id}.`);
        Object.assign(windows.get(id), props.state ? { state: props.state } : {});
        return structuredClone(windows.get(id));
      },
    },
    tabs: {
      async update(id, props) {
        calls.push(["tabs.update", id, props]);
        for (const win of windows.values()) {
          const tab = win.tabs.find((t) => t.id === id);
          if (tab) { Object.assign(tab, { url: props.url ?? tab.url }); return structuredClone(tab); }
        }
        throw new Error(`No tab with id: ${id}.`);
      },
    },
    scripting: {
      selection: "",
      async executeScript(injection) {
        calls.push(["scripting.executeScript", injection]);
        if (chrome.scripting.selection instanceof Error) throw chrome.scripting.selection;
        return [{ frameId: 0, result: chrome.scripting.selection }];
      },
    },
    action: {
      async setBadgeText({ text }) { badge.text = text; },
      async setTitle({ title }) { badge.title = title; },
      async setBadgeBackgroundColor({ color }) { badge.color = color; },
    },
    notifications: {
      shown: new Map(),
      async create(id, options) { chrome.notifications.shown.set(id, options); return id; },
      async clear(id) { return chrome.notifications.shown.delete(id); },
    },
    reset() {
      calls.length = 0;
      windows.clear();
      chrome.storage.local.reset();
      chrome.storage.session.reset();
      chrome.scripting.selection = "";
      chrome.notifications.shown.clear();
      Object.assign(badge, { text: "", title: "Search SK Memory", color: undefined });
    },
    /** Close a window as the user would: gone, and onRemoved fired. */
    async closeWindow(id) {
      windows.delete(id);
      await Promise.all(chrome.windows.onRemoved.listeners.map((fn) => fn(id)));
    },
  };
  globalThis.chrome = chrome;
  globalThis.self ??= globalThis;
  return chrome;
}

/**
 * Replace fetch: routes maps "path" (without the query) to a response {status, body} or to a function of the
 * URL returning one; a port in `down` refuses the connection. Returns the list of URLs fetched.
 */
export function installFetch(routes, { down = [] } = {}) {
  const fetched = [];
  globalThis.fetch = async (input) => {
    const url = new URL(String(input));
    fetched.push(url.href);
    if (down.includes(Number(url.port))) throw new TypeError("fetch failed");
    let answer = routes[url.pathname] ?? { status: 404, body: "<h1>Not Found</h1>" };
    if (typeof answer === "function") answer = answer(url);
    const text = typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body);
    return new Response(text, { status: answer.status ?? 200 });
  };
  return fetched;
}

export const HEALTHY = { status: "ok", app: "sk-memory", port: 8765, embeddings: "ready" };

export const RESULTS = {
  results: [
    {
      // as the API answers: title, path and score, and spec 000's names for them beside them
      title: "Sourdough bread", path: "Projects/Sourdough.md", score: 1.6, project: "notes",
      document_title: "Sourdough bread", relative_path: "Projects/Sourdough.md", similarity: 1.6,
      document_id: "doc-sourdough", search_type: "hybrid",
      snippet: "Feed the starter & wait <12h> <b>then</b> bake", highlights: [[9, 16]],
    },
    {
      title: "Garden plan", path: "Projects/Garden plan.md", score: 0.4, project: "notes",
      document_title: "Garden plan", relative_path: "Projects/Garden plan.md", similarity: 0.4,
      document_id: "doc-garden", search_type: "semantic", snippet: "Beds & bread", highlights: [[7, 12]],
    },
  ],
  semantic_available: true,
};
