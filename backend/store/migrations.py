"""Schema migrations: an ordered list of plain functions, tracked by PRAGMA user_version.

Each migration is frozen SQL, never derived from today's models, so a database
made by any release upgrades the same way. Append; never edit a released one.
A feature's own migrations are named instead (`register_named`, from
backend/turns/features.py): each runs once after the numbered ones, and the
`named_migration` table records which ran.
"""
from __future__ import annotations

import logging
import time
from typing import Callable

log = logging.getLogger(__name__)


def _v1_initial(db):
    for sql in (
        """CREATE TABLE folder (
            id TEXT PRIMARY KEY, name TEXT NOT NULL, parent_id TEXT REFERENCES folder(id) ON DELETE SET NULL,
            model_id TEXT, system_prompt TEXT, params_json TEXT NOT NULL DEFAULT '{}',
            created_at REAL NOT NULL)""",
        """CREATE TABLE chat (
            id TEXT PRIMARY KEY, title TEXT NOT NULL DEFAULT '', model_id TEXT,
            folder_id TEXT REFERENCES folder(id) ON DELETE SET NULL,
            system_prompt TEXT NOT NULL DEFAULT '', params_json TEXT NOT NULL DEFAULT '{}',
            pinned INTEGER NOT NULL DEFAULT 0, archived INTEGER NOT NULL DEFAULT 0,
            temporary INTEGER NOT NULL DEFAULT 0, unread INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL, updated_at REAL NOT NULL, deleted_at REAL)""",
        "CREATE INDEX chat_updated ON chat(deleted_at, updated_at)",
        """CREATE TABLE message (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            chat_id TEXT NOT NULL REFERENCES chat(id) ON DELETE CASCADE,
            role TEXT NOT NULL, content TEXT NOT NULL DEFAULT '',
            content_parts_json TEXT, reasoning_content TEXT NOT NULL DEFAULT '',
            reasoning_details_json TEXT, tool_calls_json TEXT, tool_call_id TEXT,
            citation_sources_json TEXT, created_at REAL NOT NULL, deleted_at REAL)""",
        "CREATE INDEX message_chat ON message(chat_id, id)",
        """CREATE TABLE file (
            id TEXT PRIMARY KEY, sha256 TEXT NOT NULL, name TEXT NOT NULL, mime TEXT NOT NULL,
            size INTEGER NOT NULL, created_at REAL NOT NULL)""",
        """CREATE TABLE provider (
            id TEXT PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, base_url TEXT,
            enabled INTEGER NOT NULL DEFAULT 1, created_at REAL NOT NULL)""",
        """CREATE TABLE model (
            id TEXT PRIMARY KEY, provider_id TEXT NOT NULL REFERENCES provider(id) ON DELETE CASCADE,
            wire_api TEXT NOT NULL, api_model TEXT NOT NULL, label TEXT NOT NULL,
            context_window INTEGER, max_output_tokens INTEGER,
            supports_tools INTEGER NOT NULL DEFAULT 0, supports_vision INTEGER NOT NULL DEFAULT 0,
            supports_reasoning INTEGER NOT NULL DEFAULT 0, fallbacks_json TEXT NOT NULL DEFAULT '[]',
            created_at REAL NOT NULL)""",
        "CREATE TABLE setting (key TEXT PRIMARY KEY, value_json TEXT NOT NULL)",
    ):
        db.execute_sql(sql)


def _v2_turn_state(db):
    """Messages learn their turn state; providers their timeout."""
    for sql in (
        "ALTER TABLE message ADD COLUMN status TEXT NOT NULL DEFAULT 'complete'",
        "ALTER TABLE message ADD COLUMN model_id TEXT",
        "ALTER TABLE message ADD COLUMN usage_json TEXT",
        "ALTER TABLE message ADD COLUMN error TEXT",
        "ALTER TABLE message ADD COLUMN request_id TEXT",
        "ALTER TABLE message ADD COLUMN tool_error INTEGER NOT NULL DEFAULT 0",
        "CREATE UNIQUE INDEX message_request ON message(chat_id, request_id) WHERE request_id IS NOT NULL",
        "CREATE INDEX message_status ON message(status) WHERE status IN ('streaming', 'queued')",
        "ALTER TABLE provider ADD COLUMN timeout REAL NOT NULL DEFAULT 60",
    ):
        db.execute_sql(sql)


