// The omnibox keyword "sk": the top results as suggestions; choosing one opens that document, pressing Enter
// on typed text opens the search window for it. The suggestions of the last input are kept in
// chrome.storage.session so Enter can find the document a suggestion stands for.

import { getSearchIn, searchNotes, searchedIn } from "./server.js";
import { escapeXml, omniboxSnippet } from "./text.js";

const KEY = "omniboxSuggestions";
export const SUGGESTION_LIMIT = 5;

/** The omnibox suggestion for one search result: its path as content, title, path and snippet shown. */
export function suggestionFor(result) {
  const snippet = omniboxSnippet(result.snippet, result.highlights);
  return {
    content: result.path,
    description: `${escapeXml(result.title)} <dim>${escapeXml(result.path)}</dim>` +
      (snippet ? ` ${snippet}` : ""),
  };
}

/** Suggestions for what is typed after "sk"; an explanation instead when the app does not answer. */
export async function suggestionsFor(text) {
  const query = text.trim();
  if (!query) return { suggestions: [], defaultSuggestion: "Search SK Memory: type what you are looking for" };
  let response;
  try {
    response = await searchNotes(query, { limit: SUGGESTION_LIMIT });
  } catch (problem) {
    return { suggestions: [], defaultSuggestion: escapeXml(problem.message) };
  }
  const suggestions = [];
  const documents = {};
  for (const result of response.results) {
    if (documents[result.path]) continue; // one suggestion per document (content must be unique)
    documents[result.path] = { documentId: result.document_id, project: result.project };
    suggestions.push(suggestionFor(result));
  }
  await chrome.storage.session.set({ [KEY]: documents });
  const where = escapeXml(searchedIn(await getSearchIn()));
  return { suggestions, defaultSuggestion: `Search SK Memory (${where}) for <match>${escapeXml(query)}</match>` };
}

/** The document a chosen suggestion stands for, or null when the text was typed. */
export async function documentFor(text) {
  const { [KEY]: documents } = await chrome.storage.session.get(KEY);
  return documents?.[text] ?? null;
}
