"""Notes in every language, the parts that need no model: what a passage and a project are written in, the model
that follows, the words the BM25 table holds in every script, the questions read the same way, typo correction
kept within a script, and the similarity scale."""
from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from indexer.text.language import Languages, languages, model_for, passage_language
from indexer.model.multilingual import SCALE
from indexer.model.scale import IDENTITY
from indexer.text.segment import index_words, pairs, word_forms
from indexer.search.grammar import parse_query, parse_terms
from indexer.search.spelling import correctable
from indexer.store.database import connect

SAMPLES = {
    "zh": "显示正在运行的进程的信息，包括它们的编号、占用的内存和运行时间。",
    "ja": "ファイルやディレクトリをコピーします。コピー先が存在する場合は上書きされます。",
    "ru": "Показать список открытых файлов и процессов, которые их открыли, в текущей системе.",
    "de": "Zeige den aktuellen Benutzer und die Gruppen an, zu denen er gehört, und die Kennung.",
    "es": "Muestra el espacio libre en el disco para cada sistema de archivos que está montado.",
    "en": "Show the current user and the groups they belong to, with the numeric identifier of each.",
}


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_a_passage_is_told_by_its_letters_and_commonest_words(language):
    assert passage_language(SAMPLES[language]) == language


def test_a_passage_too_short_or_all_commands_tells_nothing():
    assert passage_language("ls -la") is None
    assert passage_language("`tar -xvzf archive.tar.gz --directory target`") is None


def test_an_english_vault_with_a_few_notes_in_other_languages_stays_english():
    notes = [SAMPLES["en"]] * 60 + [SAMPLES["de"], SAMPLES["zh"]]
    model, why = model_for(languages(notes))
    assert model == "english"
    assert why.startswith("the notes are English")


def test_a_mixed_project_counts_as_not_english():
    notes = [SAMPLES["en"]] * 70 + [SAMPLES["zh"]] * 30
    model, why = model_for(languages(notes))
    assert model == "multilingual"
    assert "English (70 %" in why and "Chinese (30 %)" in why


def test_a_chinese_project_says_so_and_the_setting_overrides_it():
    found = languages([SAMPLES["zh"]] * 10 + [SAMPLES["en"]])
    assert found.main == "zh" and not found.english
    assert found.describe().startswith("Chinese (91 % of 11 passages)")
    assert model_for(found, "english") == ("english", "SKMEMORY_EMBED_MODEL=english chooses it (the notes are "
                                                      + found.describe() + ")")
    assert Languages.from_dict(found.to_dict()) == found


def test_chinese_and_japanese_runs_are_held_as_character_pairs():
    assert pairs("查看进程") == ["查看", "看进", "进程"]
    assert pairs("行") == ["行"]
    held = index_words("查看正在运行的进程，使用 ps 命令。")
    assert "查看 看正 正在" in held and " ps " in held and "命令" in held


def test_a_stemmed_language_keeps_each_word_and_adds_its_stem():
    held = index_words("Lösche alle temporären Dateien im aktuellen Verzeichnis und zeige die Dateien an.")
    assert "Dateien datei" in held
    held = index_words("Показать все файлы в каталоге и удалить временные файлы.")
    assert "файлы файл" in held


def test_english_text_is_held_as_it_is():
    text = "Show all files in the current directory and delete the temporary ones, then list them again."
    assert index_words(text) == text


def test_a_question_reads_its_cjk_run_as_the_or_of_its_pairs_and_its_words_with_their_stems():
    fts = parse_query("查看正在运行的进程")
    assert fts.match == '("查看" OR "看正" OR "正在" OR "在运" OR "运行" OR "行的" OR "的进" OR "进程")'
    assert "的进" not in fts.words  # a pair holding a particle marks nothing
    german = parse_query("Dateien löschen").for_languages(("de",))
    assert german.match == '("dateien" OR "datei") AND ("löschen" OR "losch")'
    assert parse_query("Dateien löschen").match == '"dateien" "löschen"'  # an English project reads it as typed
    assert word_forms("files", ()) == ("files",)


