"""Searches sent while typing: each window tab numbers its searches, and one that a newer search of the same tab
has overtaken is answered with 204 (the window swaps nothing) before it costs the server more.

The search box keeps one search in flight and queues only the newest keystroke's behind it (hx-sync "queue last"),
so that results follow the typing on a busy machine instead of each search being dropped by the next key (one
update for 25 keys, issue 40 row 9); a search overtaken here is one another route sent, or one of another surface
that drops its searches (hx-sync replace: the Power Strip, the Files filter)."""
from __future__ import annotations

import threading
from collections import OrderedDict

from flask import request

HEADER = "X-SKMemory-Typing"  # "<tab id>:<search number>", set by static/js/app.js
TABS = 256  # tabs remembered, the oldest forgotten first


class Keystrokes:
    def __init__(self):
        self._lock = threading.Lock()
        self._newest: OrderedDict[str, int] = OrderedDict()

    def arrived(self) -> tuple[str, int] | None:
        """Record this request's number for its tab; None when it carries none (a link, a reload, the API)."""
        tab, _, number = request.headers.get(HEADER, "").partition(":")
        if not tab or not number.isdigit() or len(tab) > 40:
            return None
        with self._lock:
            if int(number) > self._newest.get(tab, -1):
                self._newest[tab] = int(number)
                self._newest.move_to_end(tab)
                while len(self._newest) > TABS:
                    self._newest.popitem(last=False)
        return tab, int(number)

    def overtaken(self, ticket: tuple[str, int] | None) -> bool:
        """Whether a newer search of the same tab has arrived since."""
        if ticket is None:
            return False
        with self._lock:
            return self._newest.get(ticket[0], -1) > ticket[1]


keystrokes = Keystrokes()
