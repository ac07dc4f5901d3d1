"""What reading a file gives the index: its title and its chunks, each with where it lies in the file."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field


class Unreadable(Exception):
    """The file cannot be indexed; `reason` is a sentence for the person (encrypted, unsupported, too big…)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Chunk:
    """A passage of a file, and its locator (CONTRACT §8): one of
    {"page": label, "page_index": n} (PDF, 0-based index), {"heading": "A > B"} (Markdown, HTML,
    DOCX, EPUB; "" before the first heading) or {"lines": [first, last]} (text and code, 1-based)."""
    text: str
    locator: dict
    hash: str = field(default="")

    def __post_init__(self):
        if not self.hash:
            # The passage's own text and place: a file changed elsewhere keeps this chunk's hash,
            # so only what changed is embedded again.
            digest = hashlib.sha256(repr((self.text, sorted(self.locator.items()))).encode()).hexdigest()
            object.__setattr__(self, "hash", digest[:32])


@dataclass(frozen=True)
class Parsed:
    """A file read whole: the title it gives itself (else its name) and its chunks in reading order."""
    title: str
    chunks: list[Chunk]
