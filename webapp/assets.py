"""Where the files shipped beside the code live (static/ and extension/), found through the installed package.

The repository keeps them at its top (the house layout); the wheel puts them inside the webapp package
(setup.py). An editable install from a checkout has no copy inside webapp/, so its recorded source folder
(PEP 610's direct_url.json) is where they are. Nothing here guesses from the location of a source file.
"""
from __future__ import annotations

import json
from functools import cache
from importlib import metadata, resources
from pathlib import Path
from urllib.parse import unquote, urlparse

from indexer.errors import SKMemoryError

DISTRIBUTION = "sk-memory"


def static_folder() -> Path:
    """The folder of the search window's CSS, JS and vendored libraries."""
    return shipped_folder("static")


def extension_folder() -> Path:
    """The folder of the Chrome extension, to load unpacked."""
    return shipped_folder("extension")


@cache
def shipped_folder(name: str) -> Path:
    """Return the installed folder NAME, or raise a sentence that says how to repair the install."""
    inside = Path(str(resources.files("webapp") / name))
    if inside.is_dir():
        return inside
    source = editable_source()
    if source is not None and (source / name).is_dir():
        return source / name
    raise SKMemoryError(f"SK Memory's {name} files are missing from this installation (looked in {inside}); "
                        "reinstall it with `pip install --force-reinstall sk-memory` or `make setup` in a checkout.")


def editable_source() -> Path | None:
    """The checkout an editable install points at, or None for a normal install (or none at all)."""
    # Every copy of the metadata on the path: run from a checkout, its sk_memory.egg-info comes first.
    for dist in metadata.distributions(name=DISTRIBUTION):
        try:
            direct = json.loads(dist.read_text("direct_url.json") or "{}")
        except ValueError:
            continue
        url = urlparse(direct.get("url", ""))
        if direct.get("dir_info", {}).get("editable") and url.scheme == "file":
            return Path(unquote(url.path))
    return None
