"""The MCP tool of spec 002: memory_search, which locates memory files without loading them."""
from __future__ import annotations

from typing import Annotated, Any

from mcp_types import CallToolResult
from pydantic import Field

from . import answers as shape
from .common import MemoryMode, Project, answer, ask
from .models import MemoryResponse


def memory_search(link, mode: MemoryMode,
                        query: Annotated[str | dict[str, Any], Field(
                            description='frontmatter: an object such as {"tags": ["database"], "status": "active"}; '
                                        'content: 1-3 keywords, a "quoted phrase" counting as one; xref: an id as '
                                        'this tool returns it, such as DEC-42.')],
                        project: Project = None) -> Annotated[CallToolResult, MemoryResponse]:
    """Locate memory files without loading them: a ranked list of paths, ids, titles and short excerpts.

    frontmatter: notes whose frontmatter matches every field (exact tag > domain > level), top 10.
    content: notes containing 1-3 keywords, with the matching line +-1 as excerpt, top 10.
    xref: notes that reference a note (any `id` this tool returned), related_to both ways and direct mentions.
    The answer stays under about 2,000 tokens. Then read a hit with read_note(file_path).
    Prefer hybrid_search or vault_search for open questions in natural language.
    Example: memory_search(mode="xref", query="DEC-42")
    """
    return answer(shape.memory_answer(ask(link, "memory_search", mode=mode, query=query, project=project)))


TOOLS = (
    memory_search,
)