def _v3_model_prices(db):
    """Models learn their price per million tokens (null: not known)."""
    for sql in (
        "ALTER TABLE model ADD COLUMN price_input REAL",
        "ALTER TABLE model ADD COLUMN price_output REAL",
    ):
        db.execute_sql(sql)


def _v4_search(db):
    """Full-text search over messages: an FTS5 index on message.content, kept by triggers.

    What is indexed: the text of user and assistant messages that are not
    soft-deleted and not being written. Tool output (pages of JSON or logs) and
    reasoning (folded away in the window) would mostly add noise; a message
    soft-deleted by edit or regenerate is gone from its chat, so it leaves the
    index too. A reply is indexed once it stops streaming: its text is saved
    every half second while it streams, and re-indexing the whole text each time
    would cost quadratic work on a long reply. Chats' deleted_at / temporary are
    checked when searching instead, so deleting and restoring a chat re-indexes
    nothing.

    External content (content='message'): the text is stored once, in message,
    and read from there when needed. Such an index must be told exactly what it
    was given, so every trigger tests the same predicate on the row it removes as
    on the row it adds. unicode61 with remove_diacritics 2 folds case and accents
    ("cafe" finds "café"); prefix='2 3' keeps search-as-you-type prefix queries
    on short words from merging thousands of terms.
    """
    for sql in (
        """CREATE VIRTUAL TABLE message_fts USING fts5(
            content, content='message', content_rowid='id',
            tokenize='unicode61 remove_diacritics 2', prefix='2 3')""",
        """CREATE TRIGGER message_fts_insert AFTER INSERT ON message
            WHEN NEW.role IN ('user', 'assistant') AND NEW.deleted_at IS NULL AND NEW.status <> 'streaming'
            BEGIN
                INSERT INTO message_fts (rowid, content) VALUES (NEW.id, NEW.content);
            END""",
        """CREATE TRIGGER message_fts_delete AFTER DELETE ON message
            WHEN OLD.role IN ('user', 'assistant') AND OLD.deleted_at IS NULL AND OLD.status <> 'streaming'
            BEGIN
                INSERT INTO message_fts (message_fts, rowid, content) VALUES ('delete', OLD.id, OLD.content);
            END""",
        # Only a change that matters re-indexes: a reply's usage or error updates do not.
        """CREATE TRIGGER message_fts_update AFTER UPDATE OF id, role, content, deleted_at, status ON message
            WHEN OLD.id <> NEW.id OR OLD.role IS NOT NEW.role OR OLD.content IS NOT NEW.content
                 OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL)
                 OR (OLD.status = 'streaming') <> (NEW.status = 'streaming')
            BEGIN
                INSERT INTO message_fts (message_fts, rowid, content)
                    SELECT 'delete', OLD.id, OLD.content
                    WHERE OLD.role IN ('user', 'assistant') AND OLD.deleted_at IS NULL AND OLD.status <> 'streaming';
                INSERT INTO message_fts (rowid, content)
                    SELECT NEW.id, NEW.content
                    WHERE NEW.role IN ('user', 'assistant') AND NEW.deleted_at IS NULL AND NEW.status <> 'streaming';
            END""",
        """INSERT INTO message_fts (rowid, content)
            SELECT id, content FROM message
            WHERE role IN ('user', 'assistant') AND deleted_at IS NULL AND status <> 'streaming'""",
    ):
        db.execute_sql(sql)


def _v5_attachments(db):
    """Files are looked up by content on upload.

    A message names its files in content_parts_json ({"attachments": [file id, …]},
    in the order they were attached), so no link table is needed. The same bytes
    uploaded again under the same name reuse their row: that lookup, and any
    "which rows share this blob" (an export's, a clean-up's), go through this index.
    """
    db.execute_sql("CREATE INDEX file_sha256 ON file(sha256, name)")


def _v6_usable_messages(db):
    """Every model step says how many older messages it left out; counting them read
    every row of a long chat (docs/BENCHMARKS.md). This index holds only the rows
    a request would send, so the count reads the index alone. Its WHERE is the text
    backend/turns/context.py queries with (SQLite matches it term by term)."""
    db.execute_sql(
        "CREATE INDEX message_usable ON message(chat_id, id) WHERE deleted_at IS NULL AND status != 'queued' "
        "AND NOT (role = 'assistant' AND content = '' "
        "AND (tool_calls_json IS NULL OR tool_calls_json IN ('[]', 'null', '')))")


def _v7_workspaces(db):
    """A chat may have a workspace: the one folder its file and shell tools can reach."""
    db.execute_sql("ALTER TABLE chat ADD COLUMN workspace TEXT")


