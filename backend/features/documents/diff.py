"""Two versions of a document as a unified diff (difflib), the shape the diff view draws (web/js/diff-view.js).

`--- a/<title>\\tversion A` / `+++ b/<title>\\tversion B` (`--- /dev/null` from nothing), then
`@@` hunks with 3 lines of context, a last line without its line end marked as `diff -u` marks
it. Lines are split at \\n only. The lines both versions share at the start and the end are set
aside first (an edit of a long document leaves most of it alike); what lies between is handed to
difflib's SequenceMatcher while each side of it stays within MIDDLE_MAX_LINES (its time grows
with the product of the two sides where lines repeat: a shuffled megabyte can take it half a
minute), and past that it is one hunk that removes the old middle and adds the new one, which is
still a correct diff, only not the shortest.
"""
from __future__ import annotations

import difflib
import re

CONTEXT = 3
MIDDLE_MAX_LINES = 20_000
NO_NEWLINE = "\\ No newline at end of file"
_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def lines(text: str) -> list[str]:
    """Lines with their ends, split at \\n only."""
    parts = text.split("\n")
    out = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def _same_ends(a: list[str], b: list[str]) -> tuple[int, int]:
    """How many lines the two texts share at their start, and then at their end."""
    shared = min(len(a), len(b))
    head = 0
    while head < shared and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < shared - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


def unified(old: str | None, new: str, name: str, old_version: int, new_version: int) -> tuple[str, int, int]:
    """The diff from `old` (None: no document yet) to `new`, and the counts of lines added and removed."""
    a, b = lines(old or ""), lines(new)
    head, tail = _same_ends(a, b)
    # Keep the context the hunks show around the middle; shift their line numbers back after.
    start = max(0, head - CONTEXT)
    a_mid, b_mid = a[start:len(a) - max(0, tail - CONTEXT)], b[start:len(b) - max(0, tail - CONTEXT)]
    label = " ".join(name.split()) or "document"
    out = ["--- /dev/null\n" if old is None else f"--- a/{label}\tversion {old_version}\n",
           f"+++ b/{label}\tversion {new_version}\n"]
    if max(len(a_mid), len(b_mid)) - min(head, CONTEXT) <= MIDDLE_MAX_LINES:
        body = difflib.unified_diff(a_mid, b_mid, n=CONTEXT)
        body_lines = list(body)[2:]  # its own header lines are replaced by ours
    else:
        body_lines = _one_hunk(a_mid, b_mid, head - start, tail - max(0, tail - CONTEXT))
    added = removed = 0
    for line in body_lines:
        if line.startswith("@@"):
            line = _shifted(line, start)
        elif line.startswith("+"):
            added += 1
        elif line.startswith("-"):
            removed += 1
        if not line.endswith("\n"):
            line += "\n" + NO_NEWLINE + "\n"
        out.append(line)
    if not added and not removed:
        return "", 0, 0
    return "".join(out), added, removed


def _one_hunk(a: list[str], b: list[str], before: int, after: int) -> list[str]:
    """The middles as one hunk: `before` and `after` lines of context around all of `a` removed and `b` added."""
    header = (f"@@ -{_range(0, len(a))} +{_range(0, len(b))} @@\n")
    return ([header] + [" " + line for line in a[:before]] + ["-" + line for line in a[before:len(a) - after]]
            + ["+" + line for line in b[before:len(b) - after]] + [" " + line for line in a[len(a) - after:]])


def _range(start: int, stop: int) -> str:
    """A hunk's range as `diff -u` writes it (difflib's own rule)."""
    beginning, length = start + 1, stop - start
    if length == 1:
        return f"{beginning}"
    if not length:
        beginning -= 1
    return f"{beginning},{length}"


def _shifted(header: str, by: int) -> str:
    """A hunk header with both start lines moved down `by` lines (the lines set aside before it)."""
    found = _HUNK.match(header)
    assert found is not None  # difflib writes every header so
    old_start, old_len, new_start, new_len = found.groups()
    return (f"@@ -{int(old_start) + by}{old_len or ''} +{int(new_start) + by}{new_len or ''} @@"
            + header[found.end():])


def changed(old: str, new: str) -> list[tuple[int, int]]:
    """The line ranges of `new` (0-based, end excluded) that differ from `old`: where lines were
    added or replaced, or an empty range where lines were only removed."""
    a, b = lines(old), lines(new)
    head, tail = _same_ends(a, b)
    a_mid, b_mid = a[head:len(a) - tail], b[head:len(b) - tail]
    if not a_mid and not b_mid:
        return []
    if max(len(a_mid), len(b_mid)) > MIDDLE_MAX_LINES:
        return [(head, len(b) - tail)]
    matcher = difflib.SequenceMatcher(None, a_mid, b_mid)
    return [(head + j1, head + j2) for tag, _i1, _i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
