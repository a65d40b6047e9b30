"""The language of a passage and of a project, from the letters and the commonest words: no model, no package.

A passage is Chinese, Japanese or Korean by its script (kana make Han text Japanese), Russian (or another
Cyrillic language) by its letters, and among Latin-script languages by which language's commonest words it holds
most (English "the, and, of", German "der, und, nicht", ...); a passage with too few letters or words to tell is
left out. A project is English when at least ENGLISH_SHARE of the passages that could be told are English: a
mixed project counts as not English, and its notes are embedded by the multilingual model (MODEL_FOR).
"""
from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

ENGLISH_SHARE = 0.9  # a project whose sampled passages are this English or more is embedded by the English model
SAMPLE = 400  # passages read to decide
MIN_LETTERS = 12  # a passage with fewer letters says nothing of its language
NAMES = {"en": "English", "zh": "Chinese", "ja": "Japanese", "ko": "Korean", "ru": "Russian", "uk": "Ukrainian",
         "de": "German", "es": "Spanish", "fr": "French", "it": "Italian", "pt": "Portuguese", "nl": "Dutch",
         "other": "another language"}

# The commonest words of each Latin-script language that the others lack (or share rarely).
_COMMON = {
    "en": "the and of to is in that it for with as was on are be this by you not or from have an which can",
    "de": "der die das und ist nicht ein eine mit auf den dem des für von sich zu im auch wird oder werden aus",
    "es": "el la los las de que y en un una es por con para se del al como más o su lo este",
    "fr": "le la les de des et est un une du en que qui pour dans pas sur au avec ce ou sont par",
    "it": "il lo la gli le di che è e un una per con non del della sono da nel come",
    "pt": "o a os as de que e do da em um uma para com não por se dos das é ao",
    "nl": "de het een en van is dat op te in niet met voor zijn er aan ook als wordt",
}
# A word English has too ("a", "do", "die", "on") is no evidence of another language.
_ENGLISH_TOO = set(_COMMON["en"].split()) | set("a i as do die so also man fast hat will war bin see place come "
                                               "more no son come per con". split())
_WORDS = {lang: set(words.split()) - (_ENGLISH_TOO if lang != "en" else set()) for lang, words in _COMMON.items()}
MIN_OTHER = 3  # fewer passages than this in other languages never make a project "not English"
_WORD = re.compile(r"[^\W\d_]+")
# What no reader reads as words of a language: addresses ("github.com" is no Portuguese "com"), paths, code.
_UNREAD = re.compile(r"\S*://\S*|\S+\.(?:com|org|net|io|dev|md|html)\b\S*|`[^`\n]*`|\S*/\S*")
_UKRAINIAN = set("іїєґ")


_ASCII_LETTER = re.compile(r"[A-Za-z]")


def script_counts(text: str) -> Counter:
    """Letters of the text by script: han, kana, hangul, cyrillic, latin, other."""
    if text.isascii():  # most passages of most notes: counted in C
        return Counter({"latin": len(_ASCII_LETTER.findall(text))})
    counts: Counter = Counter()
    for ch in text:
        if not ch.isalpha():
            continue
        o = ord(ch)
        if 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0xF900 <= o <= 0xFAFF or 0x20000 <= o <= 0x2FA1F:
            counts["han"] += 1
        elif 0x3040 <= o <= 0x30FF or 0x31F0 <= o <= 0x31FF or 0xFF66 <= o <= 0xFF9D:
            counts["kana"] += 1
        elif 0xAC00 <= o <= 0xD7AF or 0x1100 <= o <= 0x11FF or 0x3130 <= o <= 0x318F:
            counts["hangul"] += 1
        elif 0x0400 <= o <= 0x04FF:
            counts["cyrillic"] += 1
        elif o < 0x0250 or 0x1E00 <= o <= 0x1EFF:
            counts["latin"] += 1
        else:
            counts["other"] += 1
    return counts