def _v8_mcp_servers(db):
    """MCP servers, mirrored from catalog.toml's [[mcp_servers]] like providers are.

    Secret header values are not here (the keyring holds them): only their names.
    """
    db.execute_sql(
        """CREATE TABLE mcp_server (
            id TEXT PRIMARY KEY, transport TEXT NOT NULL, command TEXT,
            args_json TEXT NOT NULL DEFAULT '[]', env_json TEXT NOT NULL DEFAULT '{}', cwd TEXT, url TEXT,
            headers_json TEXT NOT NULL DEFAULT '{}', secret_headers_json TEXT NOT NULL DEFAULT '[]',
            enabled INTEGER NOT NULL DEFAULT 1, call_timeout REAL NOT NULL DEFAULT 60,
            created_at REAL NOT NULL)""")


def _v9_import_staging(db):
    """An import writes its chats hidden, in short transactions, and shows them all at once at
    the end: `import_id` names the import while it runs and is NULL for every visible chat, so
    a start after a crash finds what an unfinished import left (backend/store/import_write.py)."""
    db.execute_sql("ALTER TABLE chat ADD COLUMN import_id TEXT")
    db.execute_sql("CREATE INDEX chat_import ON chat(import_id) WHERE import_id IS NOT NULL")


def _v10_model_note(db):
    """A model may carry a note for the person, e.g. why Numi turned its tools off."""
    db.execute_sql("ALTER TABLE model ADD COLUMN note TEXT")


def _v11_message_tree(db):
    """A chat's messages form a tree: edit and regenerate add versions instead of hiding rows.

    `parent_id` links each message to the one before it on its branch, `active_child_id`
    remembers which child was on the active branch last (a switch returns to it), `depth`
    is the place on the branch (a request counts what it leaves out without walking it),
    and `chat.active_leaf_id` ends the branch the person sees.

    Old rows: the live ones of a chat, in id order, are its one branch. A run of rows an
    edit or regenerate hid (one `deleted_at`, consecutive ids) becomes an older version
    under the live message before it, and is shown again; a hidden queued message was
    never sent and stays hidden.
    """
    for sql in (
        "ALTER TABLE message ADD COLUMN parent_id INTEGER",
        "ALTER TABLE message ADD COLUMN active_child_id INTEGER",
        "ALTER TABLE message ADD COLUMN depth INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE message ADD COLUMN line_id INTEGER",
        "ALTER TABLE message ADD COLUMN line_exit INTEGER NOT NULL DEFAULT 1",
        "ALTER TABLE chat ADD COLUMN active_leaf_id INTEGER",
        "CREATE INDEX message_tree ON message(chat_id, parent_id, id)",
        # A branch is read a line at a time (backend/store/lines.py).
        "CREATE INDEX message_line ON message(line_id, depth)",
        "CREATE INDEX message_line_exit ON message(line_id, depth) WHERE line_exit = 1",
        # What a request leaves out is now counted by depth; migration 6's count is gone.
        "DROP INDEX message_usable",
    ):
        db.execute_sql(sql)
    rows = db.execute_sql("SELECT id, chat_id, deleted_at, status FROM message ORDER BY chat_id, id").fetchall()
    links, shown, leaves = [], [], []
    chat, live = None, None
    for row_id, chat_id, deleted_at, status in rows:
        if chat_id != chat:
            if chat is not None and live:
                leaves.append((live[0], chat))
            chat, live, prev = chat_id, None, None  # live: (id, depth) ending the branch
        if deleted_at is None:
            parent = live
            live = (row_id, parent[1] + 1 if parent else 0)
            links.append((parent and parent[0], parent[1] + 1 if parent else 0, row_id))
            prev = None
        elif status == "queued":
            prev = None
            continue
        else:
            # Same hiding as the row before it: the next message of that older version.
            parent = prev if prev is not None and prev[2] == deleted_at else live
            depth = parent[1] + 1 if parent else 0
            links.append((parent and parent[0], depth, row_id))
            shown.append((row_id,))
            prev = (row_id, depth, deleted_at)
    if chat is not None and live:
        leaves.append((live[0], chat))
    db.execute_sql("CREATE TEMP TABLE IF NOT EXISTS _tree_links (parent_id INTEGER, depth INTEGER, id INTEGER)")
    db.cursor().executemany("INSERT INTO _tree_links VALUES (?, ?, ?)", links)
    db.execute_sql("""UPDATE message SET parent_id = l.parent_id, depth = l.depth
                      FROM _tree_links AS l WHERE l.id = message.id""")
    db.execute_sql("DROP TABLE _tree_links")
    db.cursor().executemany("UPDATE message SET deleted_at = NULL WHERE id = ?", shown)
    db.cursor().executemany("UPDATE chat SET active_leaf_id = ? WHERE id = ?", leaves)
    # Each message's child on the active branch: the live one (the one with the greatest
    # id among its children for an older version, i.e. the newest text there).
    db.execute_sql("""UPDATE message SET active_child_id = c.newest FROM (
                          SELECT parent_id, max(id) AS newest FROM message
                          WHERE parent_id IS NOT NULL GROUP BY parent_id) AS c
                      WHERE c.parent_id = message.id""")
    # Lines: a message that is its parent's first child continues the parent's line; any
    # other message starts one. A message whose active child is not its line's next is marked.
    line: dict[int, int] = {}
    has_child: set[int] = set()
    rows = db.execute_sql("SELECT id, parent_id, active_child_id FROM message ORDER BY id").fetchall()
    for row_id, parent, _ in rows:
        line[row_id] = line[parent] if parent is not None and parent not in has_child else row_id
        if parent is not None:
            has_child.add(parent)
    db.cursor().executemany("UPDATE message SET line_id = ?, line_exit = ? WHERE id = ?",
                            [(line[i], 0 if child is not None and line.get(child) == line[i] else 1, i)
                             for i, _, child in rows])


