// Telling the user that the app is not running: a notification and a "!" on the toolbar button whose
// tooltip says how to start it. Cleared as soon as the app answers again.

export const NOTIFICATION_ID = "skmemory-not-running";
export const DEFAULT_TITLE = "Search SK Memory";

/** Show the problem from checkHealth as a notification and a badge. */
export async function reportServerDown(problem) {
  await chrome.action.setBadgeBackgroundColor({ color: "#b3261e" });
  await chrome.action.setBadgeText({ text: "!" });
  await chrome.action.setTitle({ title: `SK Memory: ${problem.message}` });
  try {
    await chrome.notifications.create(NOTIFICATION_ID, {
      type: "basic",
      iconUrl: chrome.runtime.getURL("icons/icon128.png"),
      title: "SK Memory is not reachable",
      message: problem.message,
      priority: 1,
    });
  } catch {
    // Notifications can be switched off for Chrome; the badge and its tooltip still say it.
  }
}

/** Take the badge and the notification away. */
export async function clearServerDown() {
  await chrome.action.setBadgeText({ text: "" });
  await chrome.action.setTitle({ title: DEFAULT_TITLE });
  try {
    await chrome.notifications.clear(NOTIFICATION_ID);
  } catch {
    // nothing to clear
  }
}
