"""The door every answer of the route table leaves by (indexer/contract/routes.py), and the one view that serves the
routes that read a request value.

An answer is sent only when it is its route's type, the value the engine built: the check is an isinstance, on in
every run at no cost. What an answer holds is checked where it is read from outside (`Answer.decode`, the clients)
and, for every route, by tests/test_contract.py.
"""
from __future__ import annotations

import functools
import importlib
import logging

from flask import Blueprint, jsonify, request

from indexer.contract.routes import BY_KEY, ROUTES, Route
from indexer.errors import SKMemoryError

from ..args import json_body
from ..current import get_engine

logger = logging.getLogger(__name__)


class BrokenContract(SKMemoryError):
    """An answer that is not its route's type: a fault of the house, answered 500 answer_contract."""

    kind = "answer_contract"


def send(answer, status: int = 200):
    """The answer of the route being served, as JSON: refused (500 answer_contract) when it is not the route's type."""
    route = BY_KEY[f"{request.method} {request.url_rule.rule}"]
    if not isinstance(answer, route.answer):
        method = getattr(route.engine, "__qualname__", route.name)
        logger.error("%s answered %s for %s, not a %s", method, type(answer).__name__, route.key,
                     route.answer.__name__)
        raise BrokenContract(f"{method} answered a {type(answer).__name__} for {route.key}, not a "
                             f"{route.answer.__name__} (indexer/contract/routes.py).")
    response = jsonify(answer)
    response.status_code = status
    return response


# Who owns each answering method, from the engine: the engine itself, its mind maps, its graphs; importing their
# modules marks the methods (the engine imports the other two only when first asked).
OWNERS = {"Engine": lambda engine: engine, "MindMaps": lambda engine: engine.mindmaps,
          "ForgeGraphs": lambda engine: engine.graphs}
ANSWERING = ("indexer.engine", "indexer.mindmap.mindmaps", "indexer.graph.graphs")


@functools.cache
def _mark_answering() -> None:
    """Import the modules whose methods mark the routes they answer (once: the engine imports two of them lazily)."""
    for module in ANSWERING:
        importlib.import_module(module)


def serve(route: Route):
    """The view of a route that reads a request value: read it (the query string of a GET, the JSON body of a POST,
    and the path's values), ask the method that answers, send what it answers through the door."""
    def view(**path_values):
        source = request.args if route.method == "GET" else json_body()
        asked = route.request(source, **path_values)
        engine = get_engine()
        _mark_answering()
        owner, name = route.engine.__qualname__.split(".")
        return send(getattr(OWNERS[owner](engine), name)(asked))  # the owner's own method, as a caller reaches it

    view.__name__ = route.name
    view.__doc__ = f"{route.key}: {route.answer.__doc__}"
    return view


def serve_requests(bp: Blueprint) -> None:
    """Add to the /api blueprint one view per route that reads a request value."""
    for route in ROUTES.values():
        if route.request is not None:
            bp.add_url_rule(route.path.removeprefix("/api"), endpoint=route.name, view_func=serve(route),
                            methods=[route.method])
