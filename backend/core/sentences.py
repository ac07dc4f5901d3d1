"""Quoting text from elsewhere (a server's error message) inside a sentence, punctuated once."""
from __future__ import annotations

import re

# A sentence mark, then any closing quotes or brackets: "Overloaded!", "(see the docs.)", "«Done.»"
_ENDED = re.compile(r"[.!?…。！？][\"'”’»)\]]*$")
_DANGLING = " \t\r\n,;:-–—"


def ended(text: str) -> str:
    """`text` stripped, ending with exactly one sentence mark: its own where it has one, else "."."""
    text = text.strip().rstrip(_DANGLING)
    if not text or _ENDED.search(text):
        return text
    return text + "."


def said(detail: str) -> str:
    """": <detail>" ended once (to follow "X failed"), or "." when there is no detail."""
    detail = ended(detail)
    return f": {detail}" if detail else "."
