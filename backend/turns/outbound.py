"""Which tool calls carry text out of the machine, and whether the conversation has read private content.

CONTRACT §11: once a turn has read private content (workspace files, knowledge, memory,
MCP resources), a tool that sends text out asks, showing what it would send, whatever its
policy or standing rules say (only `deny` still refuses without asking). A model that
obeys a web page could otherwise read a secret and search for it: the query reaches the
search service (SearXNG forwards it; Brave and Tavily keep it).

What counts as read: the result of a private-reading call, on the chat's active branch
(earlier turns included: a second message "go on" must not clear it) or in this turn. An
error result (a refusal, a missing file) carries no content and does not count.
"""
from __future__ import annotations

import json
from typing import Callable, Iterable

# The workspace file tools (backend/tools/workspace.py) read the person's files; the shell's
# output can be any of them. `knowledge_search` reads the chat's knowledge bases. MCP tools that
# declare they only read count too (`reads_private`): what they read is the person's files,
# databases or accounts, and the MCP tools that may act are the ones that send.
PRIVATE_READERS = frozenset({"list_files", "read_file", "search_files", "shell", "knowledge_search"})
MCP_PREFIX = "mcp__"
MEMORY = "memory"  # what a request carrying the person's memory notes (`TurnReads.note`)

# Built-in tools that send their arguments off this computer, and what of them goes.
SENDERS = {"web_search": "query", "web_fetch": "url"}

WHAT_WAS_READ = {"list_files": "your workspace files", "read_file": "your workspace files",
                 "search_files": "your workspace files", "shell": "command output from your workspace",
                 "knowledge_search": "your knowledge bases", MEMORY: "your memory"}
WHERE_IT_GOES = {"web_search": "a web search sends its query to the search service, which may keep or forward it",
                 "web_fetch": "fetching sends this address to the web site it names"}


def reads_private(name: str, tool=None) -> bool:
    """Whether results of the tool named `name` (registered as `tool`, if known) are private content."""
    if name in PRIVATE_READERS:
        return True
    return name.startswith(MCP_PREFIX) and tool is not None and bool(tool.read_only)


def counts(name: str, is_error: bool, tool=None) -> bool:
    """Whether a result of the tool named `name` means private content was read."""
    return not is_error and reads_private(name, tool)


def sends_out(tool) -> bool:
    """Whether calls of `tool` (a registered Tool) send text off this computer."""
    if tool is None:
        return False
    if tool.name in SENDERS:
        return True
    # The MCP specification's default: a tool without readOnlyHint may act on the world.
    return tool.name.startswith(MCP_PREFIX) and not tool.read_only


def what_it_sends(call) -> str:
    """The text a call would send: a search's query, a fetch's address, else its arguments."""
    field = SENDERS.get(call.name)
    if field is not None:
        try:
            value = json.loads(call.arguments or "{}")
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict) and isinstance(value.get(field), str):
            return value[field]
    return call.arguments or ""


def reason(tool: str, read: Iterable[str]) -> str:
    """The sentence the approval card shows: what was read, and where this call's text goes."""
    what = []
    for name in read:
        label = WHAT_WAS_READ.get(name) or (
            f"what the MCP server '{_server(name)}' read" if name.startswith(MCP_PREFIX) else name)
        if label not in what:
            what.append(label)
    where = WHERE_IT_GOES.get(tool)
    if where is None:
        server = _server(tool) if tool.startswith(MCP_PREFIX) else tool
        where = f"this tool sends its arguments to the MCP server '{server}', which may act on them"
    return (f"This conversation has read {_listed(what)}, and {where}. Allow it only if what it would "
            f"send holds nothing private.")


def _server(name: str) -> str:
    return name[len(MCP_PREFIX):].split("__", 1)[0]


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def branch_reads(rows: Iterable[tuple[str, object, str | None, bool]],
                 lookup: Callable[[str], object] = lambda name: None) -> list[str]:
    """The tools whose results on a branch count as private reads, from its
    (role, tool_calls, tool_call_id, tool_error) rows, root first; `lookup` finds a tool by name."""
    names: dict[object, object] = {}  # call id -> tool name, of the calls made so far (as the model sent them)
    read: list[str] = []
    for role, calls, call_id, is_error in rows:
        if role == "assistant" and isinstance(calls, list):
            names.update({c.get("id"): c.get("name") for c in calls if isinstance(c, dict)})
        elif role == "tool" and call_id in names:
            name = names[call_id]
            if isinstance(name, str) and counts(name, is_error, lookup(name)) and name not in read:
                read.append(name)
    return read


class TurnReads:
    """What private content one turn's conversation has read: its own results as they are
    committed, and its branch's earlier ones, looked up once when first needed."""

    def __init__(self, earlier: Callable[[], list[str]]):
        self._earlier = earlier
        self._looked = False
        self._read: list[str] = []

    def result(self, name: str, is_error: bool, tool=None) -> None:
        """A result of the tool named `name` (registered as `tool`) was committed."""
        if counts(name, is_error, tool):
            self.note(name)

    def note(self, what: str) -> None:
        """Private content came in another way (`MEMORY`: the person's memory in the request)."""
        if what not in self._read:
            self._read.append(what)

    def read(self) -> list[str]:
        """What was read; the branch is looked up only while the turn itself has read nothing."""
        if not self._read and not self._looked:
            self._looked = True
            for name in self._earlier():
                self.note(name)
        return list(self._read)

    def check(self, call, tool) -> dict | None:
        """The approval's `outbound` field when this call must ask before sending text out, else None."""
        if not sends_out(tool):
            return None
        read = self.read()
        if not read:
            return None
        return {"sends": what_it_sends(call), "reason": reason(call.name, read)}
