"""What text from outside the conversation has read, and where it came from (CONTRACT §8, memory poisoning).

A web page, a search result, a file or an MCP server's answer can tell the model to remember
something; a memory reaches every later chat. So a `remember` in a conversation that read such
text asks whatever the rules say, and its card names what was read. What counts: a result
(not an error) of those tools on the chat's active branch, the turn's own included, since earlier
turns' results are still in what the model reads.
"""
from __future__ import annotations

import json

from backend.store import history

FILE_TOOLS = frozenset({"list_files", "read_file", "search_files", "shell"})
READERS = frozenset({"web_search", "web_fetch", "knowledge_search"}) | FILE_TOOLS
MCP_PREFIX = "mcp__"
MOST = 8  # places listed on a card
ARGUMENT_CHARS = 200

REASON = ("This conversation has read text from outside it ({what}), and such text can tell a model what to "
          "remember. A memory reaches every later chat: save it only if it is something you said or want kept.")


def reads(name: str) -> bool:
    return name in READERS or name.startswith(MCP_PREFIX)


def _argument(call: dict, key: str) -> str | None:
    try:
        args = json.loads(call.get("arguments") or "{}")
    except (json.JSONDecodeError, TypeError):
        return None
    value = args.get(key) if isinstance(args, dict) else None
    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    return value if len(value) <= ARGUMENT_CHARS else value[:ARGUMENT_CHARS - 1] + "…"


def place(call: dict) -> str:
    """Where a call's result came from, as the card says it."""
    name = call.get("name") or ""
    if name == "web_fetch":
        url = _argument(call, "url")
        return f"the web page {url}" if url else "a web page"
    if name == "web_search":
        query = _argument(call, "query")
        return f"web search results for “{query}”" if query else "web search results"
    if name == "knowledge_search":
        return "passages of your knowledge bases"
    if name == "read_file":
        path = _argument(call, "path")
        return f"the workspace file {path}" if path else "a workspace file"
    if name in ("list_files", "search_files"):
        return "your workspace files"
    if name == "shell":
        return "command output from your workspace"
    server = name[len(MCP_PREFIX):].split("__", 1)[0]
    return f"what the MCP server '{server}' returned"


def read_on_branch(chat_id: str) -> list[str]:
    """Where the text from outside that the chat's active branch read came from, first read first."""
    calls: dict[object, dict] = {}
    places: list[str] = []
    for role, tool_calls, call_id, is_error in history.tool_rows(chat_id):
        if role == "assistant" and isinstance(tool_calls, list):
            calls.update({c.get("id"): c for c in tool_calls if isinstance(c, dict)})
        elif role == "tool" and not is_error and call_id in calls:
            call = calls[call_id]
            if isinstance(call.get("name"), str) and reads(call["name"]):
                where = place(call)
                if where not in places:
                    places.append(where)
    return places


def card(places: list[str]) -> dict:
    """The approval card's `untrusted` field."""
    shown = places[:MOST] + ([f"{len(places) - MOST} more"] if len(places) > MOST else [])
    what = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
    return {"read": shown, "reason": REASON.format(what=what)}
