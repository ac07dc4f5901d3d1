"""Walking a chat's message tree in lines, so a long branch costs a few index reads, not a step per message.

A line is a chain of messages each the first child of the one before: a
message that is its parent's first child continues the parent's line, any
later child (a version) starts its own, and `line_id` is the id of the line's
first message. A linear chat is one line. Within a line a message is found by
its depth, so the part of a branch inside one line is one range of the
(line_id, depth) index, and a branch of any length crosses only as many lines
as it has versions above it. `line_exit` marks a message whose active child is
not its line's next message (or that has no child): the walk down to the leaf
last active under a message jumps from one such mark to the next.

These are the low-level walks; backend/store/history.py holds the operations.
"""
from __future__ import annotations

from backend.store.db import db


def _line(message_id: int) -> tuple[int, int, int | None]:
    """(line_id, depth, the line's first message's parent) of a message."""
    line, depth = db.execute_sql("SELECT line_id, depth FROM message WHERE id = ?", (message_id,)).fetchone()
    parent = db.execute_sql("SELECT parent_id FROM message WHERE id = ?", (line,)).fetchone()[0]
    return line, depth, parent


def up(start_id: int | None, limit: int, columns: str):
    """The rows (`columns`) from `start_id` up towards its root, start first, at most `limit`;
    with the cursor description (None when nothing was read)."""
    rows: list[tuple] = []
    description = None
    current = start_id
    while current is not None and len(rows) < limit:
        # One query a line: the range of the line from this message up, each row with its
        # parent first, so the line's first row names where the branch goes on.
        cursor = db.execute_sql(
            f"SELECT parent_id, {columns} FROM message WHERE line_id = (SELECT line_id FROM message WHERE id = ?1) "
            f"AND depth <= (SELECT depth FROM message WHERE id = ?1) ORDER BY depth DESC LIMIT ?2",
            (current, limit - len(rows)))
        read = cursor.fetchall()
        description = cursor.description[1:]
        rows.extend(r[1:] for r in read)
        current = read[-1][0] if read else None
    return rows, description


def chain(message_id: int) -> list[tuple[int, int]]:
    """The lines of the message's branch from it up: (line_id, the branch's depth in that line)."""
    out = []
    current: int | None = message_id
    while current is not None:
        line, depth, above = _line(current)
        out.append((line, depth))
        current = above
    return out


def leaf_under(message_id: int) -> int:
    """The leaf that was active last under the message: from mark to mark down its active children."""
    current = message_id
    while True:
        line, depth = db.execute_sql("SELECT line_id, depth FROM message WHERE id = ?", (current,)).fetchone()
        exit_id, child = db.execute_sql(
            "SELECT id, active_child_id FROM message WHERE line_id = ? AND depth >= ? AND line_exit = 1 "
            "ORDER BY depth LIMIT 1", (line, depth)).fetchone()
        if child is None:
            return exit_id
        current = child


def meeting(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> tuple[int, int] | None:
    """Where two branches (their chains) part: (line_id, depth) of their deepest common message."""
    depths = dict(b)
    for line, depth in a:  # deepest first: the first shared line holds the meeting point
        if line in depths:
            return line, min(depth, depths[line])
    return None


def point_along(target_chain: list[tuple[int, int]], meet: tuple[int, int] | None) -> None:
    """Make every message above the target, below the meeting point, point at the target's branch."""
    for index, (line, depth) in enumerate(target_chain):
        head_depth = db.execute_sql("SELECT depth FROM message WHERE id = ?", (line,)).fetchone()[0]
        at_meeting = meet is not None and line == meet[0]
        start = meet[1] if meet is not None and at_meeting else head_depth
        # In the line: each message's active child is its line's next one.
        db.execute_sql("""UPDATE message SET line_exit = 0, active_child_id = (
                              SELECT c.id FROM message AS c WHERE c.line_id = message.line_id
                              AND c.depth = message.depth + 1)
                          WHERE line_id = ? AND depth >= ? AND depth < ? AND line_exit = 1""",
                       (line, start, depth))
        if at_meeting:
            return
        if index + 1 < len(target_chain):
            # Where the branch enters this line: the message above points into it.
            db.execute_sql("UPDATE message SET active_child_id = ?, line_exit = 1 "
                           "WHERE id = (SELECT parent_id FROM message WHERE id = ?)", (line, line))


def link_child(parent_id: int | None, child_id: int) -> None:
    """Place a new child in its line and make it its parent's active child."""
    if parent_id is None:
        db.execute_sql("UPDATE message SET line_id = id, line_exit = 1 WHERE id = ?", (child_id,))
        return
    # The chat's id leads the tree index: by parent alone this would read every message.
    first = db.execute_sql("SELECT NOT EXISTS (SELECT 1 FROM message WHERE chat_id = "
                           "(SELECT chat_id FROM message WHERE id = ?1) AND parent_id = ?1 AND id != ?2)",
                           (parent_id, child_id)).fetchone()[0]
    db.execute_sql("UPDATE message SET line_exit = 1, line_id = CASE WHEN ? THEN "
                   "(SELECT line_id FROM message WHERE id = ?) ELSE id END WHERE id = ?",
                   (first, parent_id, child_id))
    db.execute_sql("UPDATE message SET active_child_id = ?, line_exit = ? WHERE id = ?",
                   (child_id, 0 if first else 1, parent_id))


def relink(chat_id: str, con=None) -> None:
    """Lines and marks for a chat from its parent and active-child links, after rows were written
    in bulk (an import; a test or benchmark writing straight to the file through `con`)."""
    execute = con.execute if con is not None else db.execute_sql
    rows = execute("SELECT id, parent_id, active_child_id FROM message WHERE chat_id = ? ORDER BY id",
                   (chat_id,)).fetchall()
    line: dict[int, int] = {}
    has_child: set[int] = set()
    for row_id, parent, _ in rows:
        # A parent written later than its child (ids out of order) cannot be placed: its own line.
        line[row_id] = line[parent] if parent in line and parent not in has_child else row_id
        if parent is not None:
            has_child.add(parent)
    updates = [(line[i], 0 if child is not None and line.get(child) == line[i] else 1, i) for i, _, child in rows]
    sql = "UPDATE message SET line_id = ?, line_exit = ? WHERE id = ?"
    if con is not None:
        con.executemany(sql, updates)
        return
    # One transaction for the chat's rows, not one (and a journal write) per row.
    with db.atomic():
        db.cursor().executemany(sql, updates)
