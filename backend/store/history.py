"""Named operations on a chat's message tree: the one place the turn engine reads or writes messages.

A chat's messages form a tree by `parent_id`; what the person sees and what the
model is sent is one path through it, the active branch, which ends at
`chat.active_leaf_id`. Each message remembers the child that was on the active
branch when it last was (`active_child_id`), so switching to a version returns
to the leaf the person left there. Nothing here deletes a sent message: edit and
regenerate add siblings. Queued messages wait outside the tree (no parent) until
their turn starts.
"""
from __future__ import annotations

import json
from collections import defaultdict
from types import SimpleNamespace
from typing import Any, NamedTuple, Sequence

from peewee import ForeignKeyField, fn

from backend.core.status import COMPLETE, INTERRUPTED, QUEUED, STREAMING
from backend.store import lines
from backend.store.db import db, now
from backend.store.models import Chat, JsonText, Message

NO_LIMIT = 1 << 62
Row = Message  # a stored message as the engine gets it (a peewee row)


class NotInChat(LookupError):
    """The message is not one of this chat's (or was discarded)."""


# --- reading ----------------------------------------------------------------------------

def active_leaf(chat_id: str) -> int | None:
    row = db.execute_sql("SELECT active_leaf_id FROM chat WHERE id = ?", (chat_id,)).fetchone()
    return row[0] if row else None


def message(chat_id: str, message_id: int) -> Message:
    """One live message of the chat, or NotInChat."""
    row = Message.get_or_none((Message.id == message_id) & (Message.chat == chat_id)
                              & Message.deleted_at.is_null())
    if row is None:
        raise NotInChat(message_id)
    return row


class Record(SimpleNamespace):
    """A message read for showing or sending: the model's attributes, without a model's cost.

    Building peewee rows took most of a page's time, far more than the SQL itself
    (docs/BENCHMARKS.md); a branch is read often and never saved back through these.
    The values are the columns as SQLite returns them, JSON decoded: booleans are 0 or 1.
    """
    id: int
    chat_id: str
    role: str
    content: str
    content_parts: Any
    reasoning_content: str
    reasoning_details: Any
    tool_calls: Any
    tool_call_id: str | None
    citation_sources: Any
    status: str
    model_id: str | None
    usage: Any
    error: Any
    request_id: str | None
    tool_error: int
    parent_id: int | None
    active_child_id: int | None
    depth: int
    line_id: int | None
    line_exit: int
    source_id: str | None
    plan: Any
    created_at: float
    deleted_at: float | None


# A message's attributes read either way: as a peewee row or as a Record.
AnyRow = Message | Record


# column name -> (attribute, JSON-decoded)
_COLUMNS = {f.column_name: (f.name if not isinstance(f, ForeignKeyField) else f.column_name,
                            isinstance(f, JsonText)) for f in Message._meta.sorted_fields}


def _records(sql: str, args) -> list[Record]:
    cursor = db.execute_sql(sql, args)
    return _to_records(cursor.fetchall(), cursor.description)


def _to_records(rows, description) -> list[Record]:
    if not rows:
        return []
    names = [_COLUMNS[d[0]] for d in description]
    out = []
    for values in rows:
        fields = {}
        for (name, is_json), value in zip(names, values):
            fields[name] = json.loads(value) if is_json and value is not None else value
        out.append(Record(**fields))
    return out


def path(start_id: int | None, limit: int | None = None) -> list[Record]:
    """The messages from the root to `start_id` on its branch (only the last `limit` of them)."""
    if start_id is None or (limit is not None and limit <= 0):
        return []
    rows, description = lines.up(start_id, NO_LIMIT if limit is None else limit, "*")
    rows.reverse()
    return _to_records(rows, description)


def path_ids(start_id: int | None) -> list[int]:
    """The ids from the root to `start_id`."""
    if start_id is None:
        return []
    rows, _ = lines.up(start_id, NO_LIMIT, "id")
    return [r[0] for r in reversed(rows)]


def leaf_under(message_id: int) -> int:
    """The leaf that was active last under the message (the message itself when it has no children)."""
    return lines.leaf_under(message_id)


def branch_page(chat_id: str, limit: int, before: int | None = None,
                through: int | None = None) -> tuple[list[Record], bool]:
    """A page of a branch, root side first, and whether older messages remain above it.

    The active branch by default; `through` names a message whose branch (down to the
    leaf last active under it) is read instead, without making it active. `before` ends
    the page just above that message on its own branch.
    """
    if before is not None:
        start = message(chat_id, before).parent_id
    elif through is not None:
        message(chat_id, through)
        start = leaf_under(through)
    else:
        start = active_leaf(chat_id)
    rows = path(start, limit + 1)
    return rows[-limit:] if limit else [], len(rows) > limit


