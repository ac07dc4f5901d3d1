"""Reading a JSON object's string values while its text is still arriving (a tool call's arguments).

`PartialObject(keys).feed(piece)` gives the new text of the watched keys' string values in the
order it arrived, every JSON escape decoded (`\\n`, `\\"`, `\\uXXXX`, surrogate pairs) wherever the
pieces were cut: inside an escape, or between a pair's two halves. Keys come in any order; the
values of other keys (numbers, objects, lists, strings) are skipped. A half pair without its
other half becomes U+FFFD, as `backend.core.text.well_formed` makes it, so the text read equals
what `json.loads` of the whole gives, made well-formed. A watched key whose value is not a string
is noted (`not_text`). Text that is not a JSON object, an escape JSON does not have, or a watched
key given twice (`json.loads` would keep the last, the reader showed the first) ends the reading
(`broken`): what was read stays, nothing more comes. Pure: no I/O, no clock.
"""
from __future__ import annotations

import re

_SPACE = re.compile(r"[ \t\r\n]*")
_PLAIN = re.compile(r'[^"\\]+')
_NESTED_PLAIN = re.compile(r'[^"\\{}\[\]]+')
_SCALAR = re.compile(r"[^,}\s\]]+")
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
REPLACEMENT = "\ufffd"

# Where the reader is: before the object; before a key (or the end); in a key; before the colon;
# before a value; in a string value; in a skipped object or list; in a skipped number or literal;
# after a value; after the object; stopped.
START, KEY_OR_END, KEY, COLON, VALUE, STRING, NESTED, SCALAR, AFTER, CLOSED, BROKEN = range(11)


