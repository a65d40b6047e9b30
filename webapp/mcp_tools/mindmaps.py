"""The MCP tools of mind maps: search a map's nodes, read one node with its neighbourhood."""
from __future__ import annotations

from typing import Annotated

from mcp_types import CallToolResult
from pydantic import Field

from . import answers as shape
from .common import Limit, MapPath, Project, QueryText, answer, ask
from .models import MindMapContextResponse, MindMapSearchResponse


def mindmap_search_nodes(link, query: QueryText, map: MapPath = None, project: Project = None,
                               limit: Limit = 10) -> Annotated[CallToolResult, MindMapSearchResponse]:
    """Search the nodes of a Mind Map by meaning and exact words: one row per node, with its node_id and its live
    title and root-to-node path.

    index_stale=true means the map changed after it was indexed: results may miss new text. Call
    mindmap_get_context(node_id) before editing a node. Prefer hybrid_search for notes.
    Example: mindmap_search_nodes(query="when does the drip line run", map="Maps/Garden.mmdata")
    """
    return answer(shape.mindmap_answer(ask(link, "search_nodes", q=query, limit=limit, project=project, path=map)))


def mindmap_get_context(link, node_id: Annotated[str, Field(min_length=1, max_length=200, description="A node_id "
                                                            "from mindmap_search_nodes.")],
                              map: MapPath = None, project: Project = None,
                              ) -> Annotated[CallToolResult, MindMapContextResponse]:
    """Read one node of a Mind Map as it is now: title, body, tags, path, attachments (references), with its
    ancestors, children, siblings and relationships both ways; private notes are never returned.

    The map is chosen as mindmap_search_nodes chooses it. Prefer mindmap_search_nodes to find a node first.
    Example: mindmap_get_context(node_id="watering", map="Maps/Garden.mmdata")
    """
    return answer(shape.mindmap_answer(ask(link, "node_context", node_id=node_id, project=project, path=map)))


TOOLS = (
    mindmap_search_nodes, mindmap_get_context,
)
