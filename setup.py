"""Packaging beyond pyproject.toml: ship the repository's top-level static/ and extension/ inside the webapp package.

The house layout keeps static/ (CSS, JS, vendored htmx) and extension/ (the Chrome extension) at the top of the
repository. In the wheel they become the data packages webapp.static and webapp.extension, so the app finds them
through the import system (webapp/assets.py), installed from a wheel or editable from a checkout alike.
"""
from setuptools import find_namespace_packages, setup

ASSET_FOLDERS = {"webapp.static": "static", "webapp.extension": "extension"}
LEFT_OUT = ["test"]  # extension/test: the extension's JS unit tests stay in the repository


def asset_packages(package: str, folder: str) -> list[str]:
    return [package] + [f"{package}.{sub}" for sub in find_namespace_packages(where=folder, exclude=LEFT_OUT)]


setup(
    packages=find_namespace_packages(include=["indexer*", "webapp*"])
    + [name for package, folder in ASSET_FOLDERS.items() for name in asset_packages(package, folder)],
    package_dir=ASSET_FOLDERS,
)