def branch_of(chat_id: str) -> list[Record]:
    """The whole active branch, root first (exports and the inspector; a turn reads less)."""
    return path(active_leaf(chat_id))


class RequestRow(NamedTuple):
    """The columns of a stored message that a model request needs."""
    id: int
    role: str
    content: str
    content_parts: Any
    reasoning_content: str
    reasoning_details: Any
    tool_calls: Any
    tool_call_id: str | None
    tool_error: bool
    model_id: str | None
    depth: int  # how many messages are above it on its branch


# Plain tuples rather than peewee model rows: building the model objects cost several times
# the query itself (docs/BENCHMARKS.md), and this runs before every model step.
_REQUEST_COLUMNS = ("id, role, content, content_parts_json, reasoning_content, reasoning_details_json, "
                    "tool_calls_json, tool_call_id, tool_error, model_id, depth")


def _json(value):
    return None if value is None else json.loads(value)


def request_rows(chat_id: str, leaf_id: int | None = None, newest: int | None = None) -> list[RequestRow]:
    """The newest `newest` messages of the active branch (or of the branch ending at `leaf_id`), in order."""
    leaf = active_leaf(chat_id) if leaf_id is None else leaf_id
    if leaf is None:
        return []
    rows, _ = lines.up(leaf, NO_LIMIT if newest is None else newest, _REQUEST_COLUMNS)
    return [RequestRow(i, role, content or "", _json(parts), reasoning or "", _json(details), _json(calls),
                       call_id, bool(tool_error), model_id, depth)
            for i, role, content, parts, reasoning, details, calls, call_id, tool_error, model_id, depth
            in reversed(rows)]


def by_ids(ids) -> dict[int, Message]:
    ids = list(ids)
    return {r.id: r for r in Message.select().where(Message.id.in_(ids))} if ids else {}


def queued(chat_id: str) -> list[Record]:
    """The user messages waiting for the running turn, oldest first."""
    # Queued rows have no parent yet: the tree index finds them among the chat's roots
    # instead of reading every row of a long chat.
    return _records(f"SELECT * FROM message WHERE chat_id = ? AND parent_id IS NULL AND status = '{QUEUED}' "
                    "AND deleted_at IS NULL ORDER BY id", (chat_id,))


def by_request(chat_id: str, request_id: str) -> Message | None:
    return Message.get_or_none((Message.chat == chat_id) & (Message.request_id == request_id))


def turn_user_message(row: AnyRow) -> Record | None:
    """The user message whose turn the message belongs to: the nearest user message above it."""
    for limit in (16, None):  # a turn is usually a few messages long: look near first
        above = path(row.parent_id, limit)
        for candidate in reversed(above):
            if candidate.role == "user":
                return candidate
        if limit is None or len(above) < limit:
            return None
    return None


def latest_reply(chat_id: str) -> Message | None:
    """The newest assistant message of the chat on any branch (what a stored snapshot shows)."""
    return (Message.select().where((Message.chat == chat_id) & (Message.role == "assistant")
                                   & Message.deleted_at.is_null())
            .order_by(Message.id.desc()).first())


def versions(rows: Sequence[AnyRow]) -> dict[int, dict]:
    """Each row's `versions` (CONTRACT §5): its siblings of the same role, oldest first."""
    if not rows:
        return {}
    chat_id = rows[0].chat_id
    parents = {r.parent_id for r in rows if r.parent_id is not None}
    live = f"deleted_at IS NULL AND status != '{QUEUED}'"
    found: list[tuple] = []
    # No ORDER BY: with one, SQLite reads the chat's rows in id order instead of the tree index.
    if parents:
        marks = ",".join("?" * len(parents))
        found += db.execute_sql(f"SELECT id, parent_id, role FROM message WHERE chat_id = ? "
                                f"AND parent_id IN ({marks}) AND {live}", (chat_id, *parents)).fetchall()
    if any(r.parent_id is None for r in rows):
        found += db.execute_sql(f"SELECT id, parent_id, role FROM message WHERE chat_id = ? "
                                f"AND parent_id IS NULL AND {live}", (chat_id,)).fetchall()
    found.sort()
    groups: dict[tuple, list[int]] = defaultdict(list)
    for row_id, parent_id, role in found:
        groups[(parent_id, role)].append(row_id)
    out = {}
    for r in rows:
        ids = groups.get((r.parent_id, r.role)) or [r.id]
        if r.id not in ids:  # a queued message: outside the tree
            ids = [r.id]
        out[r.id] = {"index": ids.index(r.id) + 1, "count": len(ids), "ids": ids}
    return out


