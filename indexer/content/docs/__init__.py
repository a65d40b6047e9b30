"""The built-in, read-only "User Docs" project: SK Memory's own user documentation, searchable with F1."""
from __future__ import annotations

import logging
from pathlib import Path

from ...errors import ProjectNotFound

logger = logging.getLogger(__name__)

USER_DOCS_NAME = "User Docs"
PAGES = Path(__file__).resolve().parent / "user"


def ensure_user_docs(home) -> str:
    """Register the shipped markdown as the built-in project 'User Docs' (indexed in place, never written)."""
    try:
        info = home.project(USER_DOCS_NAME)
    except ProjectNotFound:
        info = None
    if info is not None and info.builtin and info.root == PAGES:
        return info.name
    if info is not None:
        # The package moved (a new install or virtualenv), or a user project took the name: start afresh.
        if not info.builtin:
            logger.warning("A user project is called %r; the built-in user docs are not registered.", USER_DOCS_NAME)
            return info.name
        home.remove_project(info.name)
    return home.add_project(PAGES, USER_DOCS_NAME, builtin=True, inside_home=True).name
