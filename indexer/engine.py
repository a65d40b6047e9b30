"""The engine's public API, the one object every surface calls: projects, every search mode, documents, status,
and the `mindmaps` and `graphs` of the data home.

The Engine owns the write side (a project's `Project`, its own or the background indexer's) and hands search only
the read side (`ProjectIndex`); the modules under search/, graph/ and mindmap/ do the work.
"""
from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from pathlib import Path

from .contract.answers import (ContextAnswer, DocumentsAnswer, HealthAnswer, LinksAnswer, ListingAnswer,
                               MemoryAnswer, NoteInfoAnswer, NotePageAnswer, ProjectsAnswer, PropertiesAnswer,
                               RelatedAnswer, SearchAnswer, SuggestionsAnswer, TagsAnswer, VaultAnswer, counted)
from .contract.routes import answers
from .errors import IndexDamaged, InvalidProjectRoot, InvalidQuery, ProjectNotFound, SKMemoryError
from .home import Home
from .registry import ProjectInfo
from .model.embeddings import FOREGROUND
from .contract.limits import check_scope
from .search import browse, chunk_reads, documents, note_reads, notes, pipeline
from .model.scale import IDENTITY, ScaledVectors
from .search.across import AcrossVectors
from .search.cache import VectorCache
from .store.across import GENERATION as ACROSS_GENERATION
from .search.context import build_context
from .search.hnsw import HnswVectors
from .search.switching import PreviousVectors, previous_index
from .search.index import ProjectIndex
from .search.memory import memory_search
from .contract.request import SearchRequest
from .search.related import related as related_to_text
from .search.slots import SearchSlots
from .contract.sibling_requests import (ContextRequest, ListingRequest, MemoryRequest, RelatedRequest,
                                      RelatedTextRequest)
from .search.rerank import Reranker
from .search.note_text import own_text
from .search.suggestions import link_suggestions
from .search.tags import tag_counts
from .search.vault import vault_search
from .store.project import Project
from .store.reader import ProjectReader

SYNC_WAIT = 60.0  # seconds a mind-map save waits for the running indexer to index the map it wrote
EMBED_WAIT = 30.0  # and then for the map's new chunks to be embedded, so that a search right after finds them

logger = logging.getLogger(__name__)


