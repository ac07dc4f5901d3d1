"""What an import adds: each chat of the file matched to the one an earlier import made from the
same source, and its new messages placed in that chat's tree, every link worked out before a
row is written.

A chat is known by its source (`chat.source_id`: "numi:<chat id>", "numi-v1:<chat id>",
"chatgpt:<conversation id>"), a message by its id within it (`message.source_id`).
Messages already here are never touched, whatever the person did to the chat since;
a message that is not here yet is added under its parent (docs/PROTOCOL.md, "Export
and import").
"""
from __future__ import annotations

from dataclasses import dataclass, field

from backend.store.db import db
from backend.store.import_read import ParsedChat
from backend.store.models import new_id


class Link:
    """Where a new message goes: its parent, depth, the child active under it, and its line
    (backend/store/lines.py) — all row ids."""
    __slots__ = ("parent", "depth", "child", "line", "exit")

    def __init__(self, parent: int | None, depth: int):
        self.parent, self.depth = parent, depth
        self.child: int | None = None
        self.line = 0
        self.exit = True


@dataclass
class Plan:
    """What one chat of the file becomes: a new chat, or the messages a chat here lacks."""
    chat: ParsedChat
    target: str | None  # the chat already here; None: a new chat
    known: dict[str, tuple[int, int]]  # source id -> (row id, depth) of its messages already here
    write_id: str = ""  # the hidden chat the rows are written to (a new chat's own id); "": none
    new: list[dict] = field(default_factory=list)  # messages to write, in the file's order
    ids: dict[str, int] = field(default_factory=dict)  # source id -> row id set aside for it
    links: dict[str, Link] = field(default_factory=dict)  # source id -> where it goes
    adopt: list[tuple[int, int]] = field(default_factory=list)  # (parent here that was a leaf, its child)

    def add(self, chat: ParsedChat) -> None:
        planned = {m["source_id"] for m in self.new}
        for m in chat.messages:
            if m["source_id"] not in self.known and m["source_id"] not in planned:
                self.new.append(m)
                planned.add(m["source_id"])

    def active_path(self) -> set[str]:
        """The source ids on the file's active branch."""
        parent_of = {m["source_id"]: m["source_parent"] for m in self.chat.messages}
        path, at = set(), self.chat.active
        while at is not None and at not in path:
            path.add(at)
            at = parent_of.get(at)
        return path

    def row_id(self, source_id: str | None) -> int | None:
        if source_id is None:
            return None
        return self.ids[source_id] if source_id in self.ids else self.known[source_id][0]


def plan(chats: list[ParsedChat]) -> tuple[list[Plan], int]:
    """The plans, and how many chats of the file were here already (or earlier in the file)."""
    plans: list[Plan] = []
    by_source: dict[str, Plan] = {}
    already = 0
    for chat in chats:
        p = by_source.get(chat.source_id) if chat.source_id else None
        if p is None:
            target = _imported_before(chat.source_id)
            p = Plan(chat, target, _known(target) if target else {})
            plans.append(p)
            if chat.source_id:
                by_source[chat.source_id] = p
        if p.target is not None or p.chat is not chat:
            already += 1
        p.add(chat)
    written = [p for p in plans if p.target is None or p.new]
    first = _reserve_ids(sum(len(p.new) for p in written))
    for p in written:
        p.write_id = new_id("c")
        p.ids = {m["source_id"]: first + k for k, m in enumerate(p.new)}
        first += len(p.new)
        place(p)
    return plans, already


def _imported_before(source_id: str | None) -> str | None:
    """The chat an earlier import made from this source, in the trash too (a chat the person
    deleted does not come back because the file is imported again)."""
    if source_id is None:
        return None
    row = db.execute_sql("SELECT id FROM chat WHERE source_id = ? AND import_id IS NULL ORDER BY rowid LIMIT 1",
                         (source_id,)).fetchone()
    return row[0] if row else None


def _known(chat_id: str) -> dict[str, tuple[int, int]]:
    rows = db.execute_sql("SELECT source_id, id, depth FROM message WHERE chat_id = ? AND source_id IS NOT NULL",
                          (chat_id,))
    return {source: (row_id, depth) for source, row_id, depth in rows}


def _reserve_ids(n: int) -> int:
    """The first of `n` message ids set aside for rows written later, in other transactions.

    message.id is AUTOINCREMENT: SQLite gives a new row one more than the greater of the
    largest id ever used (kept in sqlite_sequence) and the largest there now. Raising the
    former past the block keeps every other writer's rows above it. An import that fails
    leaves the block unused: a gap in the ids, nothing more."""
    with db.atomic():
        used = db.execute_sql("SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'message'), 0), "
                              "coalesce((SELECT max(id) FROM message), 0))").fetchone()[0]
        if not db.execute_sql("UPDATE sqlite_sequence SET seq = ? WHERE name = 'message'", (used + n,)).rowcount:
            db.execute_sql("INSERT INTO sqlite_sequence (name, seq) VALUES ('message', ?)", (used + n,))
    return used + 1


def place(p: Plan) -> None:
    """Each new message's link (`p.links`), and the messages here that gain their first child
    (`p.adopt`).

    The child active under a message is the one on the file's active branch, else the newest
    (the last in the file: ids follow the file's order). Lines follow lines.relink's rule among
    the new rows: a message continues its parent's line when it is the parent's first child
    and comes after it. Under a message already here a new one starts a line of its own: that
    parent may gain a child of the person's while the import runs, and two children must never
    both continue one line."""
    path = p.active_path()
    depth: dict[str, int] = {}
    parent_of = {m["source_id"]: m["source_parent"] for m in p.new}
    for start in parent_of:
        trail, at = [], start
        while at is not None and at not in depth and at not in p.known:
            trail.append(at)
            at = parent_of[at]
        d = -1 if at is None else depth[at] if at in depth else p.known[at][1]
        for source in reversed(trail):
            d += 1
            depth[source] = d
    p.links = {source: Link(p.row_id(parent), depth[source]) for source, parent in parent_of.items()}
    chosen: dict[str, str] = {}
    for source, parent in parent_of.items():  # in the file's order: the ids' order
        link = p.links[source]
        first = parent is not None and parent not in chosen
        if parent is not None and chosen.get(parent) not in path:
            chosen[parent] = source
        continues = first and parent in p.links and p.ids[parent] < p.ids[source]
        link.line = p.links[parent].line if continues else p.ids[source]
    for parent, child in chosen.items():
        if parent in p.links:
            link = p.links[parent]
            link.child = p.ids[child]
            link.exit = p.links[child].line != link.line
        else:
            p.adopt.append((p.known[parent][0], p.ids[child]))
