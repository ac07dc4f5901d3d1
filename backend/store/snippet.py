"""A search hit's snippet: a short window of a message's text, with the hit ranges as offsets.

Made here rather than with FTS5's snippet(): that needs one index probe per result,
and a probe re-expands a prefix term's whole posting list (tens of milliseconds a
page on a large history). The window is plain text and the hits are offsets, so no
markup is ever produced — the client draws <mark> elements itself.

Words are letters and digits, folded as the index folds them (lower case, accents
removed), so what is highlighted is what FTS5 matched, give or take Unicode
edge cases (then a snippet simply has fewer highlights).
"""
from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left

WORD = re.compile(r"[^\W_]+")
WINDOW = 16  # words in a snippet
LEAD = 3  # words shown before the first hit of the window
LOOKAHEAD = 64  # words read past the first hit when looking for a better window
ELLIPSIS = "…"
EDGE = 12  # characters of punctuation kept before and after the window's words


def fold(word: str) -> str:
    if word.isascii():
        return word.lower()
    decomposed = unicodedata.normalize("NFD", word.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def words(text: str) -> list[str]:
    return [fold(w) for w in WORD.findall(text)]


class Phrase:
    """Folded words that must follow each other; the last may be a prefix."""

    def __init__(self, folded: list[str], prefix: bool):
        self.words, self.prefix = folded, prefix

    def ends(self, tokens: list[str], j: int) -> bool:
        """Whether the phrase's words end at token j (its last word already matched)."""
        start = j - len(self.words) + 1
        return start >= 0 and all(tokens[start + k] == w for k, w in enumerate(self.words[:-1]))


class _Finder:
    """Which phrases can end at a word: looked up by their last word, not tried one by one."""

    def __init__(self, phrases: list[Phrase]):
        self.phrases = phrases
        self.by_last: dict[str, list[int]] = {}
        self.by_prefix: list[tuple[str, int]] = []
        for n, p in enumerate(phrases):
            if p.prefix:
                self.by_prefix.append((p.words[-1], n))
            else:
                self.by_last.setdefault(p.words[-1], []).append(n)

    def hits_ending(self, tokens: list[str], j: int) -> list[tuple[int, int, int]]:
        word = tokens[j]
        found = self.by_last.get(word, [])
        if self.by_prefix:
            found = found + [n for pre, n in self.by_prefix if word.startswith(pre)]
        out = []
        for n in found:
            p = self.phrases[n]
            if p.ends(tokens, j):
                out.append((j - len(p.words) + 1, len(p.words), n))
        return out


# Markdown syntax a snippet shows without (replies are Markdown; a snippet is one line of
# plain text): what marks up a line, then what marks up words. Code and words stay.
_LINE_MARKS = [
    (re.compile(r"^[ \t]*(```|~~~).*$", re.M), ""),                    # code fences
    (re.compile(r"^[ \t]*([-*_][ \t]*){3,}$", re.M), ""),               # rules
    (re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$", re.M), ""),  # table rules
    (re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+|[ \t]+#+[ \t]*$", re.M), ""),  # headings
    (re.compile(r"^[ \t]*(>[ \t]?)+", re.M), ""),                        # quotes
    (re.compile(r"^[ \t]*([-*+]|\d{1,9}[.)])[ \t]+(\[[ xX]\][ \t]+)?", re.M), ""),  # list items, tasks
]
_WORD_MARKS = [
    (re.compile(r"!?\[([^\]\n]*)\]\([^)\s]*(?:\s+\"[^\"]*\")?\)"), r"\1"),  # links, images: their text
    (re.compile(r"<((?:https?|mailto):[^>\s]+)>"), r"\1"),             # autolinks
    (re.compile(r"\*\*|__|~~|`+"), ""),                                  # strong, strike, code
    (re.compile(r"(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])"), ""),          # *emphasis*
    (re.compile(r"(?<!\w)_(?=\S)|(?<=\S)_(?!\w)"), ""),                  # _emphasis_ (not snake_case)
    (re.compile(r"(?<=\S)[ \t]*\|[ \t]*(?=\S)|^[ \t]*\||\|[ \t]*$", re.M), " "),  # table cells
]


def plain(text: str) -> str:
    """The text without its Markdown syntax: what a reader sees, as one string."""
    for pattern, repl in _LINE_MARKS + _WORD_MARKS:
        text = pattern.sub(repl, text)
    return text


def make(text: str, phrases: list[Phrase]) -> tuple[str, list[list[int]]]:
    """(snippet, [[start, end], …]) of the text read as plain text (no Markdown syntax) —
    offsets count code points of the snippet (in JavaScript: indexes into Array.from(snippet))."""
    text = plain(text)
    finder = _Finder(phrases)
    spans, folded = [], []  # (start, end) of each word read, and its folded form
    hits: list[tuple[int, int, int]] = []  # (first word, words, phrase index)
    more = False
    stop = None  # words to read: enough past the first hit to find a better window
    for m in WORD.finditer(text):
        if stop is not None and len(spans) >= stop:
            more = True
            break
        spans.append(m.span())
        folded.append(fold(m.group()))
        found = finder.hits_ending(folded, len(folded) - 1)
        if found:
            hits.extend(found)
            if stop is None:
                stop = min(h[0] for h in found) + LOOKAHEAD + WINDOW
    if not spans:
        return " ".join(text.split())[:200], []
    # A hit near the end still gets a full window: it is moved back rather than cut short.
    start = max(0, min(_best_window(hits), len(spans) - WINDOW))
    end = min(len(spans), start + WINDOW)
    more = more or end < len(spans)
    return _cut(text, spans, start, end, more, [h for h in hits if h[0] >= start and h[0] + h[1] <= end])


def _best_window(hits: list[tuple[int, int, int]]) -> int:
    """The window start showing the most different phrases (then the most hits), earliest first."""
    hits = sorted(hits)
    firsts = [h[0] for h in hits]
    best, best_score = 0, (-1, -1)
    for first in dict.fromkeys(firsts):
        start = max(0, first - LEAD)
        lo, hi = bisect_left(firsts, start), bisect_left(firsts, start + WINDOW)
        inside = [h for h in hits[lo:hi] if h[0] + h[1] <= start + WINDOW]
        score = (len({h[2] for h in inside}), len(inside))
        if score > best_score:
            best, best_score = start, score
    return best


def _cut(text, spans, start, end, more, hits) -> tuple[str, list[list[int]]]:
    out: list[str] = []
    ranges: list[list[int]] = []
    if start > 0:
        out.append(ELLIPSIS)
    # Punctuation at the text's start and after the window's last word stays (an
    # opening quote, a closing full stop), within reason: never a block of symbols.
    base = spans[start][0] if start else max(0, spans[0][0] - EDGE)
    stop = min(spans[end][0] if end < len(spans) else len(text), spans[end - 1][1] + EDGE)
    piece = text[base:stop]
    marks: dict[int, int] = {}  # offset in piece → +1 opens a hit, -1 closes one
    for i, n, _p in hits:
        marks[spans[i][0] - base] = marks.get(spans[i][0] - base, 0) + 1
        close = spans[i + n - 1][1] - base
        marks[close] = marks.get(close, 0) - 1
    depth, opened = 0, 0  # opened: where the hit that is open began (set before any closes)
    for k, ch in enumerate(piece + " "):
        change = marks.get(k, 0)
        if change:
            was = depth
            depth += change
            if was == 0 and depth > 0:
                opened = len(out)
            elif was > 0 and depth <= 0:
                if ranges and ranges[-1][1] == opened:
                    ranges[-1][1] = len(out)
                else:
                    ranges.append([opened, len(out)])
                depth = 0
        if k == len(piece):
            break
        if ch.isspace():
            if out and out[-1] != " ":
                out.append(" ")
        else:
            out.append(ch)
    if out and out[-1] == " ":
        out.pop()
    if more:
        out.append(ELLIPSIS)
    return "".join(out), [r for r in ranges if r[1] > r[0]]
