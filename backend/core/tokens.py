"""An offline token estimate: close to what BPE tokenizers count, with no vocabulary to download.

Tokenizers split text into pieces first (a word with its leading space, a run
of digits, a run of punctuation, a line break) and then into vocabulary
entries; common words are one entry, rare long ones several. The estimate
counts those pieces from a few character classes, which costs a handful of
regex scans in C instead of a vocabulary walk. It errs on the high side for
code and long words, which is the safe side for a context budget.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache

from backend.core.types import Message, ToolSpec

MESSAGE_FRAMING = 4  # role and separators every wire API adds around a message
REPLY_PRIMING = 3  # the assistant header a request ends with
IMAGE_TOKENS = 1000  # a typical image after the provider scales it (OpenAI ~765, Anthropic ~1 400)

_WORDS = re.compile(r"[A-Za-z]+")
_LONG_WORDS = re.compile(r"[A-Za-z]{7,}")
_DIGITS = re.compile(r"\d+")
_PUNCT = re.compile(r"[^\w\s]+")
_BREAKS = re.compile(r"\n+|[ \t]{2,}")
# Han, kana, Hangul and other scripts a tokenizer splits about one token per character.
_WIDE = re.compile(r"[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ffff]")
_OTHER_LETTERS = re.compile(r"[^\x00-\x7f\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff"
                            r"\U00020000-\U0002ffff\s]")


@lru_cache(maxsize=8192)
def estimate(text: str) -> int:
    """Tokens in `text`, estimated."""
    if not text:
        return 0
    if text.isascii():
        wide = other = 0
    else:
        wide = len(_WIDE.findall(text))
        other = len(_OTHER_LETTERS.findall(text))
    words = len(_WORDS.findall(text))
    # Words up to six letters are mostly one entry; longer ones about one per five letters more.
    long_extra = sum((len(w) - 2) // 5 for w in _LONG_WORDS.findall(text))
    digits = sum((len(d) + 2) // 3 for d in _DIGITS.findall(text))
    punct = sum((len(p) + 1) // 2 for p in _PUNCT.findall(text))
    breaks = len(_BREAKS.findall(text))
    # Other non-ASCII letters (accents, Cyrillic, emoji) take about a token per two characters.
    return words + long_extra + digits + punct + breaks + wide + (other + 1) // 2


def message_tokens(message: Message) -> int:
    """A message as any wire API frames it: its text, tool calls, images and framing."""
    n = MESSAGE_FRAMING + estimate(message.content)
    for call in message.tool_calls:
        n += MESSAGE_FRAMING + estimate(call.name) + estimate(call.arguments)
    return n + IMAGE_TOKENS * len(message.images)


def tools_tokens(tools: tuple[ToolSpec, ...] | list[ToolSpec]) -> int:
    """The tool definitions offered with a request."""
    if not tools:
        return 0
    return sum(MESSAGE_FRAMING + estimate(t.name) + estimate(t.description)
               + estimate(json.dumps(t.parameters, separators=(",", ":"))) for t in tools)


def system_tokens(text: str) -> int:
    return MESSAGE_FRAMING + estimate(text) if text else 0
