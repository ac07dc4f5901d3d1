"""Full-text search over messages (the message_fts index of migration 4).

The query language is deliberately small: words, and "quoted phrases". Every
piece of what a person typed is handed to FTS5 inside double quotes, so its own
operators (AND, OR, NOT, NEAR, *, ^, -, column:) are only ever text to find and
no query can be a syntax error. All pieces must match; the last word is matched
as a prefix, so results follow typing.

Ranking is FTS5's bm25, bounded so that a query costs about the same on a huge
history as on a small one (docs/PROTOCOL.md, "Search"):
- a query matching more than CANDIDATES messages is ranked among its newest
  CANDIDATES matches (found newest first, which FTS5 does cheaply);
- bm25 reads the whole posting list of every phrase to weigh it, so a phrase in
  too many messages to weigh cheaply (estimated from the newest WINDOW messages)
  is left out of the weighing: it still has to match. Such a phrase is in so
  many messages that bm25 would give it almost no weight anyway. When every
  phrase is like that, the newest matches come first.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from backend.core.status import QUEUED
from backend.store import history, snippet

MIN_PREFIX = 2  # a one-letter prefix would match most of the index; it is matched as a word
MAX_TERMS = 32  # more words than anyone types; each costs a pass over its posting list
CANDIDATES = 500
WINDOW = 20_000
WEIGH_MAX = 100_000  # estimated messages holding a phrase, above which it is not weighed

_PIECES = re.compile(r'"([^"]*)("?)|([^\s"]+)')
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class Term:
    text: str
    words: tuple[str, ...]  # folded, as the index holds them
    phrase: bool  # typed inside closed quotes: matched exactly, never as a prefix
    prefix: bool = False

    def fts(self) -> str:
        return '"' + self.text.replace('"', '""') + '"' + ("*" if self.prefix else "")


@dataclass(frozen=True)
class Query:
    terms: tuple[Term, ...]

    @property
    def match(self) -> str:
        return " ".join(t.fts() for t in self.terms)

    def phrases(self) -> list[snippet.Phrase]:
        return [snippet.Phrase(list(t.words), t.prefix) for t in self.terms]


def parse(q: str) -> Query | None:
    """Words and quoted phrases (an unclosed quote runs to the end); None when nothing is searchable."""
    # Control characters separate words anyway, and a NUL inside a quoted string
    # would end it early for FTS5's parser: they become spaces.
    q = _CONTROL.sub(" ", q)
    terms: list[Term] = []
    seen: set[tuple] = set()
    for m in _PIECES.finditer(q):
        quoted, closed, word = m.group(1), m.group(2), m.group(3)
        text = word if word is not None else quoted
        words = tuple(snippet.words(text))
        if not words or (words, bool(closed)) in seen:
            continue  # only punctuation (nothing the index holds), or said already
        seen.add((words, bool(closed)))
        terms.append(Term(text, words, phrase=bool(closed)))
    if not terms:
        return None
    terms = terms[:MAX_TERMS]
    last = terms[-1]
    if not last.phrase and len(last.words[-1]) >= MIN_PREFIX:
        terms[-1] = Term(last.text, last.words, last.phrase, prefix=True)
    return Query(tuple(terms))


@dataclass(frozen=True)
class Filters:
    folder_id: str | None = None
    since: float | None = None  # epoch seconds, inclusive
    until: float | None = None  # epoch seconds, inclusive
    role: str | None = None

    def sql(self) -> tuple[str, list]:
        parts, params = [], []
        for column, op, value in (("c.folder_id", "=", self.folder_id), ("m.created_at", ">=", self.since),
                                  ("m.created_at", "<=", self.until), ("m.role", "=", self.role)):
            if value is not None:
                parts.append(f" AND {column} {op} ?")
                params.append(value)
        return "".join(parts), params

    def __bool__(self) -> bool:
        return any(v is not None for v in (self.folder_id, self.since, self.until, self.role))


_VISIBLE = "m.deleted_at IS NULL AND c.deleted_at IS NULL AND c.temporary = 0"
_ROW = ("SELECT m.id, m.chat_id, c.title, m.role, m.created_at, m.content, m.line_id, m.depth, m.status,"
        " c.active_leaf_id FROM message m JOIN chat c ON c.id = m.chat_id")


def search(db, query: Query, limit: int, filters: Filters = Filters()) -> list[dict]:
    """The best `limit` messages for `query`, best first, each with a snippet, its hit offsets
    and whether it is on its chat's active branch."""
    ranked = _ranked(db, query, filters)
    rows = _visible(db, ranked, limit, filters)
    active = _active(rows)
    phrases = query.phrases()
    out = []
    for message_id, chat_id, title, role, created_at, content, *_tree in rows:
        text, hits = snippet.make(content, phrases)
        out.append({"chat_id": chat_id, "message_id": message_id, "title": title or "", "role": role,
                    "created_at": created_at, "snippet": text, "highlights": hits,
                    "active": message_id in active})
    return out


