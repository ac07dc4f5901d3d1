"""Find the lines of a text that match a model's pattern: RE2 (linear time), in chunks, within a budget.

A pattern comes from a model, so it may be built to take forever: Python's `re`
backtracks, and `(=+)+x` over 40 `=` runs for hours while holding the GIL. RE2
never backtracks and releases the GIL while it matches, but its time per byte
still grows with the pattern when its DFA gives up, so the pattern's size is
capped, a text is matched in chunks of whole lines with `check()` between them
(Stop, the time budget), and a regex sees only the first chunk of a longer
line.

A text is first scanned whole, in multi-line mode and never across a newline,
for the next line that can match; that line alone is then matched the way the
tool promises (each line on its own, as grep does). Patterns whose meaning
depends on where the scanned text starts or ends (\\A, \\z, multi-line mode
switched off) skip the scan and match every line.
"""
from __future__ import annotations

import re
import time
from typing import Callable, Iterator

import re2

PATTERN_CHARS = 1_000
# RE2 instructions. Past a few thousand its DFA gives up on some patterns and the far slower NFA
# takes over; up to this size it stays fast (docs/BENCHMARKS.md).
PROGRAM_MAX = 1_000
# Matched between two check() calls (well under a second at worst), and what a regex sees of a
# longer line (a literal text, whose cost cannot grow, sees all of it).
CHUNK_BYTES = 256 * 1024
SEARCH_SECONDS = 10.0  # one search_files call
SEARCH_BYTES = 64 * 1024 * 1024  # of file content, one search_files call

RE2_LIMITS = ("Searches use RE2, which takes time linear in the text and so has no backreferences (\\1), "
              "lookahead or lookbehind ((?=, (?!, (?<=, (?<!), atomic groups or possessive repeats, "
              "and writes the end of a line as \\z (or $), not \\Z.")

# \A and \z, and a flag group switching multi-line off: with them a line's match depends on
# the text around it, so the whole-text scan could miss it. (A constant pattern, linear.)
_NEEDS_EACH_LINE = re.compile(r"\\[Az]|\(\?[imsU]*-[imsU]*m")


class PatternError(ValueError):
    """A pattern that cannot be searched with; the message says why and what to do."""


class Stopped(Exception):
    """The search must end now: cancelled, or out of time or bytes (`why`)."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


class Budget:
    """What one search may still spend: time and bytes, and whether the person pressed Stop."""

    def __init__(self, cancel):
        self.cancel = cancel
        self.seconds, self.max_bytes = SEARCH_SECONDS, SEARCH_BYTES
        self.deadline = time.monotonic() + self.seconds
        self.bytes = 0
        self.files = 0

    def check(self) -> None:
        """Raise Stopped when cancelled or out of time."""
        if self.cancel is not None and self.cancel.is_set():
            raise Stopped("cancelled")
        if time.monotonic() >= self.deadline:
            raise Stopped("time")

    def take(self, data: bytes) -> None:
        """Count one more file of `data` as searched; Stopped (not counted) when it does not fit."""
        if self.bytes + len(data) > self.max_bytes:
            raise Stopped("bytes")
        self.bytes += len(data)
        self.files += 1


def _options(ignore_case: bool) -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # RE2 would print each refused pattern on stderr
    options.never_nl = True  # a match never spans lines, as in a line-by-line search
    options.never_capture = True  # whether a line matches is all that is asked
    options.case_sensitive = not ignore_case
    return options


def _reason(exc: Exception) -> str:
    reason = exc.args[0] if exc.args else exc
    return reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)


class LineMatcher:
    """A model's pattern (a regex in RE2 syntax, or a literal text), matched line by line."""

    def __init__(self, pattern: str, regex: bool, ignore_case: bool):
        if len(pattern) > PATTERN_CHARS:
            raise PatternError(f"The pattern is {len(pattern)} characters long; the limit is {PATTERN_CHARS}. "
                               f"Search for a shorter piece of it.")
        source = pattern if regex else re2.escape(pattern)
        options = _options(ignore_case)
        try:
            self._line = re2.compile(source, options)
            each_line = regex and _NEEDS_EACH_LINE.search(pattern) is not None
            self._scan = None if each_line else re2.compile("(?m)" + source, options)
        except re2.error as exc:
            what = f"The regex {pattern!r} is not valid" if regex else f"The text {pattern!r} cannot be searched for"
            raise PatternError(f"{what}: {_reason(exc)}. {RE2_LIMITS} Fix it, or set regex to false to search "
                               f"for the text as written.")
        finally:
            # re2 keeps the last 128 compiled patterns, each with up to 8 MB of DFA memory: a model's
            # patterns are used for one call and must not stay behind.
            re2.purge()
        size = self._line.programsize
        if regex and size > PROGRAM_MAX:
            raise PatternError(f"The regex {pattern!r} is too complex to search with: it compiles to {size} "
                               f"steps, and the limit is {PROGRAM_MAX}. Use smaller repeat counts (such as "
                               f"{{1,50}} rather than {{1,1000}}) or fewer alternatives.")
        self.regex = regex
        self.chunk_bytes = CHUNK_BYTES
        self.cut_lines = 0  # lines longer than chunk_bytes, which a regex saw only the start of

    def lines(self, data: bytes, check: Callable[[], None]) -> Iterator[tuple[int, memoryview]]:
        """(line number, line) for each line of UTF-8 `data` that matches, numbered as editors do.

        Only \\n ends a line, and a \\r before it is not part of the line. `check()` runs before
        each chunk and may raise to end the search.
        """
        data = data.replace(b"\r\n", b"\n")
        if not data:
            return
        end = len(data)
        if data.endswith(b"\n"):
            end -= 1  # no empty line after the last \n
        elif data.endswith(b"\r"):
            end -= 1  # a last line ending in \r without a \n: the \r is a line end too
        view = memoryview(data)
        pos, number, counted = 0, 1, 0
        while pos <= end:
            check()
            chunk_end = limit = end
            if end - pos > self.chunk_bytes:
                chunk_end = limit = data.rfind(b"\n", pos, pos + self.chunk_bytes + 1)
                if chunk_end < 0:  # a line longer than a chunk is a chunk, and a regex sees its start
                    chunk_end = data.find(b"\n", pos, end)
                    chunk_end = limit = end if chunk_end < 0 else chunk_end
                    if self.regex:
                        limit = pos + self.chunk_bytes
                        while data[limit] & 0xC0 == 0x80:  # not inside a character
                            limit -= 1
                        self.cut_lines += 1
            for start, stop in self._candidates(data, view[:limit], pos):
                if self._line.search(view[start:stop]) is not None:
                    number += data.count(b"\n", counted, start)
                    counted = start
                    yield number, view[start:stop]
            pos = chunk_end + 1

    def _candidates(self, data: bytes, text: memoryview, pos: int) -> Iterator[tuple[int, int]]:
        """(start, end) of the lines in text[pos:] that may match; pos is a line's start.

        `text` is `data` up to the chunk's end, so that `$` matches there (the end may be a \\r).
        """
        limit = len(text)
        while pos <= limit:
            start = pos
            if self._scan is not None:
                found = self._scan.search(text, pos)
                if found is None:
                    return
                start = max(pos, data.rfind(b"\n", pos, found.start()) + 1)
            stop = data.find(b"\n", start, limit)
            stop = limit if stop < 0 else stop
            yield start, stop
            pos = stop + 1