def _v12_import_sources(db):
    """An imported chat and its messages remember where they came from, so importing the same
    export again adds only what is new (backend/store/import_write.py).

    `chat.source_id` names the source chat ("numi:<chat id>", "numi-v1:<chat id>",
    "chatgpt:<conversation id>"); `message.source_id` the message within it (an export's
    message id, a ChatGPT node id). Both are NULL for everything made here.
    """
    for sql in (
        "ALTER TABLE chat ADD COLUMN source_id TEXT",
        "ALTER TABLE message ADD COLUMN source_id TEXT",
        "CREATE INDEX chat_source ON chat(source_id) WHERE source_id IS NOT NULL",
        "CREATE INDEX message_source ON message(chat_id, source_id) WHERE source_id IS NOT NULL",
    ):
        db.execute_sql(sql)


def _v13_compactions(db):
    """Compaction checkpoints: a summary of a branch's messages up to a boundary message.

    The transcript is never changed; a checkpoint applies whenever the active branch
    runs through its boundary (backend/store/compactions.py).
    """
    for sql in (
        """CREATE TABLE compaction (
            id INTEGER PRIMARY KEY,
            chat_id TEXT NOT NULL REFERENCES chat(id) ON DELETE CASCADE,
            boundary_id INTEGER NOT NULL REFERENCES message(id) ON DELETE CASCADE,
            summary TEXT NOT NULL,
            tokens_before INTEGER NOT NULL,
            tokens_after INTEGER NOT NULL,
            model_id TEXT,
            created_at REAL NOT NULL)""",
        "CREATE INDEX compaction_chat ON compaction(chat_id, id)",
        "CREATE INDEX compaction_boundary ON compaction(boundary_id)",
    ):
        db.execute_sql(sql)


def _v14_modes_and_plans(db):
    """A chat's mode (CONTRACT §7: ask, plan, edit, auto) and its folder's default for new
    chats; the plan an assistant message's `update_plan` call made."""
    for sql in (
        "ALTER TABLE chat ADD COLUMN mode TEXT NOT NULL DEFAULT 'ask'",
        "ALTER TABLE folder ADD COLUMN mode TEXT",
        "ALTER TABLE message ADD COLUMN plan_json TEXT",
    ):
        db.execute_sql(sql)


def _v15_model_found_window(db):
    """The context window discovery last found for a model, kept beside the one in use (which
    the person may set), so Settings can show both."""
    db.execute_sql("ALTER TABLE model ADD COLUMN found_window INTEGER")


def _v16_drafts(db):
    """A chat's unsent message (text and attached file ids), kept until sent or cleared."""
    db.execute_sql("""CREATE TABLE draft (
        chat_id TEXT PRIMARY KEY REFERENCES chat(id) ON DELETE CASCADE,
        text TEXT NOT NULL,
        file_ids_json TEXT NOT NULL,
        updated_at REAL NOT NULL)""")