def tree(chat_id: str, after: int = 0, limit: int | None = None, text_chars: int | None = None) -> list[Message]:
    """The chat's messages that are in the tree, in id order: those after id `after`, at most
    `limit`; `text_chars`: only that much of each one's text is read (a preview's worth)."""
    text = Message.content if text_chars is None else fn.substr(Message.content, 1, text_chars).alias("content")
    query = (Message.select(Message.id, Message.parent_id, Message.role, Message.status, Message.model_id,
                            Message.created_at, text, Message.content_parts)
             .where((Message.chat == chat_id) & Message.deleted_at.is_null() & (Message.status != QUEUED)
                    & (Message.id > after))
             .order_by(Message.id))
    return list(query if limit is None else query.limit(limit))


# --- writing ----------------------------------------------------------------------------

def append(chat_id: str, parent_id: int | None, **fields) -> Message:
    """A new message under `parent_id` that ends the active branch."""
    with db.atomic():
        depth = 0
        if parent_id is not None:
            depth = Message.select(Message.depth).where(Message.id == parent_id).scalar() + 1
        old_leaf = active_leaf(chat_id)
        row = Message.create(chat=chat_id, parent_id=parent_id, depth=depth, **fields)
        if parent_id is not None and parent_id != old_leaf:
            # A version under a message off the end of the branch: the branch now runs through it.
            _point_at(chat_id, parent_id, old_leaf)
        _link(chat_id, parent_id, row.id)
    return row


def append_to_branch(chat_id: str, **fields) -> Message:
    """A new message at the end of the active branch."""
    return append(chat_id, active_leaf(chat_id), **fields)


def append_beside(chat_id: str, parent_id: int, **fields) -> Message:
    """A new message under `parent_id` that leaves the active branch where it is, unless it ends at
    `parent_id` (then the message extends it): a compare's other replies grow beside the active one."""
    with db.atomic():
        leaf = active_leaf(chat_id)
        row = append(chat_id, parent_id, **fields)
        if leaf is not None and leaf != parent_id:
            switch(chat_id, leaf)
    return row


def enqueue(chat_id: str, **fields) -> Message:
    """A user message that waits for the running turn, outside the tree until its turn starts."""
    return Message.create(chat=chat_id, status=QUEUED, **fields)


def attach(chat_id: str, message_id: int) -> Message | None:
    """A queued message placed at the end of the active branch as sent; None if it was discarded."""
    with db.atomic():
        row = Message.get_or_none((Message.id == message_id) & (Message.chat == chat_id)
                                  & Message.deleted_at.is_null())
        if row is None:
            return None
        parent_id = active_leaf(chat_id)
        if parent_id == row.id:
            return row
        depth = 0 if parent_id is None else Message.select(Message.depth).where(Message.id == parent_id).scalar() + 1
        Message.update(parent_id=parent_id, depth=depth, status=COMPLETE).where(Message.id == row.id).execute()
        _link(chat_id, parent_id, row.id)
        row.parent_id, row.depth, row.status = parent_id, depth, COMPLETE
    return row


def discard_queued(ids) -> None:
    """Queued messages the person dropped before they were sent (hidden, never in the tree)."""
    ids = list(ids)
    if ids:
        with db.atomic():
            Message.update(deleted_at=now()).where(Message.id.in_(ids) & (Message.status == QUEUED)).execute()


def _check_in_tree(chat_id: str, message_id: int) -> None:
    found = db.execute_sql("SELECT 1 FROM message WHERE id = ? AND chat_id = ? AND deleted_at IS NULL "
                           f"AND status != '{QUEUED}'", (message_id, chat_id)).fetchone()
    if found is None:
        raise NotInChat(message_id)


def switch(chat_id: str, message_id: int) -> int:
    """Make the active branch run through the message, to the leaf last active under it; the leaf's id."""
    # Which version is shown is no message: a power cut that loses the newest switch loses
    # nothing written, so its commit need not wait for the disk (WAL's NORMAL), which was
    # most of a switch's time. Set on this connection for this one transaction.
    relaxed = not db.in_transaction()
    if relaxed:
        db.execute_sql("PRAGMA synchronous = NORMAL")
    try:
        with db.atomic():
            _check_in_tree(chat_id, message_id)
            leaf = lines.leaf_under(message_id)
            # Above the point where the message's branch meets the active one every pointer is
            # right already; below it, each message now points at the child on this branch.
            _point_at(chat_id, message_id, active_leaf(chat_id))
            db.execute_sql("UPDATE chat SET active_leaf_id = ? WHERE id = ?", (leaf, chat_id))
    finally:
        if relaxed:
            db.execute_sql("PRAGMA synchronous = FULL")
    return leaf