def _active(rows: list[tuple]) -> set[int]:
    """The found messages on their chat's active branch. A queued message counts: it is
    shown after the branch, and joins it when its turn starts."""
    out: set[int] = set()
    by_leaf: dict[int | None, dict[int, tuple[int, int]]] = {}
    for message_id, _chat, _title, _role, _at, _content, line, depth, status, leaf in rows:
        if status == QUEUED:
            out.add(message_id)
        else:
            by_leaf.setdefault(leaf, {})[message_id] = (line, depth)
    for leaf, hits in by_leaf.items():
        out |= history.on_active_branch(leaf, hits)
    return out


def _ranked(db, query: Query, filters: Filters) -> list[int]:
    """Up to CANDIDATES matching message ids, best first; ties newest first."""
    newest = db.execute_sql("SELECT max(id) FROM message").fetchone()[0] or 0
    weighed = [t for t in query.terms if not _too_common(db, t, newest)]
    where, params = filters.sql()
    # Without filters, visibility is checked on the ranked page instead: a join per
    # match here would cost more than the few deleted or temporary chats it skips.
    source = ("message_fts f WHERE" if not filters else
              "message_fts f JOIN message m ON m.id = f.rowid JOIN chat c ON c.id = m.chat_id"
              f" WHERE {_VISIBLE}{where} AND")
    if len(weighed) == len(query.terms):
        # One pass, newest first: bm25 is computed only for the rows read.
        rows = db.execute_sql(f"SELECT f.rowid, f.rank FROM {source} message_fts MATCH ?"
                              " ORDER BY f.rowid DESC LIMIT ?", [*params, query.match, CANDIDATES]).fetchall()
        return [r[0] for r in sorted(rows, key=lambda r: r[1])]  # a stable sort keeps ties newest first
    candidates = [r[0] for r in db.execute_sql(
        f"SELECT f.rowid FROM {source} message_fts MATCH ? ORDER BY f.rowid DESC LIMIT ?",
        [*params, query.match, CANDIDATES])]
    if not weighed or not candidates:
        return candidates
    # Weigh the candidates by the other phrases. The unary + keeps SQLite from probing
    # the index once per candidate (each probe would re-read the phrases' posting
    # lists); instead their matches in the candidates' id range are read once, and
    # bm25 is computed for the candidates alone.
    scores = dict(db.execute_sql(
        "SELECT rowid, rank FROM message_fts WHERE message_fts MATCH ? AND rowid >= ?"
        " AND +rowid IN (SELECT value FROM json_each(?))",
        [" ".join(t.fts() for t in weighed), candidates[-1], json.dumps(candidates)]).fetchall())
    # rank is bm25 negated (lower is better); a stable sort keeps ties newest first.
    return sorted(candidates, key=lambda r: scores.get(r, 0.0))


# (database, term) → (newest message id when judged, too common?). Typing repeats the
# earlier words of a query with every letter, and how common a word is barely moves
# over a few hundred messages. Single dict reads and writes are atomic, so request
# threads share it; at worst two of them judge the same word.
_COMMON: dict[tuple[str, str], tuple[int, bool]] = {}
_COMMON_MAX = 1024
_COMMON_STALE = 1000  # messages written since a judgement before it is made again


def _too_common(db, term: Term, newest: int) -> bool:
    """Whether the term is in more than WEIGH_MAX messages, judged by the newest WINDOW ids."""
    if newest <= WEIGH_MAX:
        return False
    key = (db.database, term.fts())
    known = _COMMON.get(key)
    if known is not None and abs(newest - known[0]) < _COMMON_STALE:
        return known[1]
    found = db.execute_sql("SELECT count(*) FROM message_fts WHERE message_fts MATCH ? AND rowid > ?",
                           [term.fts(), newest - WINDOW]).fetchone()[0]
    common = found * newest / WINDOW > WEIGH_MAX
    if len(_COMMON) >= _COMMON_MAX:
        _COMMON.clear()
    _COMMON[key] = (newest, common)
    return common


def _visible(db, ranked: list[int], limit: int, filters: Filters) -> list[tuple]:
    """The first `limit` of the ranked ids whose message and chat are shown, in rank order."""
    where, params = filters.sql()
    out: list[tuple] = []
    at, step = 0, limit + 10
    while len(out) < limit and at < len(ranked):
        chunk = ranked[at:at + step]
        at += step
        marks = ",".join("?" * len(chunk))
        rows = {r[0]: r for r in db.execute_sql(f"{_ROW} WHERE m.id IN ({marks}) AND {_VISIBLE}{where}",
                                                [*chunk, *params])}
        out.extend(rows[i] for i in chunk if i in rows)
        step *= 4
    return out[:limit]
