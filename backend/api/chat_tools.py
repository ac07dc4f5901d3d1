"""The tools a chat or folder can switch off, by group (docs/PROTOCOL.md, "Tools per chat"; CONTRACT §15).

Reading them never starts an MCP server: its tools are those it last listed.
"""
from __future__ import annotations

from flask import Blueprint

from backend.api.chats import _chat
from backend.api.folders import _folder
from backend.runtime import runtime
from backend.turns import tools_off

bp = Blueprint("chat_tools", __name__)


@bp.get("/api/chats/<chat_id>/tools")
def chat_tools(chat_id):
    return tools_off.chat_listing(runtime().toolsets, _chat(chat_id))


@bp.get("/api/folders/<folder_id>/tools")
def folder_tools(folder_id):
    return tools_off.folder_listing(runtime().toolsets, _folder(folder_id))
