"""`related` is bounded by its work, not by characters: a long text in any script is read to the same number of
words (a CJK character counts as one), cut into passages of words, and every text asked about takes one search slot
among them all, so a search meanwhile finds one free."""
from __future__ import annotations

import threading

from indexer import RelatedTextRequest, SearchRequest
from indexer.search import related as related_module
from indexer.search.related import MAX_UNITS, PASSAGE_WORDS, bounded, passages_of

CHINESE = "查看正在运行的进程列表并结束占用端口的程序" * 50_000  # 1,050,000 characters, not one space


def test_a_long_chinese_text_is_read_to_the_same_work_as_english():
    text, cut = bounded(CHINESE)
    assert cut and len(text) == MAX_UNITS  # each character a unit
    english, cut_english = bounded("word " * 150_000)
    assert not cut_english and english == "word " * 150_000  # 750,000 characters of words: read whole
    passages = passages_of("页", text)
    assert len(passages) <= MAX_UNITS // PASSAGE_WORDS + 2
    assert max(len(p.text) for p in passages) < PASSAGE_WORDS * 2  # a passage of ~120 characters, not a million
    assert " " not in passages[1].text  # joined as written: no space where the text had none


def test_english_passages_are_cut_as_before():
    text = "\n\n".join(" ".join(f"w{i}x{j}" for j in range(50)) for i in range(10))
    passages = passages_of("Title", text)
    assert [len(p.text.split()) for p in passages] == [101, 100, 100, 100, 100]  # title, then 2 paragraphs each
    assert passages[0].text.startswith("Title\n\nw0x0 w0x1")


def test_a_long_text_answers_and_says_it_was_cut(make_module_engine):
    engine = make_module_engine(embedder="words")
    answer = engine.related_text(RelatedTextRequest(CHINESE, title="进程"))
    assert answer["truncated"] is True and answer["passages"] <= MAX_UNITS // PASSAGE_WORDS + 2


def test_texts_asked_about_take_one_search_slot_among_them(make_module_engine, monkeypatch):
    engine = make_module_engine(embedder="words")
    inside, release = threading.Semaphore(0), threading.Event()
    real = related_module.related

    def slow(*args, **kwargs):
        inside.release()
        release.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr("indexer.engine.related_to_text", slow)
    askers = [threading.Thread(target=engine.related_text, args=(RelatedTextRequest("sourdough starter"),))
              for _ in range(6)]
    for t in askers:
        t.start()
    try:
        assert inside.acquire(timeout=30)  # one is inside, holding a slot
        assert not inside.acquire(timeout=0.5)  # the other five wait their turn, holding none
        assert engine._slots.size - engine._slots._free == 1
        found = engine.search(SearchRequest("sourdough", mode="keyword"))  # a search meanwhile: a free slot
        assert found["results"]
    finally:
        release.set()
        for t in askers:
            t.join(60)
    assert not any(t.is_alive() for t in askers)