def passage_language(text: str) -> str | None:
    """The language of one passage ('en', 'zh', 'ja', 'ko', 'ru', 'de', ...), or None when it cannot be told."""
    counts = script_counts(text)
    letters = sum(counts.values())
    if letters < MIN_LETTERS:
        return None
    cjk = counts["han"] + counts["kana"] + counts["hangul"]
    # A CJK character carries about a word: a fifth of the letters in CJK makes the passage CJK.
    if cjk * 5 >= letters:
        if counts["hangul"] >= max(counts["han"], counts["kana"]):
            return "ko"
        return "ja" if counts["kana"] * 10 >= cjk else "zh"
    if counts["cyrillic"] * 2 >= letters:
        return "uk" if sum(text.count(c) for c in _UKRAINIAN) * 50 >= counts["cyrillic"] else "ru"
    if counts["latin"] * 2 < letters:
        return "other"
    words = [w.lower() for w in _WORD.findall(unicodedata.normalize("NFC", _UNREAD.sub(" ", text)))]
    hits = Counter({lang: sum(w in common for w in words) for lang, common in _WORDS.items()})
    (best, top), = hits.most_common(1)
    if top < 2 or top * 50 < len(words):  # a list of names, a command line: nothing to tell
        return None
    return best


# The words a question is made of besides its subject, per Latin-script language: function words, question words and
# the commonest verbs of a request. A word several languages share ("de", "la", "a") counts for each as a share.
_QUESTION_WORDS = {
    "en": "the a an and of to in on for with is are how do does i my what which where can from by at it this that "
          "into as be your me all any every show list find get set make without using when why who",
    "es": "el la los las de del que y en un una unos unas es son por con para se al como cómo qué cuál cuáles dónde "
          "cuándo mi mis su sus muy sin sobre entre hacer ver puedo quiero todos todas desde hasta este esta otro otra",
    "de": "der die das und ist nicht ein eine einen mit auf den dem des für von sich zu im auch wird oder werden aus "
          "wie was welche wo ich kann mein meine alle über ohne nach bei",
    "fr": "le la les de des et est un une du en que qui pour dans pas sur au aux avec ce ou sont par comment quel "
          "quelle où je mon mes tous sans",
    "it": "il lo la gli le di che è e un una per con non del della dei sono da nel come cosa quale dove io mio "
          "tutti senza",
    "pt": "o a os as de que e do da em um uma para com não por se dos das é ao como qual onde eu meu todos sem",
    "nl": "de het een en van is dat op te in niet met voor zijn er aan ook als wordt hoe wat welke waar ik mijn "
          "alle zonder",
}
# Cyrillic questions are told by their letters; their function words still say which words of one are not names.
_CYRILLIC_WORDS = ("и в во не на что как с со к по из за от для до о об у же ли бы это мне мой моя мои все всё его её "
                   "их или чтобы если когда где какой какая какие который можно нужно через при без над под між та "
                   "як що це")
_SHARED: Counter = Counter(w for words in _QUESTION_WORDS.values() for w in set(words.split()))
_QUESTION_WEIGHTS = {lang: {w: 1.0 / _SHARED[w] for w in words.split()} for lang, words in _QUESTION_WORDS.items()}
_FUNCTION_WORDS = frozenset(_SHARED) | frozenset(_CYRILLIC_WORDS.split())


def common_word(word: str) -> bool:
    """Whether a word is one of the words a question is made of in some language ("del", "the", "und"): never a
    name, whatever note it names."""
    return word.lower() in _FUNCTION_WORDS


# Letters one Latin-script language writes and English never does: each counts as a word of that language.
_LETTERS = {"es": "ñ¿¡áíóú", "de": "äöüß", "fr": "çèêëàâîôûœ", "pt": "ãõçâêô", "it": "àèìòù"}
# Among languages tied on the evidence (and English with none), the one more people write: a tie between Spanish
# and Italian ("una", "de") is Spanish, which a search treats alike anyway (not English: the notes' other model).
_TIE_ORDER = ("en", "es", "pt", "de", "fr", "it", "nl")


def question_language(text: str) -> str | None:
    """The language a question is asked in ('en', 'es', 'zh', 'ru', ...), from its script and its function words
    (a question is too short for passage_language's counts); None when nothing tells it (a command, a name, a few
    words of no language in particular)."""
    counts = script_counts(text)
    letters = sum(counts.values())
    if letters < 2:
        return None
    cjk = counts["han"] + counts["kana"] + counts["hangul"]
    if cjk * 5 >= letters:
        if counts["hangul"] >= max(counts["han"], counts["kana"]):
            return "ko"
        return "ja" if counts["kana"] else "zh"
    if counts["cyrillic"] * 2 >= letters:
        return "uk" if sum(text.count(c) for c in _UKRAINIAN) else "ru"
    if counts["latin"] * 2 < letters:
        return "other"
    words = [w.lower() for w in _WORD.findall(unicodedata.normalize("NFC", _UNREAD.sub(" ", text)))]
    scores: Counter = Counter()
    for word in words:
        for lang, weights in _QUESTION_WEIGHTS.items():
            scores[lang] += weights.get(word, 0.0)
        for lang, marks in _LETTERS.items():
            if any(c in marks for c in word):
                scores[lang] += 1.0
    best = max(scores.values(), default=0.0)
    if best < 1.0:
        return None
    tied = [lang for lang in _TIE_ORDER if scores[lang] >= best - 1e-9]
    if "en" in tied and len(tied) > 1:  # English and another as likely: nothing told
        return None
    return tied[0]


