"""The MCP tools that list: notes by tag, folder, property or recency (spec 001's listings), the projects, the tags
and the frontmatter keys."""
from __future__ import annotations

from typing import Annotated, Any

from mcp_types import CallToolResult
from pydantic import Field

from . import answers as shape
from .common import Limit, ListingFilters, Match, Project, answer, ask
from .models import ListAnswer, CompactProjects

MAX_TAGS = 500  # the most tags one answer lists (the web API's limit too)


def _listing(link, route: str, **body: Any) -> CallToolResult:
    return answer(shape.vault_answer(ask(link, route, **body)))


def vault_search_by_tag(link, tags: Annotated[list[str], Field(min_length=1, description="Tags without '#'; a parent "
                                                               "tag matches its sub-tags.")],
                              match: Match = "all",
                              filters: ListingFilters = None, limit: Limit = 20,
                              project: Project = None) -> Annotated[CallToolResult, ListAnswer]:
    """List notes with all (or any) of the tags, newest first, optionally narrowed by metadata filters.

    Prefer vault_search when you also have words to search for.
    Example: vault_search_by_tag(tags=["reference"], match="any", filters={"folder": "Reference"})
    """
    return _listing(link, "by_tag", tags=tags, match=match, filters=filters, limit=limit,
                 project=project)


def vault_search_by_folder(link, folder: Annotated[str, Field(description="Folder path inside the project, such as "
                                                              "'Projects' ('' lists everything).")],
                                 filters: ListingFilters = None, limit: Limit = 20,
                                 project: Project = None) -> Annotated[CallToolResult, ListAnswer]:
    """List the notes in a folder and its subfolders, by path; browse a folder before reading its notes.

    Prefer vault_search with filters={"folder": ...} to search the folder's text.
    Example: vault_search_by_folder(folder="Projects", filters={"tags": ["outdoors"]})
    """
    return _listing(link, "by_folder", folder=folder, filters=filters, limit=limit,
                 project=project)


def vault_search_by_property(link, properties: Annotated[dict[str, str | int | float | bool], Field(
                                       min_length=1, description="Frontmatter keys and the values they must have.")],
                                   filters: ListingFilters = None, limit: Limit = 20,
                                   project: Project = None) -> Annotated[CallToolResult, ListAnswer]:
    """List notes whose frontmatter has every given key with the given value, newest first.

    list_properties shows which keys and values exist. Prefer memory_search mode 'frontmatter' for decision
    records ranked by tag, domain and level.
    Example: vault_search_by_property(properties={"status": "active", "type": "project"})
    """
    return _listing(link, "by_property", properties=properties, filters=filters,
                 limit=limit, project=project)


def vault_recent_notes(link, filters: ListingFilters = None, limit: Limit = 20,
                             project: Project = None) -> Annotated[CallToolResult, ListAnswer]:
    """List the most recently modified notes, optionally narrowed by metadata filters.

    Prefer vault_search with a modified date filter when you also have words to search for.
    Example: vault_recent_notes(limit=5, filters={"modified": {"after": "2026-06-30"}})
    """
    return _listing(link, "recent", filters=filters, limit=limit, project=project)


def list_projects(link) -> Annotated[CallToolResult, CompactProjects]:
    """List the projects (indexed folders) with how many notes each holds and whether meaning search covers it.

    Pass a name as `project` to the other tools; the first user project is the default.
    Prefer search_all_projects to search them all at once.
    Example: list_projects()
    """
    health = ask(link, "health")
    return answer(shape.projects_answer(ask(link, "projects")["projects"], health.get("embeddings", "")))


def list_tags(link, prefix: Annotated[str, Field(max_length=200, description="Only tags this text names (in any "
                                                                              "segment); '' for all.")] = "",
                    limit: Annotated[int, Field(ge=1, le=MAX_TAGS, description="Most tags to return.")] = 50,
                    project: Project = None) -> Annotated[CallToolResult, ListAnswer]:
    """List a project's tags with how many notes carry each, most used first (with a prefix, best match first).

    Prefer tag_search or vault_search_by_tag to list the notes with a tag.
    Example: list_tags(prefix="project")
    """
    found = ask(link, "tags", project=project, prefix=prefix, limit=limit)
    return answer({"results": [{"tag": t["tag"], "notes": t["count"]} for t in found["tags"]], "more": found["more"]})


def list_properties(link, prefix: Annotated[str, Field(max_length=200, description="Only keys that start with "
                                                                                   "this.")] = "",
                          limit: Annotated[int, Field(ge=1, le=500, description="Most keys to return.")] = 30,
                          project: Project = None) -> Annotated[CallToolResult, ListAnswer]:
    """List the frontmatter keys notes use, most used first, each with how many notes have it and sample values.

    Use a key and value with vault_search_by_property or vault_search's filters.properties.
    Prefer list_tags for tags.
    Example: list_properties(prefix="sta")
    """
    found = ask(link, "properties", project=project, prefix=prefix, limit=limit)
    return answer({"results": found["properties"], "total": found["total"], "more": found["more"]})


TOOLS = (
    vault_search_by_tag, vault_search_by_folder, vault_search_by_property, vault_recent_notes, list_projects,
    list_tags, list_properties,
)
