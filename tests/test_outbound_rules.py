"""The outbound rules of backend/turns/outbound.py, in process: what counts as a private read,
which tools send text out, what the card shows, and when the branch is looked up."""
from __future__ import annotations

from pathlib import Path

from backend.core.tools import Tool
from backend.core.types import ToolCall, ToolSpec
from backend.features.plans import update_plan_tool
from backend.features.questions import ask_user_tool
from backend.tools.fetch import fetch_tool
from backend.tools.shell import shell_tool
from backend.tools.web_search import web_search_tool
from backend.tools.workspace import Workspace, workspace_tools
from backend.turns import outbound
from backend.turns.outbound import TurnReads, branch_reads


def mcp(name: str, read_only: bool) -> Tool:
    return Tool(ToolSpec(name, "[MCP server 'files'] x", {"type": "object"}), lambda a, c: "", read_only=read_only)


def call(name: str, arguments: str) -> ToolCall:
    return ToolCall(id="c1", name=name, arguments=arguments)


def test_the_workspace_tools_read_private_content_and_their_names_are_the_real_ones(tmp_path):
    # The name set stands in for an attribute the tools do not have: it must name the real tools.
    tools = {t.name: t for t in workspace_tools(Workspace(tmp_path))}
    readers = {name for name, tool in tools.items() if tool.read_only}
    assert readers == {"list_files", "read_file", "search_files"} and readers <= outbound.PRIVATE_READERS
    assert shell_tool(Path(tmp_path)).name in outbound.PRIVATE_READERS
    for name in (*readers, "shell", "knowledge_search"):
        assert outbound.counts(name, is_error=False)
    assert not outbound.counts("read_file", is_error=True)  # refused or failed: it carried nothing
    for name in ("web_search", "web_fetch", "ask_user", "update_plan", "write_file", "edit_file", "doc_create",
                 "mcp__files__read"):
        assert not outbound.counts(name, is_error=False)


def test_an_mcp_tool_that_only_reads_reads_private_content_and_one_that_acts_does_not():
    reader, actor = mcp("mcp__files__read", read_only=True), mcp("mcp__files__write", read_only=False)
    assert outbound.counts(reader.name, is_error=False, tool=reader)
    assert not outbound.counts(reader.name, is_error=True, tool=reader)
    assert not outbound.counts(actor.name, is_error=False, tool=actor)
    # From the branch, the tool is looked up by name: one no longer offered counts as nothing.
    rows = [row("assistant", [{"id": "a", "name": reader.name, "arguments": "{}"}]), row("tool", call_id="a")]
    assert branch_reads(rows, {reader.name: reader}.get) == [reader.name]
    assert branch_reads(rows) == []
    assert "what the MCP server 'files' read" in outbound.reason("web_search", [reader.name])


def test_what_sends_text_out(tmp_path):
    assert outbound.sends_out(web_search_tool(None)) and outbound.sends_out(fetch_tool())
    assert outbound.sends_out(mcp("mcp__files__write", read_only=False))
    assert not outbound.sends_out(mcp("mcp__files__read", read_only=True))
    for tool in (*workspace_tools(Workspace(tmp_path)), ask_user_tool(), update_plan_tool(), None):
        assert not outbound.sends_out(tool)


def test_what_a_call_would_send():
    assert outbound.what_it_sends(call("web_search", '{"query": "API_KEY=1", "limit": 3}')) == "API_KEY=1"
    assert outbound.what_it_sends(call("web_fetch", '{"url": "https://x.example/?k=1"}')) == "https://x.example/?k=1"
    assert outbound.what_it_sends(call("mcp__files__write", '{"path": "a", "text": "b"}')) == '{"path": "a", "text": "b"}'
    # Arguments the tool will refuse are still shown, whole, rather than nothing.
    assert outbound.what_it_sends(call("web_search", "{not json")) == "{not json"
    assert outbound.what_it_sends(call("web_search", '{"query": 5}')) == '{"query": 5}'


def test_the_reason_names_what_was_read_and_where_it_goes():
    said = outbound.reason("web_search", ["read_file", "search_files", "shell"])
    assert said.startswith("This conversation has read your workspace files and command output from your workspace,")
    assert "search service" in said and said.endswith("holds nothing private.")
    assert "web site" in outbound.reason("web_fetch", ["knowledge_search"])
    assert "MCP server 'files'" in outbound.reason("mcp__files__write", ["read_file"])
    assert "your memory" in outbound.reason("web_search", [outbound.MEMORY])


def row(role, calls=None, call_id=None, error=False):
    return role, calls, call_id, error


def test_branch_reads_pairs_each_result_with_its_call():
    rows = [
        row("user"),
        row("assistant", [{"id": "a", "name": "read_file", "arguments": "{}"},
                          {"id": "b", "name": "web_search", "arguments": "{}"}]),
        row("tool", call_id="a", error=True),  # denied or missing: nothing read
        row("tool", call_id="b"),
        row("assistant", [{"id": "a", "name": "web_search", "arguments": "{}"}]),  # an id used again
        row("tool", call_id="a"),
    ]
    assert branch_reads(rows) == []
    rows += [row("assistant", [{"id": "c", "name": "search_files", "arguments": "{}"}]), row("tool", call_id="c")]
    assert branch_reads(rows) == ["search_files"]
    # A call whose result was never committed (the process died) read nothing the model saw.
    assert branch_reads([row("assistant", [{"id": "d", "name": "read_file"}])]) == []


def test_the_branch_is_looked_up_once_and_only_when_an_outbound_call_is_decided():
    looked = []

    def earlier():
        looked.append(1)
        return ["read_file"]

    reads = TurnReads(earlier)
    assert reads.check(call("ask_user", "{}"), ask_user_tool()) is None and looked == []
    out = reads.check(call("web_search", '{"query": "q"}'), web_search_tool(None))
    assert out["sends"] == "q" and "your workspace files" in out["reason"] and looked == [1]
    reads.check(call("web_search", '{"query": "r"}'), web_search_tool(None))
    assert looked == [1]

    # A turn that read something itself needs no look-up at all.
    fresh = TurnReads(earlier)
    fresh.result("shell", is_error=False)
    assert "command output" in fresh.check(call("web_fetch", '{"url": "https://x.example/"}'), fetch_tool())["reason"]
    assert looked == [1]


def test_nothing_read_nothing_asked():
    reads = TurnReads(lambda: [])
    reads.result("web_search", is_error=False)
    reads.result("read_file", is_error=True)
    assert reads.check(call("web_search", '{"query": "q"}'), web_search_tool(None)) is None
    reads.note(outbound.MEMORY)
    assert "your memory" in reads.check(call("web_search", '{"query": "q"}'), web_search_tool(None))["reason"]
