"""What a file change looks like to the person: a unified diff, or a sentence saying why there is none.

The approval card shows it before a write runs and the tool row after. A diff is
worked out only where it is cheap and readable: text on both sides, each side
within MAX_BYTES and MAX_LINES (difflib's time grows with the product of the two
sides' lines), and the diff itself within MAX_DIFF_CHARS. Past that, or for a
binary file, a sentence says so instead.
"""
from __future__ import annotations

import difflib

MAX_BYTES = 512 * 1024
MAX_LINES = 5_000
MAX_DIFF_CHARS = 100_000
CONTEXT = 3  # unchanged lines around each change, as `diff -u` and git show
SNIFF_BYTES = 8192  # a NUL byte in here means binary, as git decides it
NO_NEWLINE = "\\ No newline at end of file"


def describe_change(path: str, old: bytes | None, new: bytes, old_size: int | None = None) -> str:
    """`old` (None: the file does not exist yet) becoming `new`, for the person to read.

    `old_size`: the file's whole size where `old` is only its start (a file past MAX_BYTES
    need not be read whole to be called too large)."""
    old_size = len(old) if old_size is None and old is not None else old_size
    too_large = max(old_size or 0, len(new)) > MAX_BYTES
    old_text, new_text = (None, None) if too_large else (_text(old), _text(new))
    if not too_large and ((old is not None and old_text is None) or new_text is None):
        return f"{path} is a binary file (it holds NUL bytes or is not UTF-8 text), so no diff is shown."
    old_lines, new_lines = ([], []) if too_large else (_lines(old_text or ""), _lines(new_text))
    if too_large or max(len(old_lines), len(new_lines)) > MAX_LINES:
        sizes = _size(len(new)) if old is None else f"{_size(old_size)} → {_size(len(new))}"
        return (f"{path} is too large to show as a diff ({sizes}; a diff is shown up to "
                f"{_size(MAX_BYTES)} and {MAX_LINES:,} lines).")
    if old is not None and old_text == new_text:
        return f"No change: {path} already holds exactly this content."
    diff = difflib.unified_diff(old_lines, new_lines, "/dev/null" if old is None else f"a/{path}",
                                f"b/{path}", n=CONTEXT)
    out, size, added, removed = [], 0, 0, 0
    for line in diff:
        if not line.endswith("\n"):  # a last line without its line end, marked as diff -u does
            line += "\n" + NO_NEWLINE + "\n"
        size += len(line)
        if line.startswith("+") and not line.startswith("+++ "):
            added += 1
        elif line.startswith("-") and not line.startswith("--- "):
            removed += 1
        out.append(line)
    if size > MAX_DIFF_CHARS:
        return (f"The diff of {path} is too long to show here ({added:,} lines added, {removed:,} removed; "
                f"a diff is shown up to {MAX_DIFF_CHARS:,} characters).")
    return "".join(out)


def _text(data: bytes | None) -> str | None:
    if data is None or b"\x00" in data[:SNIFF_BYTES]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _lines(text: str) -> list[str]:
    """Lines with their ends, split at \\n only (as the file tools count lines)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    return f"{n / 1024:.0f} KB" if n < 1024 * 1024 else f"{n / (1024 * 1024):.1f} MB"