def _point_at(chat_id: str, message_id: int, old_leaf: int | None) -> None:
    """Every message above `message_id` points down its branch (below where it meets the old one)."""
    target = lines.chain(message_id)
    lines.point_along(target, lines.meeting(target, lines.chain(old_leaf)) if old_leaf is not None else None)


def _link(chat_id: str, parent_id: int | None, child_id: int) -> None:
    lines.link_child(parent_id, child_id)
    Chat.update(active_leaf_id=child_id).where(Chat.id == chat_id).execute()


def save(message_id: int, **fields) -> None:
    """A message's new fields (its final form, a status, an error)."""
    Message.update(**fields).where(Message.id == message_id).execute()


def save_partial(message_id: int, content: str, reasoning: str, sources: list | None = None,
                 sources_from: int | None = None) -> bool:
    """Text streamed so far, and the turn's `sources` when given (taken off `sources_from`, the row
    that held them); only while the row still streams, so a late flush never undoes its final form.
    Whether it was written."""
    fields: dict[str, Any] = {"content": content, "reasoning_content": reasoning}
    if sources is not None:
        fields["citation_sources"] = sources
    with db.atomic():
        n = Message.update(**fields).where((Message.id == message_id) & (Message.status == STREAMING)).execute()
        if n and sources is not None and sources_from is not None and sources_from != message_id:
            Message.update(citation_sources=None).where(Message.id == sources_from).execute()
    return bool(n)


def end_streaming(message_id: int, **fields) -> None:
    """How a row left streaming ended (a failed commit, a crash, a stop before any output)."""
    Message.update(**fields).where((Message.id == message_id) & (Message.status == STREAMING)).execute()


def recover_after_crash() -> int:
    """Rows a dead process left mid-write: streaming ones become `interrupted`, and each tool
    call of theirs left without a result gets one (status `interrupted`: a question or an
    approval that was waiting never got its answer); queued ones join their chat's branch as
    sent (interrupted, so Continue answers them). How many rows were marked."""
    with db.atomic():
        cut = list(Message.select(Message.id, Message.chat, Message.depth, Message.tool_calls)
                   .where((Message.status == STREAMING) & Message.tool_calls.is_null(False)))
        n = Message.update(status=INTERRUPTED).where(Message.status == STREAMING).execute()
        for row in cut:
            _close_unanswered_calls(row)
        for row in (Message.select(Message.id, Message.chat).where((Message.status == QUEUED)
                                                                   & Message.deleted_at.is_null())
                    .order_by(Message.id)):
            attach(row.chat_id, row.id)
            save(row.id, status=INTERRUPTED)
            n += 1
    return n


def _close_unanswered_calls(row: Message) -> None:
    """Give each call of `row` without a result one, below its results so far."""
    leaf = lines.leaf_under(row.id)
    depth = Message.select(Message.depth).where(Message.id == leaf).scalar()
    below = path(leaf, limit=depth - row.depth)
    answered = {r.tool_call_id for r in below if r.role == "tool"}
    for call in row.tool_calls or []:
        if call.get("id") in answered:
            continue
        leaf = append(row.chat_id, leaf, role="tool", tool_call_id=call.get("id"), tool_error=True,
                      status=INTERRUPTED,
                      content=f"{call.get('name') or 'The tool'} did not run to completion: "
                              f"Numi was closed before it finished.").id


def reply_usages(chat_id: str) -> list[dict]:
    """The usage of every reply of the chat, on every branch."""
    return [r.usage for r in Message.select(Message.usage).where(
        (Message.chat == chat_id) & (Message.role == "assistant") & Message.deleted_at.is_null()
        & Message.usage.is_null(False))]


