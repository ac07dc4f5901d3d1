"""A model's natural-language query made into a small, safe FTS5 MATCH expression.

Every term is quoted, so FTS5's own syntax in the input (AND, OR, NOT, NEAR, *, ^, -, ", :,
parentheses, column filters) is only ever text to find and no query can be a syntax error.
Stop words and duplicates are dropped and the terms are capped: each OR'ed term costs a pass
over its posting list and a bm25 weighing of every chunk it is in, and a common word's list
holds most of the index (a raw 8-word question measured ~90 ms on a big base, cleaned ~2 ms).
"""
from __future__ import annotations

import re
import unicodedata

MAX_TERMS = 8
MAX_TERM_CHARS = 64  # longer "words" are hashes, base64 or noise; FTS5's porter leaves them unstemmed anyway

# Letters and digits, as FTS5's unicode61 tokenizer splits text (it treats "_" as a separator too).
WORD = re.compile(r"[^\W_]+")

STOP_WORDS = frozenset("""
a about above after again against all also am an and any are aren arent as at be because been before being
below between both but by can cannot could couldn did didn didnt do does doesn doesnt doing don dont down
during each either else etc ever every few for from further get gets got had hadn has hasn hasnt have haven
havent having he her here hers herself him himself his how however i if in into is isn isnt it its itself
just ll let lets like may me might more most much must mustn my myself no nor not now of off on once only
or other others ought our ours ourselves out over own per please re same shall shan she should shouldn so
some such than that thats the their theirs them themselves then there theres these they this those though
through thus to too under until up upon us ve very via was wasn wasnt we were weren what whats when where
whether which while who whom whose why will with within without won would wouldn yet you your yours
yourself yourselves
""".split())


def fold(word: str) -> str:
    """Lower case without accents: how the index's tokenizer compares words."""
    word = word.lower()
    if word.isascii():
        return word
    return "".join(ch for ch in unicodedata.normalize("NFD", word) if not unicodedata.combining(ch))


def terms(q: str, max_terms: int = MAX_TERMS) -> list[str]:
    """The query's useful words, folded, deduplicated, at most `max_terms`, in the order written."""
    found: dict[str, int] = {}  # folded word → how rare it looks (higher is kept first)
    for m in WORD.finditer(q):
        raw = m.group()
        word = fold(raw)
        if word in found or word in STOP_WORDS or len(word) > MAX_TERM_CHARS:
            continue
        if len(word) == 1 and not word.isdigit():
            continue  # what is left of "it's" or "don't", or an initial: in most chunks
        # Long words, and words with digits or inner capitals (versions, codes, CamelCase,
        # acronyms), are the rare ones a search needs most.
        rare = len(word) + 3 * any(ch.isdigit() for ch in raw) + 3 * any(ch.isupper() for ch in raw[1:])
        found[word] = rare
    kept = sorted(found, key=lambda w: -found[w])[:max(0, max_terms)]  # a stable sort: ties in written order
    keep = set(kept)
    return [w for w in found if w in keep]


def phrase(word: str) -> str:
    """A word as an FTS5 string: only ever text to find."""
    return '"' + word.replace('"', '""') + '"'


def any_of(words: list[str]) -> str:
    """The MATCH expression for chunks holding at least one of the words."""
    return " OR ".join(phrase(w) for w in words)


def all_of(words: list[str]) -> str:
    """The MATCH expression for chunks holding every one of the words."""
    return " AND ".join(phrase(w) for w in words)


def clean_query(q: str, max_terms: int = MAX_TERMS) -> str | None:
    """The MATCH expression for a natural-language query (its terms quoted and OR'ed), or None
    when it holds no usable word."""
    words = terms(q, max_terms)
    return any_of(words) if words else None
