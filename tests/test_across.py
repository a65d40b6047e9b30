"""Questions across languages, the parts that need no model: a question's language, the words that stay its names,
each question's own similarity scale, and a mixed project's space with each language's mean taken out."""
from __future__ import annotations

import numpy as np
import pytest

from indexer.ingest.language import common_word, content_words, question_language
from indexer.ingest.multilingual import ACROSS_SCALE
from indexer.ingest.scale import QuestionScaledVectors, Spread
from indexer.search.across import AcrossVectors, asking, names_across
from indexer.search.cache import VectorCache
from indexer.search.query import Query


@pytest.mark.parametrize("question, language", [
    ("как найти файлы по имени", "ru"),
    ("cómo comprimir una carpeta", "es"),
    ("Dateien und ganze Verzeichnisbäume unter Windows kopieren", "de"),
    ("把大文件切成几个小文件", "zh"),
    ("解压zip文件", "zh"),
    ("テキストの文字列をスクリプトで置換する", "ja"),
    ("How do I make alacritty reload its config file automatically?", "en"),
    ("tmux", None),
    ("git rebase onto main", None),
    ("del", None),
])
def test_a_question_is_told_by_its_script_and_its_function_words(question, language):
    assert question_language(question) == language


def test_a_function_word_of_any_language_is_no_name_and_counts_for_nothing():
    assert common_word("del") and common_word("the") and common_word("und") and common_word("для")
    assert not common_word("zip") and not common_word("kubernetes")
    assert content_words("менеджер зависимостей для проектов на PHP") == 4
    assert content_words("在 shell 中取出变量的值") == pytest.approx(0.5 + 1 + 3.5)


NOTES = {
    "del.md": "# del\n\nDelete one or more files in the Windows command prompt.\n",
    "zip.md": "# zip\n\nPackage and compress files into a zip archive, with folders inside it.\n",
    "tar.md": "# tar\n\nArchive files together, and compress the archive with gzip or xz if you like.\n",
    "notes.md": "# Notes\n\nThe notes of this project are written in English, every one of them, with words to "
                "tell it by: the files, the folders and the archives they hold.\n",
}


def _write(folder):
    for name, text in NOTES.items():
        (folder / name).write_text(text * 3, encoding="utf-8")


@pytest.fixture(scope="module")
def english(make_module_engine):
    engine = make_module_engine(project="en", embedder="words", prepare=_write)
    return engine.index("en")


def test_a_spanish_question_of_english_notes_keeps_its_names_never_its_function_words(english):
    query = Query.parse("comprimir una carpeta con zip y borrar del disco")
    asked = asking(english, query)
    assert asked.language == "es" and asked.notes == "en" and asked.wanted
    narrowed = names_across(english, query, asked)
    assert narrowed.terms == ["zip"], "'del' is Spanish for 'of the', never the del command"
    assert narrowed.meaning == query.meaning, "the model still reads the whole question"
    assert narrowed.names == query.names, "its kept words never make it a note's name"
    assert 0 < narrowed.words_weight < 0.5


def test_a_question_in_the_notes_language_keeps_every_word(english):
    query = Query.parse("compress files into an archive")
    assert not asking(english, query).wanted
    assert names_across(english, query, asking(english, query)) is None


def test_a_latin_question_that_tells_no_language_is_foreign_when_the_notes_lack_its_words(english):
    assert asking(english, Query.parse("encontrar archivos grandes")).language == "foreign"
    assert asking(english, Query.parse("archive folders files")).language is None


def test_each_question_is_judged_on_its_own_scale():
    rng = np.random.default_rng(59)
    vectors = rng.standard_normal((400, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    cache = VectorCache(lambda: ([f"c{i}" for i in range(400)], vectors))
    spread = Spread(cache.sample(Spread.SAMPLE))
    scaled = QuestionScaledVectors(cache, ACROSS_SCALE, lambda: spread)
    question = vectors[7] + 0.2 * vectors[8]
    question /= np.linalg.norm(question)
    hits = scaled.search(question, 0.3)
    assert hits and hits[0][0] == "c7", "the passage it was made from comes first"
    assert all(s >= 0.3 for _, s in hits) and [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    ids, sims = scaled.similarities(question, [cid for cid, _ in hits])
    assert dict(zip(ids, sims.tolist())) == pytest.approx(dict(hits), abs=1e-5), "one scale, whichever way asked"
    scale = scaled.question_scale(question)
    assert scale.shown(scale.raw(0.5)) == pytest.approx(0.5, abs=1e-3)
    everything = scaled.search(question, -1.0)
    assert sum(s >= 0.3 for _, s in everything) < 40, "a floor keeps a few of 400 unrelated passages, not half"


def test_a_mixed_project_takes_each_languages_mean_out():
    rng = np.random.default_rng(5)
    topics = rng.standard_normal((60, 32)).astype(np.float32)
    accent = {"en": 3 * rng.standard_normal(32), "zh": 3 * rng.standard_normal(32)}  # what each language adds
    ids, languages, rows = [], [], []
    for i, topic in enumerate(topics):
        for lang in accent:
            ids.append(f"{lang}{i}")
            languages.append(lang)
            rows.append(topic + accent[lang])
    matrix = np.stack(rows).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    vectors = AcrossVectors(lambda: (ids, languages, matrix), lambda: "1")
    question = topics[11] + accent["zh"]  # asked in Chinese about topic 11
    question /= np.linalg.norm(question)
    plain = vectors.cache(mixed=False).search(question, -1.0, 10)
    assert all(cid.startswith("zh") for cid, _ in plain), "uncentred, its own language's passages crowd the top"
    mixed = vectors.cache(mixed=True)
    mixed.ensure_loaded()  # the means come with the vectors
    centred = mixed.search(vectors.centre(question, "zh"), -1.0, 2)
    assert {cid for cid, _ in centred} == {"zh11", "en11"}, "centred, the topic's passages in both languages lead"
    vectors.apply(["ja1"], topics[11:12] + 3 * rng.standard_normal(32), ["ja"], ["en11"])
    assert "en11" not in vectors.cache(mixed=True) and "ja1" in vectors.cache(mixed=True)
