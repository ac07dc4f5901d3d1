"""Writing catalog.toml from the tables, keeping the person's comments and layout.

tomlkit edits the file as it is: only values that differ change, tables of
removed entries go, new entries are appended. A key the person left out
because it has its default value stays out. A missing or blank file gets the
commented example header.
"""
from __future__ import annotations

import tomlkit
from tomlkit.items import AoT, Table

from backend.catalog import mcp_file
from backend.catalog.toml_file import CAPABILITIES, DEFAULT_TIMEOUT, CatalogData, default_wire_api

HEADER = '''\
# Numi catalog: the providers and models Numi can talk to.
#
# This file is the source of truth. Edit it while Numi runs: a saved change is
# applied within about two seconds. If something is wrong, Numi keeps the last
# good catalog and shows what and where (Settings, or GET /api/settings →
# catalog.error) until the file is fixed. Changes made in the app are written
# back here; your comments and layout are kept. Changing an id by hand removes
# that entry and adds a new one.
#
# API keys never go here: set them in Numi, which keeps them in the OS keyring.
#
# Example (remove the leading "# " to use it):
#
# [[providers]]
# id = "ollama"                          # your name for it: letters, digits, . _ : @ -
# kind = "openai_compatible"             # openai | anthropic | openai_compatible
# name = "Ollama"                        # shown in the app
# base_url = "http://127.0.0.1:11434/v1" # API root (with /v1; anthropic: without).
#                                        # openai / anthropic: leave out for the vendor's own
# enabled = true                         # false: its models cannot be used (default true)
# timeout = 60                           # seconds to wait for an answer, 1-600 (default 60)
#
# [[models]]
# id = "llama3"                          # your name for it, unique in this file
# provider = "ollama"                    # the id of a [[providers]] table
# wire_api = "chat_completions"          # chat_completions | responses | anthropic_messages
#                                        # (default: responses for openai, anthropic_messages
#                                        #  for anthropic, chat_completions otherwise)
# api_model = "llama3.1:8b"              # the name the provider knows it by
# label = "Llama 3.1 8B"                 # shown in the app (default: api_model)
# context_window = 131072                # tokens it can read, prompt + reply (optional)
# max_output_tokens = 8192               # longest reply in tokens (optional)
# supports = { tools = true, vision = false, reasoning = false }  # (default: all false)
# fallbacks = []                         # model ids tried in order when this one fails
# price_input = 0.0                      # USD per million input tokens (optional)
# price_output = 0.0                     # USD per million output tokens (optional)
# note = "…"                             # shown with the model (Numi writes one when it turns tools off)
#
# [[mcp_servers]]                        # an MCP server: its tools become tools the model may call
# id = "files"                           # your name for it (tools are named mcp__<id>__<tool>)
# transport = "stdio"                    # stdio (Numi runs a program) | http (Streamable HTTP)
# command = "npx"                        # stdio: the program to run (required)
# args = ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/notes"]
# env = { LOG_LEVEL = "info" }           # stdio: extra environment variables (no secrets)
# cwd = "/home/me"                       # stdio: folder to run it in, absolute (optional)
# url = "https://mcp.example.com/mcp"    # http: the server's address (required)
# headers = { X-Team = "blue" }          # http: headers sent with every request (no secrets)
# secret_headers = ["Authorization"]     # http: headers whose values Numi keeps in the keyring
# enabled = true                         # false: never started, its tools are not offered (default true)
# call_timeout = 60                      # seconds one tool call may take, 1-600 (default 60)

version = 1

'''


def _provider_fields(p: dict) -> list[tuple[str, object, object]]:
    """(key, value, default) in file order; a None value means the key is left out."""
    return [("id", p["id"], None), ("kind", p["kind"], None), ("name", p["name"], None),
            ("base_url", p["base_url"], None), ("enabled", bool(p["enabled"]), True),
            ("timeout", _num(p["timeout"]), DEFAULT_TIMEOUT)]


def _model_fields(m: dict, kinds: dict) -> list[tuple[str, object, object]]:
    return [("id", m["id"], None), ("provider", m["provider"], None),
            ("wire_api", m["wire_api"], default_wire_api(kinds.get(m["provider"], ""))),
            ("api_model", m["api_model"], None), ("label", m["label"], m["api_model"]),
            ("context_window", m["context_window"], None), ("max_output_tokens", m["max_output_tokens"], None),
            ("supports", dict(m["supports"]), {c: False for c in CAPABILITIES}),
            ("fallbacks", list(m["fallbacks"]), []),
            ("price_input", _num(m["price_input"]), None), ("price_output", _num(m["price_output"]), None),
            ("note", m["note"], None)]


def _num(value):
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _item(value):
    if isinstance(value, dict):
        inline = tomlkit.inline_table()
        inline.update(value)
        return inline
    return tomlkit.item(value)


def _plain(value):
    return value.unwrap() if hasattr(value, "unwrap") else value


def _same(key: str, current, new) -> bool:
    current = _plain(current)
    if key == "supports" and isinstance(current, dict):
        # A capability left out reads as false, so `{ tools = true }` already says what the row does.
        return {c: bool(current.get(c, False)) for c in new} == new and set(current) <= set(new)
    if isinstance(new, dict) and isinstance(current, dict):
        return current == new and all(type(current[k]) is type(new[k]) for k in new)
    if isinstance(new, bool) or isinstance(current, bool):
        return type(new) is type(current) and new == current
    return current == new


def _update_table(table, fields) -> None:
    """Change only what differs, so a key's comment and formatting survive."""
    for key, value, default in fields:
        if value is None:
            if key in table:
                del table[key]
        elif key in table:
            if not _same(key, table[key], value):
                table[key] = _item(value)
        elif value != default:
            table.add(key, _item(value))


def _new_table(fields) -> Table:
    table = tomlkit.table()
    for key, value, _ in fields:
        if value is not None:
            table.add(key, _item(value))
    table.add(tomlkit.nl())  # a blank line between tables, as a person would write them
    return table


def _sync_section(doc, section: str, items: list[dict], fields_of) -> None:
    existing = doc.get(section)
    if existing is not None and not isinstance(existing, AoT):
        del doc[section]  # written as an inline array: rebuilt as [[tables]] (its layout is lost)
        existing = None
    wanted = {item["id"]: item for item in items}
    if existing is not None:
        for i in reversed(range(len(existing))):
            if _plain(existing[i].get("id")) not in wanted:
                del existing[i]
        present = set()
        for table in existing:
            item_id = _plain(table.get("id"))
            if item_id in present:
                continue
            present.add(item_id)
            _update_table(table, fields_of(wanted[item_id]))
    else:
        present = set()
    new = [_new_table(fields_of(item)) for item in items if item["id"] not in present]
    if existing is None:
        if not new:
            return
        existing = tomlkit.aot()
        doc.append(section, existing)
    for table in new:
        existing.append(table)
    if len(existing) == 0:
        del doc[section]


def render(current_text: str | None, data: CatalogData) -> str:
    """The file for `data`: `current_text` changed as little as possible, or a fresh file."""
    doc = tomlkit.parse(current_text if current_text is not None and current_text.strip() else HEADER)
    kinds = {p["id"]: p["kind"] for p in data.providers}
    _sync_section(doc, "providers", data.providers, _provider_fields)
    _sync_section(doc, "models", data.models, lambda m: _model_fields(m, kinds))
    _sync_section(doc, "mcp_servers", data.mcp_servers, mcp_file.file_fields)
    return tomlkit.dumps(doc).rstrip("\n") + "\n"
