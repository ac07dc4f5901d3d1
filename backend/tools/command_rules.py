"""Which shell command lines may get an "allow always" rule, and when a rule applies.

A standing rule is a promise about one exact command that a person read and
judged harmless, so it must not stretch to cover anything else:

- Matching is exact: only ASCII spaces, tabs and newlines around the line
  are trimmed (str.strip would also drop a no-break or ideographic space,
  which the shell passes on as part of the last argument). A prefix rule
  `ls` would also match `ls; rm -rf ~`, and `git status` says nothing about
  `git status && git push --force`.
- A line is only eligible when what it runs is visible in its text. Chaining
  (`;`, `&&`, `||`, `&`), pipes, redirects, here-docs, subshells and command
  or process substitution bolt a second command (or a file write) onto the
  harmless one; variable expansion makes the same text run differently
  depending on the environment; newlines and control characters hide a second
  line. All of these are refused, so such a command is approved each time.

Quoting is understood: `echo 'a;b'` and `grep -n "x|y" f` are one plain
command, but `echo "$(id)"` still substitutes inside double quotes. When in
doubt the answer is no: a refused rule costs one more approval click, a wrong
one runs an unseen command unasked.
"""
from __future__ import annotations

import shlex

# Unquoted, each of these starts an operator: a list, pipe, background job,
# redirect, subshell or process substitution.
_OPERATOR_CHARS = set(";&|<>()")
# In double quotes a backslash escapes only these; elsewhere it is literal.
_DQUOTE_ESCAPABLE = set('$`"\\\n')
# What is trimmed around a command line before it is stored or compared, and nothing else.
TRIMMED = " \t\n"


def trimmed(command: str) -> str:
    """The command line as a rule stores and compares it."""
    return command.strip(TRIMMED)


def standing_rule_allowed(command: str) -> bool:
    """Whether an "allow always" rule may be stored for exactly this command line."""
    line = trimmed(command)
    if not line or any(not ch.isprintable() and ch not in " \t" for ch in line):
        # Newlines and control characters can hide a second command; Unicode spaces and
        # invisible characters make a line look like another on the approval card.
        return False
    return _plain_by_scan(line) and _plain_by_shlex(line)


def rule_matches(rule: str, command: str) -> bool:
    """Whether a stored rule covers this command: the same line, never a prefix or a pattern."""
    if not standing_rule_allowed(rule):
        return False  # a rule that could never have been stored covers nothing
    return trimmed(rule) == trimmed(command)


def _plain_by_scan(line: str) -> bool:
    """A quote-aware scan: no operator, substitution or expansion outside single quotes."""
    quote = None  # None, "'" or '"'
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if quote == "'":
            if ch == "'":
                quote = None
        elif ch == "\\":
            if i + 1 >= n:
                return False  # a trailing backslash continues onto a line we cannot see
            if quote is None or line[i + 1] in _DQUOTE_ESCAPABLE:
                i += 1  # the next character is literal
        elif ch == "`":
            return False
        elif ch == "$":
            if not _literal_dollar(line, i, quote):
                return False
        elif quote == '"':
            if ch == '"':
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in _OPERATOR_CHARS:
            return False
        i += 1
    return quote is None


def _literal_dollar(line: str, i: int, quote: str | None) -> bool:
    """Whether the `$` at i is just a dollar sign (end of a word), not an expansion."""
    after = line[i + 1:i + 2]
    if after in ("", " ", "\t"):
        return True
    return quote == '"' and after == '"'  # "price$" ends the quoted word


def _plain_by_shlex(line: str) -> bool:
    """Cross-check with shlex: the line must tokenise (balanced quotes, no dangling escape)."""
    # shlex cannot tell a quoted `';'` from a bare `;` (posix mode drops the
    # quotes, non-posix mode splits `--format="a;b"` wrongly), so operators are
    # the scan's call; shlex independently confirms the quoting is well formed.
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = False
    lexer.commenters = ""  # a `#` must not hide the rest of the line
    try:
        return bool(list(lexer))
    except ValueError:
        return False
