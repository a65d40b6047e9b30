// The search window: one popup window of the app, remembered in chrome.storage.session (a service worker
// forgets its globals whenever it sleeps), focused and pointed at the new page when it is already open.

const KEY = "searchWindow";
export const WINDOW_SIZE = { width: 960, height: 720 };

/** The window and tab of the open search window, or null. */
export async function rememberedWindow() {
  const { [KEY]: remembered } = await chrome.storage.session.get(KEY);
  return remembered ?? null;
}

async function reuse(remembered, url) {
  try {
    const win = await chrome.windows.get(remembered.windowId, { populate: true });
    const tab = win.tabs?.find((t) => t.id === remembered.tabId) ?? win.tabs?.[0];
    if (!tab) return null;
    await chrome.tabs.update(tab.id, { url, active: true });
    const restore = win.state === "minimized" ? { state: "normal" } : {};
    await chrome.windows.update(win.id, { focused: true, ...restore });
    return { windowId: win.id, tabId: tab.id };
  } catch {
    return null; // closed since: open a new one
  }
}

/** Show url in the search window: focus and update the open one, or open a popup window. */
export async function openSearchWindow(url) {
  const remembered = await rememberedWindow();
  let shown = remembered && (await reuse(remembered, url));
  if (!shown) {
    const win = await chrome.windows.create({ url, type: "popup", focused: true, ...WINDOW_SIZE });
    shown = { windowId: win.id, tabId: win.tabs?.[0]?.id };
  }
  await chrome.storage.session.set({ [KEY]: shown });
  return shown;
}

/** Forget the search window when it closes (a listener for chrome.windows.onRemoved). */
export async function forgetSearchWindow(windowId) {
  const remembered = await rememberedWindow();
  if (remembered?.windowId === windowId) await chrome.storage.session.remove(KEY);
}