def test_every_expression_a_mixed_question_makes_is_one_fts5_accepts(tmp_path):
    conn = connect(tmp_path / "index.sqlite")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')")
    conn.execute("INSERT INTO t VALUES (skm_words(?))", ["用 git 管理家目录里的配置文件，查看正在运行的进程"])
    for question in ("给rust 工具链添加组件", "git 管理配置文件", "Dateien NOT 查看进程 löschen", '"查看正在" 进程*',
                     "fedora でパッケージをインストールする", "кластера kubernetes узла"):
        for fts in (parse_query(question), parse_query(question).for_languages(("de", "ru"))):
            for expression in filter(None, (fts.match, fts.any_match)):
                try:
                    conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", [expression]).fetchone()
                except sqlite3.OperationalError as exc:
                    pytest.fail(f"FTS5 refused {expression!r} of {question!r}: {exc}")
    assert conn.execute("SELECT count(*) FROM t WHERE t MATCH ?",
                        [parse_query("查看进程").match]).fetchone()[0] == 1


def test_a_chinese_question_without_spaces_around_a_latin_word_finds_what_the_spaced_one_finds(tmp_path):
    """Issue 61: `解压zip文件` found nothing where `解压 zip 文件` found the unzip page: a word that changes script was
    one adjacent phrase, though a note rarely holds those pairs side by side (解压缩 zip 文件)."""
    conn = connect(tmp_path / "index.sqlite")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')")
    conn.executemany("INSERT INTO t VALUES (skm_words(?))", [["使用 unzip 命令解压缩 zip 文件到指定目录"],
                                                            ["列出 zip 压缩包里的内容"]])

    def found(question: str) -> int:
        return conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", [parse_query(question).match]).fetchone()[0]

    assert found("解压zip文件") == found("解压 zip 文件") == 1
    assert found("zip文件*") == 1 and found('"解压zip文件"') == 0  # quoted: the phrase as typed, still
    assert parse_query("解压zip文件").match == '("解压" AND "zip" AND "文件")'
    assert parse_terms("解压zip文件 v2版本") == ["解压", "zip", "文件", "v2", "版本"]  # the keyword leg's terms too


def test_the_keyword_mode_finds_the_unspaced_chinese_question_in_a_project(tmp_path):
    from indexer import SearchRequest
    from indexer.config import Settings
    from indexer.home import Home
    from support import WordEmbedder, indexed

    vault = tmp_path / "zh"
    (vault / "common").mkdir(parents=True)
    (vault / "common" / "unzip.md").write_text(
        "# unzip\n\n> 从 Zip 压缩包中提取文件或目录。\n\n- 将压缩包中的所有文件解压到当前目录下：\n\n"
        "`unzip {{路径/到/压缩文件.zip}}`\n", encoding="utf-8")
    (vault / "common" / "ls.md").write_text("# ls\n\n> 列出目录的内容。\n", encoding="utf-8")
    with indexed(Home(Settings(home=tmp_path / "home"), embedder=WordEmbedder()), vault, "zh") as engine:
        for question in ("解压zip文件", "解压 zip 文件"):
            found = engine.search(SearchRequest(question, mode="keyword", project="zh"))["results"]
            assert [r["path"] for r in found] == ["common/unzip.md"], question


def test_typo_correction_never_rewrites_a_cjk_sentence_or_crosses_scripts():
    assert not correctable("统计文件里有多少行")
    assert not correctable("ファイルをコピー")
    assert correctable("процессы") and correctable("kanban")
    assert not correctable("kanbanы")  # two scripts in one word: searched as typed


def test_the_multilingual_scale_is_monotone_and_its_floors_map_back():
    raw = np.linspace(-1, 1, 2001, dtype=np.float32)
    shown = SCALE.shown(raw)
    assert np.all(np.diff(shown) >= 0)
    for floor in (0.3, 0.5):
        assert abs(SCALE.shown(SCALE.raw(floor)) - floor) < 1e-3
    assert SCALE.shown(0.75) < 0.0  # e5's cosine of an unrelated passage is nothing on the shared scale
    assert IDENTITY.shown(0.42) == 0.42 and IDENTITY.raw(0.3) == 0.3


def test_tags_in_any_script_are_tags():
    from indexer.text.inline import scan_text

    tags, _ = scan_text("内容 #标签 和 #工作/项目\n\nТекст #тег, #Überblick und #日本語タグ")
    assert tags == ["标签", "工作/项目", "тег", "überblick", "日本語タグ"]


def test_a_question_in_another_script_keeps_only_its_names_as_words():
    from indexer.search.across import _name_like

    words = "restart or reload the Apache web server with NTFS and ssh-keygen on .NET".split()
    assert [w for i, w in enumerate(words) if _name_like(w, first=i == 0)] == ["Apache", "NTFS", "ssh-keygen",
                                                                               ".NET"]
    assert not _name_like("Show", first=True) and not _name_like("进程", first=False)
