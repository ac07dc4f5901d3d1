"""peewee models mirroring the migrated schema (migrations.py owns the DDL)."""
from __future__ import annotations

import json
import secrets

from peewee import AutoField, BooleanField, CompositeKey, FloatField, ForeignKeyField, IntegerField, Model, TextField

from backend.core.status import COMPLETE
from backend.store.db import db, now


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


class JsonText(TextField):
    """JSON in a TEXT column; None stays NULL."""

    def db_value(self, value):
        return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    def python_value(self, value):
        return None if value is None else json.loads(value)


class Base(Model):
    class Meta:
        database = db
        legacy_table_names = False


class Folder(Base):
    id = TextField(primary_key=True, default=lambda: new_id("f"))
    name = TextField()
    parent = ForeignKeyField("self", null=True, column_name="parent_id", on_delete="SET NULL")
    parent_id: str | None  # each foreign key's id, without reading its row (peewee adds it)
    model_id = TextField(null=True)
    system_prompt = TextField(null=True)
    params = JsonText(column_name="params_json", default=dict)
    mode = TextField(null=True)  # the mode its new chats start in (CONTRACT §7); None: ask
    tools_off = JsonText(column_name="tools_off_json", null=True)  # CONTRACT §15; its chats read it live
    created_at = FloatField(default=now)


class Chat(Base):
    id = TextField(primary_key=True, default=lambda: new_id("c"))
    title = TextField(default="")
    model_id = TextField(null=True)
    folder = ForeignKeyField(Folder, null=True, column_name="folder_id", on_delete="SET NULL")
    folder_id: str | None
    system_prompt = TextField(default="")
    params = JsonText(column_name="params_json", default=dict)
    pinned = BooleanField(default=False)
    archived = BooleanField(default=False)
    temporary = BooleanField(default=False)
    unread = BooleanField(default=False)
    workspace = TextField(null=True)  # the folder its tools may touch (real path)
    import_id = TextField(null=True)  # set while an import writes it, hidden (import_write.py)
    active_leaf_id = IntegerField(null=True)  # the last message of the branch the person sees
    source_id = TextField(null=True)  # the chat an import made it from (import_write.py)
    mode = TextField(default="ask")  # ask | plan | edit | auto (CONTRACT §7)
    tools_off = JsonText(column_name="tools_off_json", null=True)  # CONTRACT §15; None: its folder's
    created_at = FloatField(default=now)
    updated_at = FloatField(default=now)
    deleted_at = FloatField(null=True)


class Message(Base):
    id = AutoField()
    chat = ForeignKeyField(Chat, column_name="chat_id", on_delete="CASCADE", backref="messages")
    chat_id: str
    role = TextField()
    content = TextField(default="")
    content_parts = JsonText(column_name="content_parts_json", null=True)
    reasoning_content = TextField(default="")
    reasoning_details = JsonText(column_name="reasoning_details_json", null=True)
    tool_calls = JsonText(column_name="tool_calls_json", null=True)
    tool_call_id = TextField(null=True)
    citation_sources = JsonText(column_name="citation_sources_json", null=True)
    status = TextField(default=COMPLETE)
    model_id = TextField(null=True)
    usage = JsonText(column_name="usage_json", null=True)
    error = JsonText(null=True)  # {"code", "message"}
    request_id = TextField(null=True)
    tool_error = BooleanField(default=False)
    parent_id = IntegerField(null=True)  # the message before it on its branch (store/history.py)
    active_child_id = IntegerField(null=True)  # the child on the active branch when it was last there
    depth = IntegerField(default=0)  # its place on its branch, the root 0
    line_id = IntegerField(null=True)  # the line it is on (store/lines.py)
    line_exit = BooleanField(default=True)  # its active child is not its line's next message
    source_id = TextField(null=True)  # its id in the export it was imported from
    plan = JsonText(column_name="plan_json", null=True)  # {"plan_id", "steps"}: its update_plan call's plan
    created_at = FloatField(default=now)
    deleted_at = FloatField(null=True)


class File(Base):
    id = TextField(primary_key=True, default=lambda: new_id("file"))
    sha256 = TextField()
    name = TextField()
    mime = TextField()
    size = IntegerField()
    created_at = FloatField(default=now)


class Provider(Base):
    id = TextField(primary_key=True, default=lambda: new_id("p"))
    kind = TextField()
    name = TextField()
    base_url = TextField(null=True)
    enabled = BooleanField(default=True)
    timeout = FloatField(default=60.0)
    created_at = FloatField(default=now)


class ModelEntry(Base):
    """A catalog model (named ModelEntry so it does not shadow peewee's Model)."""
    id = TextField(primary_key=True, default=lambda: new_id("m"))
    provider = ForeignKeyField(Provider, column_name="provider_id", on_delete="CASCADE", backref="models")
    provider_id: str
    wire_api = TextField()
    api_model = TextField()
    label = TextField()
    context_window = IntegerField(null=True)
    max_output_tokens = IntegerField(null=True)
    supports_tools = BooleanField(default=False)
    supports_vision = BooleanField(default=False)
    supports_reasoning = BooleanField(default=False)
    fallbacks = JsonText(column_name="fallbacks_json", default=list)
    price_input = FloatField(null=True)  # USD per million input tokens
    price_output = FloatField(null=True)  # USD per million output tokens
    note = TextField(null=True)  # shown with the model, e.g. why its tools were turned off
    found_window = IntegerField(null=True)  # the context window discovery last found (None: never found one)
    created_at = FloatField(default=now)

    class Meta:
        table_name = "model"


class McpServer(Base):
    """An MCP server from catalog.toml's [[mcp_servers]]; secret header values live in the keyring."""
    id = TextField(primary_key=True)
    transport = TextField()  # "stdio" | "http"
    command = TextField(null=True)
    args = JsonText(column_name="args_json", default=list)
    env = JsonText(column_name="env_json", default=dict)
    cwd = TextField(null=True)
    url = TextField(null=True)
    headers = JsonText(column_name="headers_json", default=dict)
    secret_headers = JsonText(column_name="secret_headers_json", default=list)  # names only
    enabled = BooleanField(default=True)
    call_timeout = FloatField(default=60.0)
    created_at = FloatField(default=now)

    class Meta:
        table_name = "mcp_server"


class Compaction(Base):
    """A summary of the messages of a branch up to and including its boundary message."""
    id = AutoField()
    chat = ForeignKeyField(Chat, column_name="chat_id", on_delete="CASCADE")
    chat_id: str
    boundary_id = IntegerField()
    summary = TextField()
    tokens_before = IntegerField()
    tokens_after = IntegerField()
    model_id = TextField(null=True)
    created_at = FloatField(default=now)


class Setting(Base):
    """An app setting (backend/store/settings.py reads and writes them)."""
    key = TextField(primary_key=True)
    value = JsonText(column_name="value_json")


class ChatState(Base):
    """One chat's own state by key (backend/store/chat_state.py); it goes with its chat."""
    chat = ForeignKeyField(Chat, column_name="chat_id", on_delete="CASCADE")
    chat_id: str
    key = TextField()
    value = JsonText(column_name="value_json")

    class Meta:
        table_name = "chat_state"
        primary_key = CompositeKey("chat", "key")


ALL_MODELS = [Folder, Chat, Message, File, Provider, ModelEntry, McpServer, Compaction, Setting, ChatState]