def _v17_chat_state(db):
    """A chat's own state (its tool policies, "allow always" rules, the plan it is executing)
    moves out of the app's settings into a table of its own, removed with its chat: kept
    among the settings as `<key>:<chat id>`, a purged chat's rules stayed behind. Rows of
    chats that no longer exist are dropped."""
    db.execute_sql("""CREATE TABLE chat_state (
        chat_id TEXT NOT NULL REFERENCES chat(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        value_json TEXT NOT NULL,
        PRIMARY KEY (chat_id, key))""")
    for key in ("tool_policy", "allow_always", "plan_executing"):
        prefix = key + ":"
        # substr, not LIKE: "_" in the keys would be a wildcard.
        db.execute_sql("""INSERT INTO chat_state (chat_id, key, value_json)
            SELECT substr(s.key, ?), ?, s.value_json FROM setting AS s
            WHERE substr(s.key, 1, ?) = ? AND substr(s.key, ?) IN (SELECT id FROM chat)""",
                       (len(prefix) + 1, key, len(prefix), prefix, len(prefix) + 1))
        db.execute_sql("DELETE FROM setting WHERE substr(key, 1, ?) = ?", (len(prefix), prefix))


def _v18_named_migrations(db):
    """The record of the features' named migrations that ran (each runs once)."""
    db.execute_sql("""CREATE TABLE named_migration (
        name TEXT PRIMARY KEY,
        applied_at REAL NOT NULL)""")


def _v19_tools_off(db):
    """The tools a chat or folder leaves out of its requests (CONTRACT §15): a JSON list of
    names, NULL for none set (a chat's NULL follows its folder)."""
    for sql in (
        "ALTER TABLE chat ADD COLUMN tools_off_json TEXT",
        "ALTER TABLE folder ADD COLUMN tools_off_json TEXT",
    ):
        db.execute_sql(sql)


def _v20_folder_prompts_live(db):
    """A folder's system prompt is read at each request (CONTRACT §12), no longer copied into the
    chats made in it: a chat still holding its folder's prompt unchanged gives up the copy, which
    would otherwise be sent twice."""
    db.execute_sql("UPDATE chat SET system_prompt = '' WHERE folder_id IS NOT NULL AND system_prompt != '' "
                   "AND system_prompt = (SELECT f.system_prompt FROM folder f WHERE f.id = chat.folder_id)")


MIGRATIONS = [_v1_initial, _v2_turn_state, _v3_model_prices, _v4_search, _v5_attachments, _v6_usable_messages,
              _v7_workspaces, _v8_mcp_servers, _v9_import_staging, _v10_model_note,
              _v11_message_tree, _v12_import_sources, _v13_compactions,
              _v14_modes_and_plans, _v15_model_found_window, _v16_drafts, _v17_chat_state,
              _v18_named_migrations, _v19_tools_off, _v20_folder_prompts_live]


def schema_version(db) -> int:
    return db.execute_sql("PRAGMA user_version").fetchone()[0]


def migrate(db, target: int | None = None) -> int:
    """Apply every migration past the database's version, each in its own transaction."""
    target = len(MIGRATIONS) if target is None else target
    version = schema_version(db)
    if version > len(MIGRATIONS):
        raise RuntimeError(
            f"This database was written by a newer Numi (schema {version}, this build knows "
            f"{len(MIGRATIONS)}). Update Numi, or start it with another --data-dir.")
    for number in range(version + 1, target + 1):
        with db.atomic():
            MIGRATIONS[number - 1](db)
            db.execute_sql(f"PRAGMA user_version = {number}")
        log.info("database migrated to schema %d", number)
    if target == len(MIGRATIONS):
        run_named(db)
    return schema_version(db)


_named: dict[str, Callable] = {}


def register_named(name: str, fn: Callable) -> None:
    """A feature's migration, `fn(db)`, run once under `name` by the next `migrate` or `run_named`."""
    _named[name] = fn


def unregister_named(name: str) -> None:
    """Forget a named migration (its feature unplugged); what it did stays done."""
    _named.pop(name, None)


def run_named(db) -> None:
    """Run each registered named migration the database has not run, each in its own transaction
    (none before the numbered ones are all done)."""
    if schema_version(db) != len(MIGRATIONS):
        return
    for name, fn in list(_named.items()):
        with db.atomic():
            if db.execute_sql("SELECT 1 FROM named_migration WHERE name = ?", (name,)).fetchone():
                continue
            fn(db)
            db.execute_sql("INSERT INTO named_migration (name, applied_at) VALUES (?, ?)", (name, time.time()))
        log.info("database migration %s applied", name)
