"""Questions across languages, the parts that need no model: a question's language, the words that stay its names,
each question's own similarity scale, and a mixed project's space with each language's mean taken out."""
from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from indexer.text.language import common_word, content_words, question_language
from indexer.model.multilingual import ACROSS_SCALE
from indexer.model.scale import Baseline, QuestionScale, QuestionScaledVectors
from indexer.search.across import AcrossVectors, asking, names_across
from indexer.search.cache import VectorCache
from indexer.search.query import Query
from support import SKMEMORY, browser_page, running_server, shot, status, sync_playwright_api


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
    baseline = Baseline(cache.sample(Baseline.SAMPLE))
    typical = 0.25  # random 16-dimensional vectors: a quarter apart
    scaled = QuestionScaledVectors(cache, ACROSS_SCALE, typical, lambda: baseline)
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
    assert len(everything) == 400 and everything[:len(hits)] == hits, "a floor cuts the one ranking, never reorders"
    nearer = Baseline(cache.sample(Baseline.SAMPLE) + 0.1 * question)  # every passage nearer the question
    assert QuestionScale(ACROSS_SCALE, *nearer.of(question, typical)).shown(0.5) < scale.shown(0.5), \
        "a question near everything needs more to stand out"
    ten = vectors[:10].astype(np.float64)
    own = float(np.sqrt(question @ np.cov(ten.T, bias=True) @ question))
    assert Baseline(vectors[:10]).of(question, 0.25)[1] == pytest.approx(np.sqrt((10 * own ** 2 + 100 * 0.25 ** 2)
                                                                                 / 110)), \
        "a project of ten notes leans on the typical spread: ten cannot tell theirs"


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


# --- through a real server, with the real models ------------------------------------------------------------------

ENGLISH = {
    "find.md": "Look for files and folders below a directory by their name, size, type or age, and run a command "
               "on each one found.",
    "tar.md": "Pack many files into one archive and compress it with gzip, or unpack such an archive again.",
    "ssh.md": "Log in to a remote machine over an encrypted connection and run commands there.",
    "cron.md": "Run a job again and again on a schedule: every night, every hour, or on Mondays.",
    "git-branch.md": "Create, list, rename and delete the branches of a git repository.",
    "df.md": "Show how much disk space is free and used on every mounted file system.",
    "kill.md": "Stop a running process by its process id, politely or by force.",
    "ping.md": "Check whether a host on the network answers, and how long its answers take.",
    "grep.md": "Search the lines of text files for a pattern and print those that match.",
    "useradd.md": "Create a new user account with its home directory and login shell.",
}
CHINESE = {
    "alacritty.md": "跨平台、使用 GPU 加速的终端模拟器。修改配置文件之后，它会自动重新加载配置，无需重启。",
    "du.md": "估算目录和文件占用的磁盘空间，并按大小排序显示。",
    "curl.md": "从服务器下载文件，或者向网址发送各种请求并显示响应内容。",
    "unzip.md": "把 zip 压缩包里的文件解压到指定的目录中。",
    "ps.md": "列出系统中正在运行的进程及其编号和占用的资源。",
    "chmod.md": "修改文件或目录的访问权限，例如让脚本可以执行。",
    "crontab.md": "为当前用户设置定时任务，按计划周期性地执行命令。",
    "systemctl.md": "启动、停止和重启系统服务，并查看服务的运行状态。",
    "rsync.md": "把文件和目录同步到远程主机，只传输发生变化的部分。",
    "top.md": "实时显示进程列表以及处理器和内存的占用情况。",
}