class Engine:
    """Searches and describes the projects of a data home, owned by a running indexer or opened here."""

    def __init__(self, home: Home, background=None, read_only: bool = False):
        self.home = home
        self.background = background  # a BackgroundIndexer when serving; None for a one-off command
        # A one-off command that only searches: projects are read as indexed, beside any writer, never locked.
        self.read_only = read_only
        self._own: dict[str, Project | ProjectReader] = {}
        self._indexes: dict[str, tuple[Project | ProjectReader, ProjectIndex]] = {}
        self._lock = threading.RLock()  # re-entered when opening a project finds it damaged (_damaged)
        self._reranker: Reranker | None = None
        self._mindmaps = None
        self._graphs = None
        self._closed = False
        self._slots = SearchSlots(home.settings.search_slots or None)  # how many searches run at once
        # Texts asked about (a web page, a note, an agent's text) take one slot among them all, one after another:
        # six long pages at once never hold every slot, and a search meanwhile finds one free.
        self._related_turn = threading.Lock()

    def close(self) -> None:
        self._closed = True
        for project in self._own.values():
            project.close()
        self._own.clear()
        self._indexes.clear()

    # --- projects -------------------------------------------------------------------------------------------

    def _project(self, info: ProjectInfo) -> Project | ProjectReader:
        """The project itself (the indexer's writer, or a read-only view), for a project already resolved."""
        if self.background is not None:
            project = self.background.projects.get(info.name)
            if project is None and info.name not in self.background.open_errors:
                self.background.follow_registry()  # registered (or renamed) by another process since start
                project = self.background.projects.get(info.name)
            if project is None and self.background.held_elsewhere(info.name):
                # `skmemory index` holds it: searching is reading, so it is read as indexed so far, beside it
                return self._reader(info)
            if project is None:
                reason = self.background.open_errors.get(info.name, "it is not open yet")
                raise ProjectNotFound(f"Project '{info.name}' cannot be searched: {reason}")
            reader = self._own.pop(info.name, None)
            if reader is not None:  # read while another process held it; the server has it now
                reader.close()
            return project
        return self._reader(info)

    def _reader(self, info) -> ProjectReader:
        """A project opened read-only: searching reads the index as it was written, beside any writer."""
        if info.name not in self._own:
            try:
                self._own[info.name] = ProjectReader(info, self.home.settings, self.home.embedder_for,
                                                       self.home.counter)
            except IndexDamaged as exc:
                raise IndexDamaged(self._damaged(info.name, str(exc))) from None
        return self._own[info.name]

    def _writer(self, name: str, sync: bool = True) -> Project:
        """This engine's own writer of a project, brought up to date with its folder when first opened (an engine
        that owns the data home: one-off commands, tests, benchmarks)."""
        info = self.home.project(name)
        own = self._own.get(info.name)
        if isinstance(own, Project):
            return own
        if self.read_only:
            raise SKMemoryError(f"Project '{info.name}' is open for reading only here; start `skmemory serve` to "
                                "change it.")
        if own is not None:
            own.close()
        project = self.home.open_project(info.name, role="skmemory")
        self._own[info.name] = project
        if sync:
            try:
                project.sync()
            except IndexDamaged as exc:  # the file opened, but SQLite's check found it damaged: rebuilt here
                project = self.home.reopen_damaged(project, str(exc), role="skmemory")
                self._own[info.name] = project
                project.sync()
        return project

    def index(self, name: str | None = None) -> ProjectIndex:
        """The read side of a project (the default project when name is None)."""
        return self._index_of(self._resolve(name))

    def _resolve(self, name: str | None) -> ProjectInfo:
        """The project a request names, or the default one: resolved once per request, and handed down."""
        return self.home.project(name) if name else self._default_info()

    def _index_of(self, info: ProjectInfo) -> ProjectIndex:
        if self.background is not None and (sentence := self.background.rebuilding(info.name)):
            raise IndexDamaged(sentence)  # 503: never the few notes a refilling index holds so far
        with self._lock:
            project = self._project(info)
            known = self._indexes.get(info.name)
            if known is None or known[0] is not project:
                known = (project, self._read_side(project))
                self._indexes[info.name] = known
            return known[1]

    def _read_side(self, project: Project | ProjectReader) -> ProjectIndex:
        """What search may touch of a project: its database file, folder, model, counter and a vector cache that
        the writer keeps current (or, with SKMEMORY_VECTOR_SEARCH=hnsw, Chroma's approximate index)."""
        if isinstance(project, Project) and project.settings.vector_search == "hnsw":
            cache = HnswVectors(project.query_vectors, project.store.path)
        elif isinstance(project, Project):  # the writer keeps the cache's files; a read-only view holds it in memory
            cache = VectorCache(project.load_vectors, project.vector_folder, project.vector_generation)
            project.closing.append(cache.close)
        else:
            cache = VectorCache(project.load_vectors)
        project.vector_listeners.append(cache.apply)
        scaled = ScaledVectors(cache, lambda: getattr(project.embedder, "scale", IDENTITY))
        # The vectors a question in another language searches (search/across.py), loaded on the first such question.
        across = AcrossVectors(project.load_across, lambda: project.store.meta(ACROSS_GENERATION))
        if isinstance(project, Project):
            project.across.listeners.append(across.apply)
            project.vector_listeners.append(lambda _ids, _vectors, removed: across.apply([], None, [], removed))
        # The vectors meaning search reads while the project moves to another model (search/switching.py).
        previous = PreviousVectors(self.home.embedder_for, lambda: project.switch_meta)
        project.vector_listeners.append(lambda _ids, _vectors, removed: previous.removed(removed))
        return ProjectIndex(project.name, project.root, project.store.path, lambda: project.embedder, project.counter,
                            scaled, on_damage=self._damaged, across=across,
                            multilingual=lambda: self.home.embedder_for("multilingual"),
                            across_progress=project.across_progress, previous=previous)

    def _damaged(self, name: str, reason: str) -> str:
        """A search found a project's index damaged: have it rebuilt, and say so in the sentence the search raises."""
        if self.background is not None:
            self.background.report_damage(name, reason)
            return (f"The index of project '{name}' is damaged ({reason}); SK Memory is rebuilding it from the notes, "
                    "so search it again in a minute. Other projects are searched as usual.")
        info = self.home.project(name)
        self.home.mark_damaged(info, reason)
        with self._lock:  # read again once rebuilt
            self._indexes.pop(name, None)
            own = self._own.pop(name, None)
        if own is not None:
            own.close()
        return (f"The index of project '{name}' is damaged ({reason}); `skmemory index {name}` (or the next "
                "`skmemory serve`) sets it aside and rebuilds it from the notes.")

    def _scope_indexes(self, project: str | None, scope: str) -> list[ProjectIndex]:
        """The read side of one project, or with scope='all' of every project."""
        if check_scope(scope) == "all":  # a project being rebuilt sits out (the answer names it)
            return [self._index_of(info) for info in self.home.projects() if not self._rebuilding(info.name)]
        return [self.index(project)]

    def _rebuilding(self, name: str) -> bool:
        return self.background is not None and self.background.rebuilding(name) is not None

    def writer(self, name: str) -> Project:
        """The project's writer: the background indexer's, or this engine's own (opened and synced with its folder
        on first use); for programs that own the data home (one-off commands, tests, benchmarks)."""
        with self._lock:
            return self._project(self.home.project(name)) if self.background is not None else self._writer(name)

    def default_project(self) -> str:
        """The project searched when none is named: the first user project, else the first at all."""
        return self._default_info().name

    def _default_info(self) -> ProjectInfo:
        infos = self.home.projects()
        if not infos:
            raise ProjectNotFound("No projects yet; add a folder with `skmemory add PATH`.")
        # The user's own notes first: an agent asking about "my vault" was answered from the demo (first by name)
        return next((i for i in infos if self.home.is_users(i)), next((i for i in infos if not i.builtin), infos[0]))

    def project_names(self) -> list[str]:
        """Every project's name, from the registry alone (projects() also counts each one's documents)."""
        return [info.name for info in self.home.projects()]

    @answers("projects")
    def project_list(self) -> ProjectsAnswer:
        """Every project with its counts, as GET /api/projects sends them."""
        return ProjectsAnswer(projects=self.projects())

    def projects(self) -> list[dict]:
        """Every project with its counts (read without opening it when this engine does not own it)."""
        out = []
        for info in self.home.projects():
            entry = info.to_dict()
            try:
                if self.background is None and info.name not in self._own:
                    status = self.home.status(info.name)
                    counts = {k: v for k, v in status.items() if k not in ("project", "root", "errors", "owner")}
                else:
                    with self._lock:
                        counts = self._project(info).store.counts()
            except Exception as exc:  # a project that cannot open is listed with the reason
                entry["error"] = str(exc)
            else:
                entry.update(counts)
            out.append(entry)
        return out

    def model_of(self, name: str | None = None) -> dict:
        """Which model searches a project by meaning, and why (what its notes are written in): the window and the
        status page say it."""
        index = self.index(name)
        embedder = index.embedder
        if (previous := previous_index(index)) is not None:  # moving to another model: the old one reads meanwhile
            switch = previous.switch
            return {"project": index.name, "model": previous.embedder.name, "multilingual": True,
                    "why": f"the notes are being embedded again by {embedder.name} ({switch['done']:,} of "
                           f"{switch['total']:,} passages so far), and until then the model that embedded them reads "
                           "the questions"}
        kept = chunk_reads.kept_languages(index)
        return {"project": index.name, "model": embedder.name, "why": kept.get("why"),
                "multilingual": getattr(embedder, "model", "english") != "english"}

    @property
    def meaning_loading(self) -> bool:
        """Whether the model is still loading (a search now answers by keyword, and says so); never blocks."""
        return self.meaning_state.loading

    @property
    def meaning_state(self):
        """The state of the first model still loading (with what is being prepared for this computer, if anything),
        else the data home's; never blocks."""
        used = [p.embedder for p in list(self.background.projects.values())] if self.background is not None else []
        states = [e.now for e in used or [self.home.embedder]]
        return next((s for s in states if s.preparing), next((s for s in states if s.loading), states[0]))

    def warm(self) -> None:
        """Load every project's vector cache and Cluster View graph now (server start) instead of on first use, and
        the models the user's projects are searched with. A built-in project's model loads when it is first searched
        if none of the user's projects is searched with it: the User Docs kept all-MiniLM-L6-v2 (about 180 MB) in
        the memory of a server whose only project is Chinese."""
        infos = self.home.projects()
        mine = [info for info in infos if self.home.is_users(info)]
        models = set()
        for info in mine:
            try:
                models.add(self.index(info.name).embedder)
            except SKMemoryError:
                pass
        for info in infos:
            if self._closed:  # the server stopped while the model loaded
                return
            try:
                index = self.index(info.name)
                wanted = not mine or index.embedder in models
                if (not wanted or index.embedder.load()) and not self._closed:
                    index.cache.ensure_loaded()
                if not self._closed and not self._embedding(info.name):
                    # Cluster View's graph too (seconds at thousands of notes), kept until its notes or vectors
                    # change (refresh_graphs builds it again then): the first open after a start draws at once. A
                    # project still embedding builds it when asked, since every batch would change it.
                    self.graphs.project_graph(index)
            except SKMemoryError as exc:  # an expected state (held by `skmemory index`, not indexed yet): a line
                if not self._closed:
                    logger.info("Not warming %s now: %s", info.name, exc)
            except Exception:
                if not self._closed:
                    logger.exception("Warming %s failed", info.name)

    def _embedding(self, name: str) -> bool:
        """Whether chunks of the project still wait for vectors (its graph would change with every batch)."""
        return bool(self._project(self.home.project(name)).store.counts()["pending"])

    def refresh_graphs(self) -> None:
        """Build again every Cluster View graph gone stale since it was built, for each project not embedding."""
        for info in self.home.projects():
            if self._closed:
                return
            try:
                if not self._embedding(info.name) and not self._rebuilding(info.name):
                    self.graphs.refresh(self.index(info.name))
            except SKMemoryError as exc:  # an expected state (a project held elsewhere, or found damaged): a line
                if not self._closed:
                    logger.info("Not refreshing %s's graph now: %s", info.name, exc)
            except Exception:
                if not self._closed:
                    logger.exception("Refreshing %s's graph failed", info.name)

    # --- search ---------------------------------------------------------------------------------------------

    def search(self, request: SearchRequest) -> SearchAnswer | VaultAnswer:
        """Run one search (`engine.search(SearchRequest("tmux", mode="keyword"))`): spec 001's vault_search for
        mode vault, else spec 000's (`search_hits`)."""
        return self.vault_search(request) if request.mode == "vault" else self.search_hits(request)

    @answers("search")
    def search_hits(self, request: SearchRequest) -> SearchAnswer:
        """Spec 000's modes (hybrid, semantic, recency, keyword, tag): chunk hits, or note hits with group=True.
        scope='all' searches every project; explain=True adds to each hit why it ranked; explain_document=ID (one
        project) says where that document ranked in each leg, or which filter, threshold or limit kept it out."""
        if request.mode == "vault":
            raise InvalidQuery("search_hits answers spec 000's modes; vault_search answers mode 'vault'.")
        with FOREGROUND, self._slots:  # bulk embedding steps aside while a search runs; a few run at once
            indexes = self._scope_indexes(request.project, request.scope)
            try:
                result = SearchAnswer(**pipeline.search(indexes, request))
            except IndexDamaged:
                # Found damaged by this very search: with scope 'all' the others answer, and the answer names the
                # one being rebuilt (it answered 503 for every project once, at the moment the damage was found).
                if request.scope != "all" or not any(self._rebuilding(i.name) for i in indexes):
                    raise
                indexes = self._scope_indexes(request.project, request.scope)
                result = SearchAnswer(**pipeline.search(indexes, request))
        return self._named(request, indexes, result)

    @answers("vault_search")
    def vault_search(self, request: SearchRequest) -> VaultAnswer:
        """Spec 001's vault_search: notes by their text and metadata filters, one project."""
        if request.mode != "vault":
            request = request.but(mode="vault")
        with FOREGROUND, self._slots:
            indexes = self._scope_indexes(request.project, request.scope)
            result = VaultAnswer(**vault_search(indexes[0], request, self.reranker))
        return self._named(request, indexes, result)

    def _named(self, request: SearchRequest, indexes: list[ProjectIndex], result):
        """A search's answer with the projects it did not search named: those rebuilding, or the others beside the
        default one."""
        if request.scope == "all" and (rebuilt := [i.name for i in self.home.projects() if self._rebuilding(i.name)]):
            result["rebuilding_projects"] = rebuilt  # damaged, and refilling from the notes: searched again soon
        if request.project is None and request.scope != "all":  # the default project, chosen for the caller
            others = [i.name for i in self.home.projects() if not i.builtin and i.name != indexes[0].name]
            if others:  # say which was searched, and which were not: an agent can name one, or search them all
                result.setdefault("project", indexes[0].name)
                result["other_projects"] = others
        return result

    @answers("memory_search")
    def memory_search(self, request: MemoryRequest) -> MemoryAnswer:
        """Locate documents by frontmatter fields, 1-3 keywords or cross-reference (spec 002)."""
        return MemoryAnswer(**memory_search(self.index(request.project), request))

    @answers("context")
    def context(self, request: ContextRequest) -> ContextAnswer:
        """Pack the best chunks for a query into a token budget, each with its provenance."""
        with self._slots:
            indexes = self._scope_indexes(request.project, request.scope) or [self.index(None)]
            return ContextAnswer(**build_context(indexes, request))

    @property
    def reranker(self) -> Reranker:
        """The cross-encoder of SKMEMORY_RERANKER, shared by every project and loaded on its first use."""
        with self._lock:
            if self._reranker is None:
                settings = self.home.settings
                self._reranker = Reranker(settings.reranker_path, settings.device)
            return self._reranker

    @answers("by_tag", "by_folder", "by_property", "recent")
    def list_notes(self, request: ListingRequest) -> ListingAnswer:
        """List notes by metadata alone (spec 001's listings): by tag, by folder, by property or most recent."""
        with self._slots:
            return ListingAnswer(**browse.list_notes(self.index(request.project), request))

    @answers("tags")
    def tags(self, project: str | None = None, prefix: str = "", limit: int = 50) -> TagsAnswer:
        """Tags with their document counts; with prefix, those it names anywhere in a segment, best first."""
        index = self.index(project)
        tags = tag_counts(index, prefix, limit + 1)  # one past the limit: whether it cut the list
        return TagsAnswer(project=index.name, **counted(tags[:limit], len(tags) > limit), tags=tags[:limit])

    # --- documents ------------------------------------------------------------------------------------------

    @answers("documents")
    def documents(self, project: str | None = None, folder: str = "", tag: str | None = None,
                  limit: int = 200, offset: int = 0, name: str = "") -> DocumentsAnswer:
        """List documents, optionally under a folder, with a tag (and its sub-tags), or named (part of path or
        title)."""
        return DocumentsAnswer(**documents.list_documents(self.index(project), folder, tag, limit, offset, name))

    def document(self, document_id: str, project: str | None = None) -> dict:
        """A document's metadata, outline, links both ways and its chunks' text."""
        return documents.get_document(self.index(project), document_id)

    def document_lines(self, document_id: str, start: int, end: int, project: str | None = None) -> dict:
        """A document with `content` exactly lines start..end of its file (1-based); only a regular file inside the
        project is read."""
        return documents.document_lines(self.index(project), document_id, start, end, self.home.settings.max_file_bytes)

    # --- notes as an agent reads them (search/notes.py): every answer capped, and says when it cut -----------------

    @answers("note_info")
    def note_info(self, note: str, project: str | None = None) -> NoteInfoAnswer:
        """A note (by id, path or title): metadata, frontmatter, outline and its link counts; no text."""
        return NoteInfoAnswer(**notes.note_info(self.index(project), note))

    @answers("read_note")
    def read_note(self, note: str, project: str | None = None, **page) -> NotePageAnswer:
        """A page of a note's text: whole, one section or a line range (section, start_line, end_line, offset,
        max_chars); only a regular file inside the project is read."""
        return NotePageAnswer(**notes.read_note(self.index(project), note, self.home.settings.max_file_bytes, **page))

    @answers("links")
    def note_links(self, note: str, project: str | None = None, direction: str = "both",
                   limit: int = 50) -> LinksAnswer:
        """A note's outgoing links and backlinks, each list bounded by limit."""
        return LinksAnswer(**notes.note_links(self.index(project), note, direction, limit))

    @answers("suggestions")
    def link_suggestions(self, note: str, project: str | None = None, limit: int = 8) -> SuggestionsAnswer:
        """The links a note could have: other notes it names without linking them (with the line), and notes close
        in meaning that no link joins to it; each with the [[wikilink]] and [text](path) to copy."""
        return SuggestionsAnswer(**link_suggestions(self.index(project), note, self.home.settings.max_file_bytes,
                                                    limit))

    @answers("properties")
    def properties(self, project: str | None = None, prefix: str = "", limit: int = 50) -> PropertiesAnswer:
        """The frontmatter keys in use, most used first, with sample values."""
        return PropertiesAnswer(**notes.properties(self.index(project), prefix, limit))

    def resolve_link(self, target: str, from_path: str = "", project: str | None = None) -> str | None:
        """The document_id a link target ([[wikilink]] or path) names, seen from the note at from_path; None when it
        names no indexed document."""
        return documents.resolve_link(self.index(project), target, from_path)

    @answers("related")
    def related(self, request: RelatedRequest) -> SearchAnswer:
        """Documents like one document: hybrid search on its own content."""
        return SearchAnswer(**documents.related(self.index(request.project), request.document_id, request.limit))

    @answers("related_text")
    def related_text(self, request: RelatedTextRequest) -> RelatedAnswer:
        """The notes related to a text (a web page, a note, an agent's text), by the meaning of its passages and its
        rarest words, notes that saved its address first."""
        indexes = self._scope_indexes(request.project, request.scope)
        exclude = self._excluded(indexes, request.exclude)
        title, text = request.title, request.text
        if request.note:  # a note's own text, itself left out
            index = indexes[0] if request.scope != "all" else self.index(request.project)  # resolved once
            row = notes.resolve_note(index, request.note)
            exclude.add(row["document_id"])
            title = title or row["title"]
            text = f"{text}\n\n{own_text(index, row, self.home.settings.max_file_bytes)}".strip()
        with self._related_turn, self._slots:  # one row past the limit, to say whether the limit cut the list
            answer = related_to_text(indexes, title, text, request.url, request.limit + 1, exclude)
        rows = answer["results"]
        return RelatedAnswer(**{**answer, **counted(rows[:request.limit], len(rows) > request.limit),
                                "limit": request.limit, "results": rows[:request.limit],
                                "truncated": request.truncated or answer["truncated"]})

    @staticmethod
    def _excluded(indexes: list, names: tuple[str, ...]) -> set[str]:
        """The document ids of the notes named to leave out (by id or by path) in these projects."""
        if not names:
            return set()
        wanted = set(names)
        return wanted | {doc for index in indexes for doc, rel_path in note_reads.paths(index) if rel_path in wanted}

    # --- status ---------------------------------------------------------------------------------------------

    @answers("health")
    def health(self, port: int) -> HealthAnswer:
        """That the server answers, for which data folder and port, and the model's state (GET /api/health)."""
        return HealthAnswer(status="ok", app="sk-memory", home=str(self.home.settings.home), port=port,
                            embeddings=self.home.embedder.now.word, pid=os.getpid())

    def status(self) -> dict:
        """Indexer status: per project counts, pending embeddings with rate and ETA, errors."""
        if self.background is not None:
            return self.background.status()
        return {"projects": [self.home.status(i.name) for i in self.home.projects()],
                "embeddings": self.home.embedder.now.word, "vector_search": self.home.settings.vector_search,
                "embedding_paused": self.home.embedding_paused}

    def set_embedding_paused(self, paused: bool) -> dict:
        """Pause embedding after the passages in hand, or go on; it stays so across restarts until changed. Without a
        server running, the next `skmemory serve` starts paused (or not)."""
        if self.background is not None:
            (self.background.pause_embedding if paused else self.background.resume_embedding)()
        else:
            self.home.mark_embedding_paused(paused)
        return {"embedding_paused": paused, "server": self.background is not None}

    @property
    def embedding_paused(self) -> bool:
        return self.background.embedding_paused if self.background is not None else self.home.embedding_paused

    # --- managing projects ----------------------------------------------------------------------------------

    def _user_project(self, name: str):
        info = self.home.project(name)
        if info.builtin:
            raise SKMemoryError(f"'{info.name}' is built into SK Memory and cannot be renamed or removed.")
        return info

    def _forget(self, name: str) -> None:
        """Drop every open handle on a project (ours and the indexer's), releasing its lock."""
        self._indexes.pop(name, None)
        own = self._own.pop(name, None)
        if own is not None:
            own.close()
        if self.background is not None:
            self.background.remove_project(name)

    def add_project(self, path: str, name: str | None = None) -> dict:
        """Register a folder (a full path) as a project and, when serving, start indexing and watching it."""
        if not Path(path).expanduser().is_absolute():
            raise InvalidProjectRoot(f"'{path}' is a relative path; give the folder's full path, such as "
                                     f"{Path.home() / 'Documents' / 'notes'} or ~/Documents/notes.")
        info = self.home.add_project(path, name or None)
        if self.background is not None:
            return {**info.to_dict(), "sync_request": self.background.add_project(info.name)}
        return info.to_dict()

    def rename_project(self, old: str, new: str) -> dict:
        """Give a user project a new name; its index is kept and reopened under the new name."""
        info = self._user_project(old)
        with self._lock:
            self._forget(info.name)
            try:
                renamed = self.home.rename_project(info.name, new)
            except Exception:
                if self.background is not None:
                    self.background.add_project(info.name)
                raise
            if self.background is not None:
                self.background.add_project(renamed.name)
        return renamed.to_dict()

    def remove_project(self, name: str) -> dict:
        """Forget a user project and delete its index (after closing it here); the files stay."""
        info = self._user_project(name)
        with self._lock:
            self._forget(info.name)
            return self.home.remove_project(info.name).to_dict()

    def reindex(self, name: str) -> dict:
        """Re-read a project's folder: queued on the running indexer, or done now without one."""
        info = self.home.project(name)
        if self.background is not None:
            if info.name not in self.background.projects:
                self.background.follow_registry(retry=True)
            if info.name not in self.background.projects:
                reason = self.background.open_errors.get(info.name, "it is not open")
                raise ProjectNotFound(f"Project '{info.name}' cannot be re-indexed: {reason}")
            return {"project": info.name, "queued": True, "sync_request": self.background.request_sync(info.name, None)}
        with self._lock:
            project = self._writer(info.name, sync=False)
        return {"project": info.name, "queued": False, **project.sync().to_dict()}

    def embed_pending(self, name: str | None = None) -> int:
        """Embed a project's waiting chunks now, in this process (a one-off command; the server does this itself)."""
        if self.background is not None:
            raise SKMemoryError("The running indexer embeds in the background; follow it with `skmemory status`.")
        return self.writer(name or self.default_project()).embed_pending()

    # --- mind maps (indexer/mindmap) and Cluster View's Forge Graph (indexer/graph) -------------------------

    @property
    def mindmaps(self):
        """The mind maps of this data home: list, load, open, save, the active map, node search and node context."""
        with self._lock:
            if self._mindmaps is None:
                from .mindmap.mindmaps import MindMaps

                self._mindmaps = MindMaps(self.index, self._write_map, self.home.settings.home)
            return self._mindmaps

    @property
    def graphs(self):
        """Every project's Forge Graph (`graph`, `search`), built on first request and kept until its documents or
        vectors change."""
        with self._lock:
            if self._graphs is None:
                from .graph import ForgeGraphs

                self._graphs = ForgeGraphs(self._scope_indexes, self.search, self._save_positions)
            return self._graphs

    def _save_positions(self, name: str, changed: list, gone: list[str], afresh: bool) -> None:
        if self.read_only:  # a read-only view keeps no positions
            return
        self.writer(name).save_graph_positions(changed, gone, afresh)

    def _write_map(self, index: ProjectIndex, rel: str, data: bytes) -> None:
        """Write a mind map file and index it before returning: here when this engine owns the project, else
        through the running indexer (waiting, within limits, until the map and its new chunks are searchable)."""
        from .mindmap.maps import map_file, write_atomically

        project = self.writer(index.name)
        if project.rules.ignores_file(rel):
            raise InvalidQuery(f"'{rel}' is in a hidden or ignored folder (.skmemoryignore), so it would never be "
                               "indexed; save it somewhere else in the project.")
        write_atomically(map_file(index.root, rel), data)
        if self.background is None:
            project.sync([rel])
            if index.embedder.load():
                project.embed_pending()
            return
        self.background.request_sync(index.name, {rel})
        digest = hashlib.sha256(data).hexdigest()
        sync_deadline, embed_deadline = time.monotonic() + SYNC_WAIT, None
        while True:
            now = time.monotonic()
            if note_reads.file_error_at(index, rel):
                return
            state = chunk_reads.map_index_state(index, rel)
            if state is not None and state[0] == digest:
                if not state[1] or not index.embedder.now.ready:
                    return
                embed_deadline = embed_deadline or now + EMBED_WAIT
                if now > embed_deadline:
                    return  # the answer's pending_embeddings says how many are still waiting
            elif now > sync_deadline:
                return  # still queued behind other work: the answer's index_state says so
            time.sleep(0.05)
