"""A memory's words: what a full-text query asks for and what makes two memories near-duplicates.

Words are split and folded as the FTS5 index's tokenizer does (unicode61, accents removed),
stop words dropped; a plural's `s` is cut so "likes tea" and "like teas" are the same words.
"""
from __future__ import annotations

import re
import unicodedata

WORD = re.compile(r"[^\W_]+")  # letters and digits, as unicode61 splits text ("_" separates too)
MAX_TERM_CHARS = 64
QUERY_TERMS = 12  # a query's words at most: each OR'ed word is a pass over its posting list

STOP_WORDS = frozenset("""
a about above after again all also am an and any are as at be because been before being below between both
but by can could did do does doing done down during each else etc ever every few for from further get gets
got had has have having he her here hers herself him himself his how i if in into is it its itself just
know let me might more most must my myself no nor not now of off on once only or other our ours out over
own per please shall she should so some such tell than that the their them then there these they this
those through to too under until up upon us very via was we were what when where whether which while who
whom why will with within would yet you your yours person persons user users
""".split())


def fold(word: str) -> str:
    """Lower case without accents: how the index compares words."""
    word = word.lower()
    if word.isascii():
        return word
    return "".join(ch for ch in unicodedata.normalize("NFD", word) if not unicodedata.combining(ch))


def words(text: str) -> list[str]:
    """The text's meaningful words, folded, in the order written, each once."""
    out: dict[str, None] = {}
    for m in WORD.finditer(text):
        word = fold(m.group())
        if word in STOP_WORDS or len(word) > MAX_TERM_CHARS or (len(word) == 1 and not word.isdigit()):
            continue
        out[word] = None
    return list(out)


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def match_any(text: str) -> str | None:
    """An FTS5 MATCH expression for rows holding any of the text's words (each quoted: never syntax)."""
    found = words(text)[:QUERY_TERMS]
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in found) if found else None


def match_prefixes(text: str) -> str | None:
    """An FTS5 MATCH expression for rows holding every word, the last one as a prefix (a search box)."""
    found = words(text)[:QUERY_TERMS]
    if not found:
        return None
    quoted = ['"' + w.replace('"', '""') + '"' for w in found]
    quoted[-1] += "*"
    return " AND ".join(quoted)


def normalised(text: str) -> str:
    """The text as two spellings of one fact compare: folded, spaces and punctuation collapsed."""
    return " ".join(fold(m.group()) for m in WORD.finditer(text))


# Near-duplicates: the same fact said again, or said with more detail. Word sets alike by
# Jaccard ≥ 0.7 (the same words in another order, or nearly: 7 of 10 words shared), or
# one's words (three at least) all within the other's ("drinks green tea daily" / "drinks green
# tea daily, no sugar"). Short facts that share a subject stay apart: "works at Acme" /
# "sister works at Acme" (2 of 3), "lives in Berlin" / "lives in Paris" (1 of 3).
JACCARD = 0.7
CONTAINED_MIN_WORDS = 3


def similarity(a: str, b: str) -> float:
    """How alike two memories are, 0–1 (1.0: the same words, or one's within the other's)."""
    if normalised(a) == normalised(b):
        return 1.0
    sa, sb = {_stem(w) for w in words(a)}, {_stem(w) for w in words(b)}
    if not sa or not sb:
        return 0.0
    shared = len(sa & sb)
    if min(len(sa), len(sb)) >= CONTAINED_MIN_WORDS and shared == min(len(sa), len(sb)):
        return 1.0
    return shared / len(sa | sb)


def near_duplicate(a: str, b: str) -> bool:
    return similarity(a, b) >= JACCARD