def content_words(text: str) -> float:
    """How many words of meaning a text holds: its words of two letters or more that are no function word of any
    language, a CJK character counting as half a word."""
    count = 0.0
    for token in _WORD.findall(unicodedata.normalize("NFC", text)):
        cjk = sum(1 for c in token if script_counts(c).keys() & {"han", "kana", "hangul"})
        if cjk:
            count += cjk / 2 + (len(token) - cjk >= 2)
        elif len(token) >= 2 and not common_word(token):
            count += 1
    return count


def script(text: str) -> str | None:
    """The script a text is mostly written in: 'cjk', 'cyrillic', 'latin' or 'other' (None with under 3 letters)."""
    counts = script_counts(text)
    letters = sum(counts.values())
    if letters < 3:
        return None
    if (counts["han"] + counts["kana"] + counts["hangul"]) * 5 >= letters:
        return "cjk"
    if counts["cyrillic"] * 2 >= letters:
        return "cyrillic"
    return "latin" if counts["latin"] * 2 >= letters else "other"


SCRIPTS = {"zh": "cjk", "ja": "cjk", "ko": "cjk", "ru": "cyrillic", "uk": "cyrillic", "other": "other"}


@dataclass(frozen=True)
class Languages:
    """What a sample of a project's passages is written in."""

    counts: dict[str, int]  # language -> passages, of those that could be told
    sampled: int

    @property
    def told(self) -> int:
        return sum(self.counts.values())

    @property
    def english_share(self) -> float:
        return self.counts.get("en", 0) / self.told if self.told else 1.0

    @property
    def main(self) -> str:
        """The commonest language ('en' when nothing could be told)."""
        return max(self.counts, key=self.counts.get) if self.counts else "en"

    @property
    def script(self) -> str:
        """The script of the commonest language ('latin' for English and every Latin-script language)."""
        return SCRIPTS.get(self.main, "latin")

    @property
    def english(self) -> bool:
        return self.english_share >= ENGLISH_SHARE or self.told - self.counts.get("en", 0) < MIN_OTHER

    def describe(self) -> str:
        """'Chinese (93 % of 400 passages), English (7 %)' for status and the window."""
        if not self.told:
            return "not told yet (no passage long enough)"
        parts = [f"{NAMES.get(lang, lang)} ({100 * n / self.told:.0f} %" + (f" of {self.told} passages)" if i == 0
                                                                            else ")")
                 for i, (lang, n) in enumerate(sorted(self.counts.items(), key=lambda kv: -kv[1])[:3])]
        return ", ".join(parts)

    def to_dict(self) -> dict:
        return {"counts": self.counts, "sampled": self.sampled}

    @classmethod
    def from_dict(cls, value: dict) -> "Languages":
        return cls({str(k): int(v) for k, v in (value.get("counts") or {}).items()}, int(value.get("sampled", 0)))


def languages(texts) -> Languages:
    """Tell the language of each passage; count them."""
    counts: Counter = Counter()
    sampled = 0
    for text in texts:
        sampled += 1
        lang = passage_language(text)
        if lang is not None:
            counts[lang] += 1
    return Languages(dict(counts), sampled)


def model_for(found: Languages, setting: str = "auto") -> tuple[str, str]:
    """(the model that embeds the project, why), from what its notes are written in and SKMEMORY_EMBED_MODEL."""
    if setting != "auto":
        return setting, f"SKMEMORY_EMBED_MODEL={setting} chooses it (the notes are {found.describe()})"
    if found.english:
        return "english", f"the notes are English ({found.describe()})"
    return "multilingual", f"the notes are not mostly English: {found.describe()}"


def kept(value: str | None) -> dict:
    """What a project's index keeps of its notes' language (index_meta 'languages': counts, model, why), read from
    its JSON; {} before the first telling or when unreadable."""
    try:
        found = json.loads(value or "{}")
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}