def _notes(folder: Path, notes: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    for name, text in notes.items():
        title = name.removesuffix(".md")
        (folder / name).write_text(f"# {title}\n\n> {text}\n\n- {text}\n", encoding="utf-8")
    return folder


def _ask(port: int, project: str, question: str, mode: str = "hybrid") -> dict:
    query = urllib.parse.urlencode({"q": question, "project": project, "mode": mode, "limit": 10})
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/search?{query}", timeout=60) as response:
        return json.load(response)


@pytest.fixture(scope="module")
def two_languages(tmp_path_factory):
    """A real `skmemory serve` with an English project ("en") and a Chinese one ("zh"), once every passage is
    readable in other languages."""
    root = tmp_path_factory.mktemp("across")
    home = root / "home"
    env = {**os.environ, "SKMEMORY_HOME": str(home)}
    for name, notes in (("en", ENGLISH), ("zh", CHINESE)):
        added = subprocess.run(SKMEMORY + ["add", str(_notes(root / name, notes)), "--name", name], env=env,
                               capture_output=True, text=True, timeout=300)
        assert added.returncode == 0, added.stderr
    with running_server(root, None, home=home, projects={"en", "zh"}, timeout=600) as live:
        deadline = time.monotonic() + 300
        while not all(p.get("across", {}).get("ready") for p in status(live.port)["projects"]
                      if p["project"] in ("en", "zh")):
            assert time.monotonic() < deadline, f"never ready across languages: {status(live.port)['projects']}"
            time.sleep(0.5)
        yield live


def test_a_question_in_one_language_finds_the_note_in_another_through_a_real_server(two_languages):
    live = two_languages
    projects = {p["project"]: p for p in status(live.port)["projects"]}
    assert projects["en"]["model"] == "all-MiniLM-L6-v2" and "ready" in projects["en"]["across"]["sentence"]
    assert "across" not in projects["User Docs"], "built-in notes get no vectors across languages"

    russian = _ask(live.port, "en", "как найти файлы по имени")
    assert [r["path"] for r in russian["results"][:3]].count("find.md") == 1, russian["results"][:3]
    assert russian["across"][0]["language"] == "ru" and russian["across"][0]["space"] == "across"
    assert "Russian" in russian["across"][0]["sentence"] and "English" in russian["across"][0]["sentence"]
    semantic = _ask(live.port, "en", "остановить запущенный процесс", mode="semantic")
    found = semantic["results"] or semantic["weaker_matches"]  # ten notes are too few to tell much above 0.5
    assert found[0]["path"] == "kill.md" and (semantic["results"] or semantic["empty_reason"])
    assert _ask(live.port, "en", "подключиться к удалённому серверу")["results"][0]["path"] == "ssh.md"

    english_asked = _ask(live.port, "zh", "How do I make alacritty reload its config automatically?")
    assert english_asked["results"][0]["path"] == "alacritty.md"
    assert _ask(live.port, "zh", "unpack a zip archive")["results"][0]["path"] == "unzip.md"

    nothing = _ask(live.port, "en", "the purple elephant of my grandmother")
    assert nothing["results"] == [] and "Nothing in 'en' matches" in nothing["empty_reason"]
    assert "English" in nothing["empty_reason"] and "all-MiniLM-L6-v2" in nothing["empty_reason"]
    gibberish = _ask(live.port, "zh", "qzxv plorbt wugglesnap", mode="semantic")
    assert gibberish["results"] == [] and "Chinese" in gibberish["empty_reason"], gibberish
    cli = subprocess.run(SKMEMORY + ["search", "как найти файлы по имени", "--project", "en"], env=live.env,
                         capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0 and "find.md" in cli.stdout, cli.stdout + cli.stderr


def test_the_window_says_how_a_question_across_languages_was_searched_and_why_nothing_matched(two_languages, browser):
    expect = sync_playwright_api().expect
    with browser_page(browser, two_languages.url) as page:
        page.goto("/search?" + urllib.parse.urlencode({"q": "как найти файлы по имени", "project": "en"}))
        expect(page.locator(".result-list .result-title").first).to_have_text("find")
        expect(page.locator(".result-count")).to_contain_text("asked in Russian, searched across languages")
        expect(page.locator(".result-list .result").first).to_contain_text("by meaning, across languages")
        shot(page, "search-window-across", readme="search-window-across")
        page.goto("/search?" + urllib.parse.urlencode({"q": "the purple elephant of my grandmother",
                                                       "project": "en"}))
        reason = page.locator(".empty-reason")
        expect(reason).to_contain_text("Nothing in 'en' matches")
        expect(reason).to_contain_text("read by all-MiniLM-L6-v2")
        page.goto("/status")
        expect(page.locator(".project-across").first).to_contain_text("Questions in other languages: ready")
        shot(page, "status-across", readme="status-across")


def test_a_project_that_turns_forty_percent_chinese_moves_to_the_multilingual_model_while_serve_runs(two_languages):
    """Issue 62: Chinese notes copied into an English project while `serve` runs (7 of 17, 41 %). Before, the server
    kept the English model, embedded them with it and went on saying "English (100 %)" until a restart. Now the
    watcher's sync tells the language again, the project moves to the multilingual model by itself, and an English
    question asked all along is answered by meaning at every moment (by the English model's vectors until the new
    ones are all there)."""
    import threading

    live = two_languages
    folder = Path(next(p["root"] for p in status(live.port)["projects"] if p["project"] == "en"))
    question = "log in to a remote machine over an encrypted connection"
    answers: list = []
    done = threading.Event()

    def ask_all_along() -> None:
        while not done.is_set():
            try:
                answer = _ask(live.port, "en", question, mode="semantic")
                answers.append([r["path"] for r in answer["results"]][:1])
            except Exception as exc:  # a 5xx or a refused connection, kept to be shown
                answers.append(repr(exc))
            time.sleep(0.05)

    def en() -> dict:
        return next(p for p in status(live.port)["projects"] if p["project"] == "en")

    asking_thread = threading.Thread(target=ask_all_along)
    asking_thread.start()
    try:
        for name, text in list(CHINESE.items())[:7]:
            (folder / f"zh-{name}").write_text(f"# {name.removesuffix('.md')}\n\n> {text}\n\n- {text}\n",
                                               encoding="utf-8")
        deadline = time.monotonic() + 120
        while not ((now := en())["model"] == "multilingual-e5-small" and now["documents"] == 17
                   and not now["pending"] and "model_switch" not in now):
            assert time.monotonic() < deadline, f"never moved to the multilingual model: {now}"
            time.sleep(0.3)
    finally:
        done.set()
        asking_thread.join()
    assert now["language"].startswith("English") and "Chinese (41 %)" in now["language"], now["language"]
    assert answers and all(a == ["ssh.md"] for a in answers), [a for a in answers if a != ["ssh.md"]][:5]
    chinese = _ask(live.port, "en", "把压缩包里的文件解压出来", mode="semantic")
    assert chinese["results"][0]["path"] == "zh-unzip.md", chinese["results"][:3]
