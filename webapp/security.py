"""Protection for a server on localhost: a Host allow-list (against DNS rebinding) and an Origin check."""
from __future__ import annotations

from flask import Flask, current_app, jsonify, request

from .args import refuse_odd_characters
from .client import CLIENT_HEADER

SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
# Programs (the CLI, the MCP server, scripts) say who they are with CLIENT_HEADER. A web page cannot send it to
# another origin without a CORS preflight, which the server never grants, so it stands in for a browser's Origin.
# All the extension uses: is the server there, search, and what relates to the page (a POST, since a page's text
# does not fit an address; it reads and changes nothing). Anything else from its origin is refused, since its id
# comes from a public key that anyone can copy into an unpacked extension of their own.
EXTENSION_PATHS = {"/api/health", "/api/search", "/api/projects"}  # /api/projects: the options' choice of project
EXTENSION_READS = {"/api/related"}  # POSTs that only read
# The id of the extension in extension/, fixed by the public "key" in its manifest (tests/test_extension.py
# recomputes it); app.config["EXTENSION_ID"] overrides it.
EXTENSION_ID = "fphfhnaleelndngdmghiokeflbahepef"


def allowed_hosts(app: Flask) -> set[str]:
    port = app.config["SKMEMORY_PORT"]
    return {f"127.0.0.1:{port}", f"localhost:{port}"} | set(app.config.get("EXTRA_ALLOWED_HOSTS", ()))


def allowed_origins(app: Flask) -> set[str]:
    """The app's own origins, plus the Chrome extension's (its id is fixed by the key in its manifest)."""
    origins = {f"http://{host}" for host in allowed_hosts(app)}
    extension_id = app.config.get("EXTENSION_ID", EXTENSION_ID)
    if extension_id:
        origins.add(f"chrome-extension://{extension_id}")
    return origins


def from_extension(app: Flask) -> bool:
    """Whether this request comes from SK Memory's Chrome extension: its own origin, which Chrome sets and a page
    cannot."""
    origin = request.headers.get("Origin", "")
    return origin.startswith("chrome-extension://") and origin in allowed_origins(app)


def _refuse(status: int, error: str, detail: str):
    response = jsonify({"error": error, "detail": detail})
    response.status_code = status
    return response


def check_request():
    """Refuse requests for a foreign Host, and state-changing requests from a foreign Origin."""
    app = current_app
    if request.host not in allowed_hosts(app):
        return _refuse(400, "bad_host", f"This server only answers to http://127.0.0.1:{app.config['SKMEMORY_PORT']}/; "
                                        "open it by that address.")
    origin = request.headers.get("Origin")
    if from_extension(app):
        allowed = (request.path in EXTENSION_PATHS and request.method in SAFE_METHODS or
                   request.path in EXTENSION_READS and request.method in SAFE_METHODS | {"POST"})
        if not allowed:
            return _refuse(403, "bad_origin", "The extension may only check the server and search (GET "
                                              f"{', '.join(sorted(EXTENSION_PATHS))}, POST "
                                              f"{', '.join(sorted(EXTENSION_READS))}); use SK Memory's own window "
                                              "for the rest.")
        return None
    if request.method not in SAFE_METHODS:
        if origin is not None and origin not in allowed_origins(app):
            return _refuse(403, "bad_origin", "Changes are only accepted from SK Memory's own pages.")
        fetch_site = request.headers.get("Sec-Fetch-Site")
        if origin is None and fetch_site not in (None, "same-origin", "none"):
            return _refuse(403, "bad_origin", "Changes are only accepted from SK Memory's own pages.")
        if origin is None and fetch_site is None and CLIENT_HEADER not in request.headers:
            # Every browser sends Origin or Sec-Fetch-Site with a change; a program names itself instead.
            return _refuse(403, "bad_origin", f"A change needs an Origin header (from a browser) or {CLIENT_HEADER} "
                                              "(from a program, as the skmemory command sends).")
    return None


def add_cors(response):
    """Let exactly the extension's origin read API responses; never a wildcard."""
    origin = request.headers.get("Origin")
    if (origin and origin.startswith("chrome-extension://") and origin in allowed_origins(current_app)
            and request.path in EXTENSION_PATHS | EXTENSION_READS):
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Access-Control-Allow-Headers"] = "Content-Type"
        response.headers["Access-Control-Allow-Methods"] = "GET, POST" if request.path in EXTENSION_READS else "GET"
        response.vary.add("Origin")
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "no-referrer")
    return response


def init_app(app: Flask) -> None:
    app.before_request(check_request)
    app.before_request(refuse_odd_characters)
    app.after_request(add_cors)
