"""The search window's Search tab: the query box, the Keyword/Smart/Tag toggles, scope, and tag autocomplete."""
from __future__ import annotations

from dataclasses import dataclass, field

from flask import Blueprint, make_response, render_template, request

from indexer import SearchRequest
from indexer.errors import SKMemoryError
from indexer.contract.limits import MAX_LIMIT

from ..current import get_engine
from ..args import arg, int_arg
from .render import handle_errors, render
from .keystrokes import keystrokes
from .window import remembered_project, window_context

bp = Blueprint("search", __name__)
handle_errors(bp)
RESULT_LIMIT = 30  # documents a search shows first; "Load more" asks for RESULT_LIMIT more, up to MAX_LIMIT


@dataclass
class SearchForm:
    """What the search form asked for, and how the toggles map onto one engine search request."""

    q: str = ""
    keyword: bool = True
    smart: bool = True
    tag: bool = False
    tags: list[str] = field(default_factory=list)
    op: str = "all"
    scope: str = "project"
    project: str = ""

    chosen: bool = True  # False when the form was sent with every toggle off
    correct: bool = True  # a word that matches nothing is corrected (False: search the words as typed)
    limit: int = RESULT_LIMIT

    @classmethod
    def from_args(cls) -> "SearchForm":
        keyword, smart, tag = (request.args.get(k) == "1" for k in ("kw", "smart", "tag"))
        chosen = keyword or smart or tag
        if not chosen and request.args.get("m") != "1":  # a fresh page, or an /search?q= link: the default
            keyword = smart = chosen = True
        tags = []
        for raw in request.args.getlist("tags"):
            tags += [t.strip().lstrip("#") for t in raw.split(",") if t.strip().lstrip("#")]
        return cls(arg("q"), keyword, smart, tag, list(dict.fromkeys(tags)),
                   "any" if arg("op") == "any" else "all", "all" if arg("scope") == "all" else "project",
                   arg("project", max_chars=64) or remembered_project() or "", chosen,
                   arg("correct") not in ("0", "false"),
                   int_arg("limit", RESULT_LIMIT, high=MAX_LIMIT))

    def args(self, **changes) -> dict:
        """The form's query string (for a link to the same search with some fields changed)."""
        args = {"q": self.q, "kw": "1" if self.keyword else None, "smart": "1" if self.smart else None,
                "tag": "1" if self.tag else None, "tags": ",".join(self.tags) or None, "op": self.op,
                "scope": self.scope, "project": self.project or None, "m": "1",
                "limit": self.limit if self.limit != RESULT_LIMIT else None}
        return {k: v for k, v in {**args, **changes}.items() if v is not None}

    @property
    def mode(self) -> str:
        """Keyword+Smart is hybrid, Smart alone semantic, Keyword alone keyword, Tag alone tag search."""
        if self.keyword and self.smart:
            return "hybrid"
        if self.smart:
            return "semantic"
        return "keyword" if self.keyword else "tag"

    def request(self, explain: bool = False) -> SearchRequest:
        """The engine request: the window lists documents (note hits); with explain, each says why it ranked (the
        list asks without: a result's "why" fetches its own explanation when opened, see why())."""
        tags = tuple(self.tags) if self.tag and self.tags else ()
        return SearchRequest("" if self.mode == "tag" else self.q, self.mode, project=self.project or None,
                             scope=self.scope, tags_all=tags if self.op == "all" else (),
                             tags_any=tags if self.op == "any" else (), limit=self.limit,
                             explain=explain and self.explainable, group=True, correct=self.correct)

    @property
    def explainable(self) -> bool:
        """Whether its results can say why they ranked (tags alone list documents, they do not rank them)."""
        return self.mode != "tag" and bool(self.q.strip())

    @property
    def more(self) -> int | None:
        """How many results "Load more" asks for (None when this is already the most one answer holds)."""
        return min(self.limit + RESULT_LIMIT, MAX_LIMIT) if self.limit < MAX_LIMIT else None

    @property
    def ready(self) -> bool:
        """Whether there is anything to search for yet (and a mode to search with)."""
        if not self.chosen:
            return False
        return bool(self.tags if self.mode == "tag" else self.q or (self.tag and self.tags))


def run_search(form: SearchForm) -> dict | None:
    """Ask the engine (the only search implementation) for this form's results."""
    return get_engine().search(form.request()) if form.ready else None


@bp.get("/")
@bp.get("/search")
def search():
    form = SearchForm.from_args()
    if arg("when_ready") == "1" and (state := get_engine().meaning_state).loading:
        if not state.preparing:
            return "", 204  # the window asks again in a second; answered by meaning as soon as the model is there
        # being prepared for this computer (minutes): the notice again, saying how long so far, in its own place
        response = make_response(render_template("search/_loading_notice.html", form=form,
                                                 results={"semantic_reason": state.why_not}))
        response.headers.update({"HX-Retarget": "#loading-notice", "HX-Reswap": "outerHTML"})
        return response
    ticket = keystrokes.arrived()
    if keystrokes.overtaken(ticket):
        return "", 204
    results = run_search(form)
    if keystrokes.overtaken(ticket):  # a newer keystroke's search came while this one ran: not worth rendering
        return "", 204
    return render("search/page.html", "search/_results.html", form=form, results=results,
                  model=_model_of(results), **window_context(form.project, tab="search"))


def _model_of(results: dict | None) -> dict | None:
    """Which model searched the one project of these results by meaning, when it is not the English one: the
    result line says so, with why in its title (a Chinese project: "meaning: multilingual-e5-small")."""
    if not results or results.get("scope") == "all" or not results.get("project"):
        return None
    try:
        model = get_engine().model_of(results["project"])
    except SKMemoryError:
        return None
    return model if model["multilingual"] else None


@bp.get("/search/why")
def why():
    """Why one result of this search ranked where it did: the search again with explain, that document's part.

    The list leaves the explanations out (half its HTML, on every keystroke); a "why" opened asks for its own."""
    form, document_id = SearchForm.from_args(), arg("document_id", max_chars=128)
    answer = get_engine().search(form.request(explain=True)) if form.ready and form.explainable else {}
    found = next((r for r in answer.get("results", []) if r.get("document_id") == document_id and r.get("explain")),
                 None)
    return render_template("search/_why_pop.html", r=found)


@bp.get("/search/tags")
def tag_suggestions():
    """Tag chips to offer while typing: the tags the text names (any part of any segment), with their counts."""
    prefix = arg("tag_q").lstrip("#")
    chosen = set(request.args.getlist("tags"))
    tags = get_engine().tags(arg("project", max_chars=64) or None, prefix, 12)
    suggestions = [t for t in tags["tags"] if t["tag"] not in chosen]
    return render("search/tags.html", "search/_tag_suggestions.html", suggestions=suggestions, prefix=prefix,
                  project=tags["project"])
