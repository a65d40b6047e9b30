"""How many searches run at once: a few, in the order they came; the rest wait their turn.

Python runs one thread's bytecode at a time. Fifty searches started together each got a fiftieth of the interpreter,
so each took as long as all fifty, and the interpreter's hand-offs between fifty threads cost more on top: under 50
clients the server answered no faster than under one, and a search that costs twice the others took twice as long
again. With a few running (enough to keep every core busy while SQLite and numpy work without the interpreter lock),
a search waits for its turn and then runs at full speed: the same work done, and the wait no longer grows with what
the search itself costs.
"""
from __future__ import annotations

import contextvars
import os
import threading
from collections import deque

# Set (by the web app) for a search a person waits for in the window: it goes before every agent's in line.
PERSON_FIRST: contextvars.ContextVar[bool] = contextvars.ContextVar("skm_person_first", default=False)


def default_size() -> int:
    """One search per core, and one more to fill the moments a search spends in SQLite or numpy (2 cores: 3 measured
    as well as 4, better than 2; docs/performance.md)."""
    return (os.cpu_count() or 2) + 1


class SearchSlots:
    """At most `size` searches at once, first come first served, except that a person's (PERSON_FIRST) go before
    every agent's. A search within a search (Cluster View's light-up runs one) holds its caller's slot."""

    def __init__(self, size: int | None = None):
        self.size = size or default_size()
        self._free = self.size
        self._people: deque[threading.Event] = deque()
        self._line: deque[threading.Event] = deque()
        self._lock = threading.Lock()
        self._depth = threading.local()

    def __enter__(self) -> "SearchSlots":
        depth = getattr(self._depth, "n", 0)
        self._depth.n = depth + 1
        if depth:
            return self
        with self._lock:
            if self._free and not self._line and not self._people:
                self._free -= 1
                return self
            turn = threading.Event()
            (self._people if PERSON_FIRST.get() else self._line).append(turn)
        turn.wait()  # the slot is handed over by the search that ends
        return self

    def __exit__(self, *exc) -> None:
        self._depth.n -= 1
        if self._depth.n:
            return
        with self._lock:
            if self._people or self._line:
                (self._people or self._line).popleft().set()
            else:
                self._free += 1

    @property
    def waiting(self) -> int:
        return len(self._people) + len(self._line)
