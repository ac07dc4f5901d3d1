"""Cutting a file's text into chunks of about 1 000 tokens, each with its locator."""
from __future__ import annotations

import re
from collections.abc import Iterable

from backend.features.knowledge.types import Chunk

# Tokens are counted as characters / 4: 800–1 200 tokens, aiming at 1 000, and ~10 % carried over.
MIN_CHARS = 3_200
TARGET_CHARS = 4_000
MAX_CHARS = 4_800
OVERLAP_CHARS = 400

_PARAGRAPH = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_SENTENCE = re.compile(r"[.!?…。！？][\"'”’)\]]*\s+")
_LINE = re.compile(r"\n")
_SPACE = re.compile(r"\s+")
_NONSPACE = re.compile(r"\S")
_MAX_INDENT = 256

# Where a cut may fall, best first: prose prefers a sentence end to a line end (lines are often
# hard-wrapped), code a line end (it has no sentences).
PROSE = (_PARAGRAPH, _SENTENCE, _LINE, _SPACE)
CODE = (_PARAGRAPH, _LINE, _SPACE)


def chunk_sections(sections: Iterable[tuple[str, dict]]) -> list[Chunk]:
    """Chunks of each (text, locator) section in order; no chunk crosses from one section into the next."""
    chunks = []
    for text, locator in sections:
        for start, end in spans(text, PROSE):
            chunks.append(Chunk(text[start:end], dict(locator)))
    return chunks


def chunk_lines(text: str, code: bool = False) -> list[Chunk]:
    """Chunks of a text or code file, each located by the 1-based first and last line it covers."""
    chunks = []
    line, counted = 1, 0  # the line number at offset `counted`; starts and ends only move forward
    end_line, end_counted = 1, 0
    for start, end in spans(text, CODE if code else PROSE, keep_indent=True):
        line += text.count("\n", counted, start)
        counted = start
        end_line += text.count("\n", end_counted, end - 1)
        end_counted = end - 1
        chunks.append(Chunk(text[start:end], {"lines": [line, end_line]}))
    return chunks


def spans(text: str, tiers: tuple[re.Pattern, ...] = PROSE, keep_indent: bool = False) -> list[tuple[int, int]]:
    """The (start, end) offsets of `text`'s chunks, trimmed of surrounding whitespace, overlapping by ~10 %."""
    result: list[tuple[int, int]] = []
    n = len(text)
    start = 0
    while True:
        first = _NONSPACE.search(text, start)
        if first is None:
            break
        start = first.start()
        if keep_indent:
            start = _line_start(text, start, result[-1][0] if result else -1)
        if n - start <= MAX_CHARS:
            result.append((start, len(text.rstrip())))
            break
        cut = _cut(text, start, first.start(), tiers)
        end = len(text[start:cut].rstrip()) + start
        result.append((start, end))
        if _NONSPACE.search(text, cut) is None:
            break
        overlap = _boundary(text, cut - OVERLAP_CHARS * 3 // 2, cut - OVERLAP_CHARS // 2, cut - OVERLAP_CHARS, tiers)
        start = overlap if overlap is not None and overlap > result[-1][0] else cut
    return result


def _line_start(text: str, at: int, after: int) -> int:
    """The start of `at`'s line when only indentation precedes `at` on it (and it lies past `after`), else `at`."""
    lo = max(0, at - _MAX_INDENT)
    newline = text.rfind("\n", lo, at)
    begin = newline + 1 if newline >= 0 else (0 if lo == 0 else at)
    return begin if begin > after and not text[begin:at].strip() else at


def _cut(text: str, start: int, first: int, tiers: tuple[re.Pattern, ...]) -> int:
    """Where the chunk that begins at `start` (its first character `first`) ends: the best boundary near the
    target size, never mid-word if avoidable."""
    found = _boundary(text, start + MIN_CHARS, start + MAX_CHARS, start + TARGET_CHARS, tiers)
    if found is not None:
        return found
    # No boundary where one is wanted: a shorter chunk beats cutting a word, unless the word is longer than a chunk.
    last_space = None
    for m in _SPACE.finditer(text, first + 1, start + MIN_CHARS):
        last_space = m.end()
    return last_space if last_space is not None else start + MAX_CHARS


def _boundary(text: str, lo: int, hi: int, target: int, tiers: tuple[re.Pattern, ...]) -> int | None:
    """The offset just after the best boundary in text[lo:hi]: the first tier that has one, nearest `target`."""
    lo = max(lo, 0)
    for pattern in tiers:
        best = None
        for m in pattern.finditer(text, lo, hi):
            if best is None or abs(m.end() - target) < abs(best - target):
                best = m.end()
            elif m.end() > target:
                break
        if best is not None:
            return best
    return None
