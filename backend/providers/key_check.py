"""Whether an API key can travel in a request's header: checked when a key is saved and when it is sent."""
from __future__ import annotations


def key_problem(key: str) -> str | None:
    """Why `key` cannot be an API key (a sentence a person can act on), or None when it can.

    A key travels in an HTTP header (`Authorization: Bearer …`, `x-api-key`), where a
    line break or NUL would end or corrupt the request and anything but ASCII cannot
    be written at all: such a key would fail every request, so it is never kept.
    Every provider's keys are printable ASCII without spaces.
    """
    for char in key:
        if char in "\r\n":
            return "The key holds a line break. Paste the key alone, on one line."
        if char < " " or char == "\x7f":
            return (f"The key holds a control character (U+{ord(char):04X}). Copy the key again from "
                    f"the provider's page; it is made of letters, digits and punctuation only.")
        if char == " ":
            return "The key has a space inside it. Paste the key alone, without spaces."
        if char > "\x7e":
            return ("The key holds a character that is not plain ASCII. Copy the key again from the "
                    "provider's page; it is made of letters, digits and punctuation only.")
    return None
