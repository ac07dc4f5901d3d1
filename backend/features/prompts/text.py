"""What a prompt's text means: its `{{variables}}` and the shape of its `/command` (CONTRACT §12).

web/js/prompts.js reads placeholders by the same rule; tests/fixtures/prompt-variables.json
holds the cases both sides are held to.
"""
from __future__ import annotations

import re

NAME_MAX = 100
COMMAND_MAX = 32
CONTENT_MAX = 20_000
VARIABLES_MAX = 20
VARIABLE_MAX = 40  # characters of one placeholder's name

COMMAND = re.compile(r"[a-z0-9-]{1,32}")
# `{{name}}`, spaces allowed inside the braces: a name starts and ends with a letter, digit or _,
# and may hold spaces and hyphens between ("{{target language}}").
PLACEHOLDER = re.compile(r"\{\{ *(\w(?:[\w -]{0,%d}\w)?) *\}\}" % (VARIABLE_MAX - 2))


def variables(content: str) -> list[str]:
    """The placeholders' names in the order they first appear, each once."""
    return list(dict.fromkeys(m.group(1) for m in PLACEHOLDER.finditer(content)))


def command_problem(command: str) -> str | None:
    """Why `command` cannot name a prompt, as a sentence; None when it can."""
    if command.startswith("/"):
        return f"Give the command without its slash: {command.lstrip('/')[:COMMAND_MAX]!r}."
    if len(command) > COMMAND_MAX:
        return f"Must be at most {COMMAND_MAX} characters (it has {len(command)})."
    if not COMMAND.fullmatch(command):
        return ("Use only lowercase letters a–z, digits and hyphens, like summarize or fix-grammar "
                "(no spaces or capitals).")
    return None
