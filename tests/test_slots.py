"""The search slots: a few searches at once, the others in the order they came."""
from __future__ import annotations

import threading
import time

import pytest

from indexer.search.slots import SearchSlots


@pytest.mark.parametrize("size", [1, 2])
def test_at_most_size_run_at_once_and_the_rest_go_in_the_order_they_came(size):
    slots = SearchSlots(size)
    running, most, order = [0], [0], []
    lock, release = threading.Lock(), threading.Event()

    def search(name: str) -> None:
        with slots:
            with lock:
                running[0] += 1
                most[0] = max(most[0], running[0])
                order.append(name)
            release.wait(10)
            with lock:
                running[0] -= 1

    threads = []
    for name in ("a", "b", "c", "d", "e"):
        threads.append(threading.Thread(target=search, args=(name,)))
        threads[-1].start()
        deadline = time.monotonic() + 5  # each is running or in line before the next comes
        while len(order) + slots.waiting < len(threads) and time.monotonic() < deadline:
            time.sleep(0.005)
    assert order == ["a", "b"][:size] and slots.waiting == 5 - size
    release.set()
    for t in threads:
        t.join(10)
    assert most[0] == size and slots.waiting == 0
    if size == 1:  # one at a time: each in its turn (with two, the two let in together race to say so)
        assert order == ["a", "b", "c", "d", "e"]
    assert sorted(order) == ["a", "b", "c", "d", "e"]


def test_a_search_within_a_search_holds_its_caller_s_slot():
    slots = SearchSlots(1)
    done = threading.Event()

    def nested() -> None:
        with slots:
            with slots:  # Cluster View's light-up runs a search inside its own
                done.set()

    thread = threading.Thread(target=nested)
    thread.start()
    thread.join(5)
    assert done.is_set()
    with slots:  # and gave it back
        pass


def test_the_setting_sizes_the_engine_s_slots_and_a_bad_value_says_what_to_write(monkeypatch, tmp_path):
    from indexer.config import Settings
    from indexer.engine import Engine
    from indexer.errors import SKMemoryError
    from indexer.home import Home
    from indexer.search.slots import default_size

    assert Engine(Home(Settings.from_env()))._slots.size == default_size()
    monkeypatch.setenv("SKMEMORY_SEARCH_SLOTS", "6")
    assert Engine(Home(Settings.from_env()))._slots.size == 6
    monkeypatch.setenv("SKMEMORY_SEARCH_SLOTS", "a few")
    with pytest.raises(SKMemoryError, match="SKMEMORY_SEARCH_SLOTS must be a whole number"):
        Settings.from_env()


def test_a_person_s_search_goes_before_every_agent_s_in_line():
    from indexer.search.slots import PERSON_FIRST

    slots = SearchSlots(1)
    order, release = [], threading.Event()

    def search(name: str, person: bool) -> None:
        if person:
            PERSON_FIRST.set(True)  # this thread's context only, as the web app sets it per request
        with slots:
            order.append(name)
            release.wait(10)

    threads = []
    for name, person in (("holder", False), ("agent 1", False), ("agent 2", False), ("person", True),
                         ("agent 3", False), ("person 2", True)):
        threads.append(threading.Thread(target=search, args=(name, person)))
        threads[-1].start()
        deadline = time.monotonic() + 5
        while len(order) + slots.waiting < len(threads) and time.monotonic() < deadline:
            time.sleep(0.005)
    release.set()
    for t in threads:
        t.join(10)
    assert order == ["holder", "person", "person 2", "agent 1", "agent 2", "agent 3"]
