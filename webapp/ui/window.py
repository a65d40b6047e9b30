"""What every tab of the search window shows around its content: the projects and the chosen one."""
from __future__ import annotations

from dataclasses import dataclass, field

from flask import request

from indexer.errors import ProjectNotFound

from ..current import get_engine
from .render import wants_partial

TREE_LIMIT = 100_000
REMEMBERED = "skmemory_project"  # the cookie that holds the project last chosen in the window
REMEMBER_FOR = 365 * 24 * 3600


@dataclass
class Folder:
    """A folder of the tree with how many documents lie under it."""

    name: str
    path: str
    count: int = 0
    children: dict[str, "Folder"] = field(default_factory=dict)

    @property
    def folders(self) -> list["Folder"]:
        return sorted(self.children.values(), key=lambda f: f.name.lower())


def remembered_project() -> str | None:
    """The project last chosen in the window (its cookie), while it still exists."""
    name = request.cookies.get(REMEMBERED, "")
    return next((n for n in get_engine().project_names() if n == name), None) if name else None


def remember_project(response):
    """After a page of the window that names a project: remember it, so that a fresh `/` opens on it again."""
    name = request.args.get("project", "").strip()
    if request.path.startswith(("/api/", "/static/")):  # the window's own pages only, never a program's asking
        return response
    if name and response.status_code == 200 and name != request.cookies.get(REMEMBERED) and \
            name in get_engine().project_names():
        response.set_cookie(REMEMBERED, name, max_age=REMEMBER_FOR, samesite="Strict", httponly=True)
    return response


def current_project(requested: str = "") -> str | None:
    """The project named in the request (checked), else the one last chosen in the window, else the engine's default;
    None when there are none."""
    engine = get_engine()
    if requested:  # asked on every keystroke's search: names only, no counting
        for name in engine.project_names():
            if name.lower() == requested.lower():
                return name
        raise ProjectNotFound(f"No project named '{requested}'; choose one from the list.")
    if remembered := remembered_project():
        return remembered
    try:
        return engine.default_project()
    except ProjectNotFound:
        return None


def window_context(requested: str = "", tab: str = "search") -> dict:
    """The projects, the current one, and for the Files tab its folder tree and tags."""
    engine = get_engine()
    project = current_project(requested)
    context = {"projects": [], "project": project, "tab": tab, "tree": None, "tags": []}
    if wants_partial():  # a partial shows none of it
        return context
    context["projects"] = engine.projects()
    if project and tab == "files":
        context["tree"] = folder_tree(engine.documents(project, limit=TREE_LIMIT)["documents"])
        context["tags"] = engine.tags(project, "", 200)["tags"]
    return context


def folder_tree(documents: list[dict]) -> Folder:
    """Fold document paths into folders, each counting every document below it."""
    root = Folder("", "")
    for doc in documents:
        root.count += 1
        node = root
        parts = doc["path"].split("/")[:-1]
        for depth, part in enumerate(parts):
            node = node.children.setdefault(part, Folder(part, "/".join(parts[: depth + 1])))
            node.count += 1
    return root