class PartialObject:
    """The watched keys' string values of one JSON object, read piece by piece."""

    def __init__(self, keys):
        self.watched = frozenset(keys)
        self.values: dict[str, list[str]] = {}  # each watched key's text so far, in pieces
        self.ended: set[str] = set()  # watched keys whose string value is whole
        self.seen: set[str] = set()  # every key read so far, watched or not
        self.not_text: set[str] = set()  # watched keys whose value is not a string
        self._state = START
        self._key: list[str] = []
        self._name = ""  # the key whose value comes next
        self._target: str | None = None  # the watched key of the string being read (None: a key, or skipped)
        self._escape: str | None = None  # an escape begun: "" after the backslash, "u", "u1", … "u123"
        self._high: int | None = None  # a high surrogate waiting for its low half
        self._depth = 0  # nesting of a skipped object or list
        self._in_string = False  # inside a string of a skipped object or list
        self._skip_next = False  # after a backslash there

    @property
    def closed(self) -> bool:
        """The object's closing brace was read."""
        return self._state == CLOSED

    @property
    def broken(self) -> bool:
        return self._state == BROKEN

    def text(self, key: str) -> str:
        """The key's value so far ("" when none has come)."""
        pieces = self.values.get(key)
        if not pieces:
            return ""
        if len(pieces) > 1:
            pieces[:] = ["".join(pieces)]
        return pieces[0]

    def feed(self, piece: str) -> list[tuple[str, str]]:
        """Read the next piece; the watched values' new text as (key, text), in order."""
        out: list[tuple[str, str]] = []
        i, n = 0, len(piece)
        while i < n and self._state not in (CLOSED, BROKEN):
            i = self._step(piece, i, out)
        return out

    # --- the states ---------------------------------------------------------------------------

    def _step(self, piece: str, i: int, out: list) -> int:
        state = self._state
        if state in (STRING, KEY):
            return self._string(piece, i, out)
        if state == NESTED:
            return self._nested(piece, i)
        if state == SCALAR:
            m = _SCALAR.match(piece, i)
            if m is None:
                self._state = AFTER
                return i
            return m.end()
        i = _SPACE.match(piece, i).end()  # type: ignore[union-attr]  # matches the empty string too
        if i >= len(piece):
            return i
        c = piece[i]
        if state == START:
            return self._expect(c == "{", KEY_OR_END, i)
        if state == KEY_OR_END:
            if c == "}":
                self._state = CLOSED
                return i + 1
            self._key = []
            return self._expect(c == '"', KEY, i)
        if state == COLON:
            return self._expect(c == ":", VALUE, i)
        if state == AFTER:
            if c == "}":
                self._state = CLOSED
                return i + 1
            return self._expect(c == ",", KEY_OR_END, i)
        # VALUE
        watched = self._name in self.watched
        if c == '"':
            self._target = self._name if watched else None
            if watched:
                self.values.setdefault(self._name, [])
            self._state = STRING
            return i + 1
        if watched:
            self.not_text.add(self._name)
        if c in "{[":
            self._state, self._depth, self._in_string = NESTED, 1, False
            return i + 1
        self._state = SCALAR
        return i

    def _expect(self, ok: bool, then: int, i: int) -> int:
        self._state = then if ok else BROKEN
        return i + 1

    def _string(self, piece: str, i: int, out: list) -> int:
        """Read a key or a string value up to its closing quote or the piece's end."""
        got: list[str] = []
        n = len(piece)
        while i < n and self._state != BROKEN:
            if self._escape is not None:
                i = self._escaped(piece, i, got)
                continue
            c = piece[i]
            if c == '"':
                self._pair_end(got)
                i += 1
                self._string_done(got, out)
                return i
            if c == "\\":
                self._escape = ""
                i += 1
                continue
            m = _PLAIN.match(piece, i)
            assert m is not None  # c is neither a quote nor a backslash
            self._pair_end(got)
            got.append(m.group())
            i = m.end()
        self._keep(got, out)
        return i

    def _escaped(self, piece: str, i: int, got: list[str]) -> int:
        if self._escape == "":
            c = piece[i]
            if c == "u":
                self._escape = "u"
                return i + 1
            if c not in _ESCAPES:
                self._state = BROKEN
                return i
            self._escape = None
            self._pair_end(got)
            got.append(_ESCAPES[c])
            return i + 1
        assert self._escape is not None
        take = piece[i:i + 5 - len(self._escape)]
        self._escape += take
        i += len(take)
        if len(self._escape) < 5:
            return i
        digits, self._escape = self._escape[1:], None
        if not _HEX4.fullmatch(digits):
            self._state = BROKEN
            return i
        self._unit(int(digits, 16), got)
        return i

    def _unit(self, code: int, got: list[str]) -> None:
        """One \\uXXXX: a character, or half of a surrogate pair."""
        if 0xD800 <= code <= 0xDBFF:
            self._pair_end(got)
            self._high = code
        elif 0xDC00 <= code <= 0xDFFF:
            if self._high is None:
                got.append(REPLACEMENT)
            else:
                got.append(chr(0x10000 + ((self._high - 0xD800) << 10) + (code - 0xDC00)))
                self._high = None
        else:
            self._pair_end(got)
            got.append(chr(code))

    def _pair_end(self, got: list[str]) -> None:
        """Something other than a low half follows: a high half held is alone."""
        if self._high is not None:
            got.append(REPLACEMENT)
            self._high = None

    def _keep(self, got: list[str], out: list) -> None:
        if not got:
            return
        text = "".join(got)
        if self._state == KEY:
            self._key.append(text)
        elif self._target is not None:
            self.values[self._target].append(text)
            if out and out[-1][0] == self._target:
                out[-1] = (self._target, out[-1][1] + text)
            else:
                out.append((self._target, text))

    def _string_done(self, got: list[str], out: list) -> None:
        self._keep(got, out)
        if self._state == KEY:
            name = "".join(self._key)
            if name in self.watched and name in self.seen:
                self._state = BROKEN  # given twice: json.loads keeps the last, which was not shown
                return
            self.seen.add(name)
            self._name, self._state = name, COLON
            return
        if self._target is not None:
            self.ended.add(self._target)
        self._target, self._state = None, AFTER

    def _nested(self, piece: str, i: int) -> int:
        """Skip an object or list value, strings in it included."""
        n = len(piece)
        while i < n:
            if self._in_string:
                if self._skip_next:
                    self._skip_next = False
                    i += 1
                    continue
                m = _PLAIN.match(piece, i)
                if m is not None:
                    i = m.end()
                    continue
                c = piece[i]
                if c == "\\":
                    self._skip_next = True
                else:
                    self._in_string = False
                i += 1
                continue
            m = _NESTED_PLAIN.match(piece, i)
            if m is not None:
                i = m.end()
                continue
            c = piece[i]
            i += 1
            if c == '"':
                self._in_string = True
            elif c in "{[":
                self._depth += 1
            else:  # } or ]
                self._depth -= 1
                if self._depth == 0:
                    self._state = AFTER
                    return i
        return i