def link_in_order_sql(chat_id: str | None = None) -> list[tuple[str, tuple]]:
    """Statements that make a chat's unlinked live messages one branch in id order (all chats
    when None): for rows written without links, such as an old export's. Plain SQL with its
    parameters, so a raw sqlite3 connection can run them too."""
    where, args = ("chat_id = ?", (chat_id,)) if chat_id else ("1", ())
    live = f"{where} AND deleted_at IS NULL AND status != '{QUEUED}'"
    return [
        (f"""UPDATE message SET parent_id = l.prev, depth = l.depth FROM (
                SELECT id, lag(id) OVER w AS prev, row_number() OVER w - 1 AS depth FROM message
                WHERE {live} WINDOW w AS (PARTITION BY chat_id ORDER BY id)) AS l
             WHERE message.id = l.id""", args),
        (f"""UPDATE message SET active_child_id = (SELECT max(c.id) FROM message AS c
                WHERE c.chat_id = message.chat_id AND c.parent_id = message.id) WHERE {where}""", args),
        (f"""UPDATE chat SET active_leaf_id = (SELECT max(m.id) FROM message AS m WHERE m.chat_id = chat.id
                AND m.deleted_at IS NULL AND m.status != '{QUEUED}') WHERE {"id = ?" if chat_id else "1"}""", args),
        # One line (backend/store/lines.py), marked where it ends; other rows are lines of their own.
        (f"""UPDATE message SET line_id = CASE WHEN deleted_at IS NULL AND status != '{QUEUED}' THEN (
                SELECT min(f.id) FROM message AS f WHERE f.chat_id = message.chat_id
                AND f.deleted_at IS NULL AND f.status != '{QUEUED}') ELSE id END,
                line_exit = (active_child_id IS NULL) WHERE {where}""", args),
    ]


def link_in_order(chat_id: str | None = None) -> None:
    with db.atomic():
        for sql, args in link_in_order_sql(chat_id):
            db.execute_sql(sql, args)


def tool_rows(chat_id: str) -> list[tuple[str, Any, str | None, bool]]:
    """(role, tool_calls, tool_call_id, tool_error) of each message of the active branch, root
    first: its tool calls and results without their text."""
    leaf = active_leaf(chat_id)
    if leaf is None:
        return []
    rows, _ = lines.up(leaf, NO_LIMIT, "role, tool_calls_json, tool_call_id, tool_error")
    return [(role, _json(calls), call_id, bool(error)) for role, calls, call_id, error in reversed(rows)]


def plans_on_branch(chat_id: str) -> list[tuple[int, dict]]:
    """The plans (CONTRACT §7) messages of the chat's active branch carry, as (message id, plan),
    newest first."""
    rows = db.execute_sql("SELECT id, line_id, depth, plan_json FROM message WHERE chat_id = ? "
                          "AND plan_json IS NOT NULL AND deleted_at IS NULL ORDER BY id DESC",
                          (chat_id,)).fetchall()
    if not rows:
        return []
    on = on_active_branch(active_leaf(chat_id), {r[0]: (r[1], r[2]) for r in rows})
    return [(r[0], json.loads(r[3])) for r in rows if r[0] in on]


def plan_executions_on_branch(chat_id: str) -> list[dict]:
    """The content parts of the user messages on the chat's active branch that executed a plan,
    newest first; only those rows are read, not the whole branch."""
    rows = db.execute_sql("SELECT id, line_id, depth, content_parts_json FROM message WHERE chat_id = ? "
                          "AND role = 'user' AND content_parts_json LIKE '%\"plan\"%' AND deleted_at IS NULL "
                          "ORDER BY id DESC", (chat_id,)).fetchall()
    if not rows:
        return []
    on = on_active_branch(active_leaf(chat_id), {r[0]: (r[1], r[2]) for r in rows})
    out = []
    for row_id, _, _, parts in rows:
        try:
            value = json.loads(parts) if row_id in on else None
        except (TypeError, ValueError):
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


# --- which messages are on the active branch (search) ----------------------------------

def on_active_branch(leaf_id: int | None, hits: dict[int, tuple[int, int]]) -> set[int]:
    """Which of a chat's tree messages (`hits`: id -> (line_id, depth)) are on its active
    branch, the one ending at `leaf_id`. The branch enters each of its lines at the line's
    first message and leaves it at some depth: a message is on it when its line is one of
    them and it is no deeper than that. As many reads as the branch crosses lines."""
    reach: dict[int, int] = {}  # line -> the branch's depth in it
    current = leaf_id
    while current is not None:
        # Not lines.chain: a tree whose rows were removed under it (by hand) ends the walk
        # where the row is missing instead of failing the search.
        row = db.execute_sql("SELECT line_id, depth FROM message WHERE id = ?", (current,)).fetchone()
        if row is None:
            break
        reach[row[0]] = row[1]
        head = db.execute_sql("SELECT parent_id FROM message WHERE id = ?", (row[0],)).fetchone()
        current = head[0] if head else None
    return {i for i, (line, depth) in hits.items() if line in reach and depth <= reach[line]}
