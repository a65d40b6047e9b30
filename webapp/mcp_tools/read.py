"""The MCP tools that read one note: what it is (get_document), its text a page at a time (read_note), its links."""
from __future__ import annotations

from typing import Annotated

from mcp_types import CallToolResult
from pydantic import Field

from .common import Direction, Note, Project, answer, ask
from . import answers as shape
from .models import CompactLinks, NoteInfo, NotePage, CompactSuggestions


def get_document(link, note: Note, project: Project = None) -> Annotated[CallToolResult, NoteInfo]:
    """Describe one note without its text: metadata, frontmatter, its outline (headings with their lines, at most
    60) and how many links it has each way.

    Then read a section with read_note(path, section=heading), or see its links with links(path).
    Prefer read_note to read the text.
    Example: get_document(note="Projects/Garden plan.md")
    """
    return answer(ask(link, "note_info", note=note, project=project))


def read_note(link, note: Note, project: Project = None,
                    section: Annotated[str | None, Field(max_length=500, description="A heading of the note: read "
                                                                                     "that section.")] = None,
                    start_line: Annotated[int | None, Field(ge=1, description="First line to read (1-based; search "
                                                                              "rows give `lines`).")] = None,
                    end_line: Annotated[int | None, Field(ge=1, description="Last line to read.")] = None,
                    offset: Annotated[int, Field(ge=0, description="Where to go on: the next_offset of the page "
                                                                   "before.")] = 0,
                    max_chars: Annotated[int, Field(ge=200, le=40000, description="Most characters in this page "
                                                                                  "(about 4 per token).")] = 8000,
                    ) -> Annotated[CallToolResult, NotePage]:
    """Read a note's text as it is in the file: all of it, one section (by heading) or a line range, a page at a
    time (8,000 characters by default, about 2,000 tokens).

    next_offset is null at the end; otherwise call again with offset=next_offset. `lines` says which file
    lines the page holds. PDFs and other documents give their indexed text.
    Prefer get_document for the outline first on a long note, get_context for passages of many notes.
    Example: read_note(note="Projects/Garden plan.md", section="Watering")
    """
    return answer(ask(link, "read_note", note=note, project=project, section=section, start_line=start_line,
                       end_line=end_line, offset=offset, max_chars=max_chars))


def links(link, note: Note, project: Project = None,
                direction: Direction = "both",
                limit: Annotated[int, Field(ge=1, le=500, description="Most links in each list.")] = 50,
                ) -> Annotated[CallToolResult, CompactLinks]:
    """List a note's outgoing links (with the path each resolves to, null when it names no note) and its
    backlinks, each list at most `limit` long, with the totals.

    Prefer memory_search mode 'xref' for related_to fields and mentions by id.
    Example: links(note="Garden plan", direction="backlinks")
    """
    found = ask(link, "links", note=note, project=project, direction=direction, limit=limit)
    found.pop("truncated", None)  # the API's older word for `more`: an agent meets one
    return answer(found)



def suggest_links(link, note: Note, project: Project = None,
                  limit: Annotated[int, Field(ge=1, le=20, description="Most notes close in meaning.")] = 8,
                  ) -> Annotated[CallToolResult, CompactSuggestions]:
    """List the links a note could have: notes it names without a link (with the line) and notes close in meaning
    that no link joins to it, each with the link to paste in the vault's style ([[wikilink]] or [text](path)).

    SK Memory never writes to notes: show the links to the user, or write them with your own tools.
    Prefer links for the links it has.
    Example: suggest_links(note="Projects/Garden plan.md")
    """
    return answer(shape.suggestions_answer(ask(link, "suggestions", note=note, project=project,
                                               limit=limit)))

TOOLS = (
    get_document, read_note, links, suggest_links,
)
