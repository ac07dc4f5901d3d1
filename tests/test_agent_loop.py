"""The agent loop alone, with a scripted stream function: no server, no database."""
import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from backend.core import agent
from backend.core.cancel import CancelToken
from backend.core.errors import ProviderError, RateLimited
from backend.core.tools import Tool, ToolRegistry
from backend.core.types import (
    Message,
    ModelRequest,
    ProviderConfig,
    StepEnd,
    TextDelta,
    ToolCallDelta,
    ToolCallStart,
    ToolSpec,
    Usage,
)

PROVIDER = ProviderConfig(id="p", name="Scripted", kind="openai_compatible", base_url=None, api_key=None)


def request(*messages):
    return ModelRequest(provider=PROVIDER, wire_api="chat_completions", model="m", system="",
                        messages=tuple(messages) or (Message(role="user", content="hi"),))


class Scripted:
    """A stream function playing one list of events (or an exception) per call."""

    def __init__(self, *steps):
        self.steps = list(steps)
        self.requests = []

    def __call__(self, req):
        self.requests.append(req)
        step = self.steps.pop(0)
        return _Stream(step)


class _Stream:
    def __init__(self, step):
        self.step, self.closed = step, False

    def __iter__(self):
        for item in self.step:
            if isinstance(item, Exception):
                raise item
            if callable(item):
                item()
                continue
            yield item

    def close(self):
        self.closed = True


def tool_step(*calls):
    events = []
    for i, (call_id, name, args) in enumerate(calls):
        events += [ToolCallStart(i, call_id, name), ToolCallDelta(i, args[:3]), ToolCallDelta(i, args[3:])]
    return events + [StepEnd("tool_calls")]


def run(stream, tools=None, limits=agent.Limits(), approve=None, cancel=None, req=None):
    events = []
    loop = agent.AgentLoop(req or request(), stream_fn=stream, emit=events.append,
                           approve=approve or (lambda call: agent.Decision("allow")),
                           cancel=cancel or CancelToken(), tools=tools or ToolRegistry(), limits=limits,
                           pool=ThreadPoolExecutor(4))
    return loop.run(), events


def of(events, kind):
    return [e for e in events if isinstance(e, kind)]


def echo_tool(name="echo", concurrent=False, needs_approval=False, fn=None):
    spec = ToolSpec(name=name, description="echo", parameters={"type": "object"})
    return Tool(spec, fn or (lambda args, cancel: json.dumps(args)), concurrent, needs_approval)


def test_text_reply_completes_with_one_final_message():
    outcome, events = run(Scripted([TextDelta("Hel"), TextDelta("lo"), Usage(3, 2), StepEnd("stop")]))
    assert outcome.status == "completed"
    done = of(events, agent.AssistantDone)
    assert [d.message.content for d in done] == ["Hello"] and done[0].final and done[0].status == "complete"
    assert "".join(d.text for d in of(events, agent.Delta)) == "Hello"


def test_tool_calls_are_committed_before_running_and_results_in_call_order():
    order = []
    slow_done = threading.Event()

    def slow(args, cancel):
        slow_done.wait(5)
        order.append("slow")
        return "slow result"

    def fast(args, cancel):
        order.append("fast")
        slow_done.set()
        return "fast result"

    tools = ToolRegistry([echo_tool("slow", concurrent=True, fn=slow), echo_tool("fast", concurrent=True, fn=fast)])
    stream = Scripted(tool_step(("c1", "slow", '{"a": 1}'), ("c2", "fast", '{"b": 2}')),
                      [TextDelta("done"), StepEnd("stop")])
    outcome, events = run(stream, tools)
    assert outcome.status == "completed"
    kinds = [type(e).__name__ for e in events]
    # The assistant message with the calls is reported before any tool starts.
    assert kinds.index("AssistantDone") < kinds.index("ToolStarted")
    assert order == ["fast", "slow"]  # they ran side by side: fast finished first
    assert [r.call.id for r in of(events, agent.ToolResult)] == ["c1", "c2"]
    second = stream.requests[1].messages
    assert [m.role for m in second] == ["user", "assistant", "tool", "tool"]
    assert second[1].tool_calls[0].arguments == '{"a": 1}'
    assert [m.content for m in second[2:]] == ["slow result", "fast result"]


def test_a_calls_arguments_are_reported_piece_by_piece_as_they_stream():
    stream = Scripted([ToolCallStart(0, "c1", "echo"), ToolCallDelta(0, '{"te'), ToolCallDelta(0, ""),
                       ToolCallDelta(0, 'xt": "hi"}'), StepEnd("tool_calls")], [TextDelta("ok"), StepEnd("stop")])
    outcome, events = run(stream, ToolRegistry([echo_tool()]))
    assert outcome.status == "completed"
    pieces = of(events, agent.ToolArguments)
    assert [(p.call_id, p.name, p.delta) for p in pieces] == [("c1", "echo", '{"te'), ("c1", "echo", 'xt": "hi"}')]
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("ToolPreparing") < kinds.index("ToolArguments") < kinds.index("AssistantDone")


def test_unknown_tool_and_raising_tool_become_error_results():
    def boom(args, cancel):
        raise RuntimeError("disk on fire")

    stream = Scripted(tool_step(("c1", "nope", "{}"), ("c2", "boom", "{}"), ("c3", "echo", "{bad json")),
                      [TextDelta("ok"), StepEnd("stop")])
    outcome, events = run(stream, ToolRegistry([echo_tool("boom", fn=boom), echo_tool()]))
    assert outcome.status == "completed"
    results = [r.outcome for r in of(events, agent.ToolResult)]
    assert [r.ok for r in results] == [False, False, False]
    assert "no tool named 'nope'" in results[0].result.content
    assert "disk on fire" in results[1].result.content
    assert "not valid JSON" in results[2].result.content


def test_denied_call_tells_the_model_why():
    stream = Scripted(tool_step(("c1", "echo", "{}")), [TextDelta("ok"), StepEnd("stop")])
    asked = []
    outcome, events = run(stream, ToolRegistry([echo_tool(needs_approval=True)]),
                          approve=lambda call: asked.append(call.id) or agent.Decision("deny", "not today"))
    assert asked == ["c1"]
    result = of(events, agent.ToolResult)[0].outcome
    assert not result.ok and "not today" in result.result.content


def test_step_limit_ends_with_limit():
    steps = [tool_step((f"c{i}", "echo", "{}")) for i in range(3)]
    outcome, _ = run(Scripted(*steps), ToolRegistry([echo_tool()]), limits=agent.Limits(max_steps=2))
    assert outcome.status == "limit" and outcome.error_code == "limit"


def test_tool_call_limit_ends_with_limit():
    stream = Scripted(tool_step(("a", "echo", "{}"), ("b", "echo", "{}")))
    outcome, events = run(stream, ToolRegistry([echo_tool()]), limits=agent.Limits(max_tool_calls=1))
    assert outcome.status == "limit" and not of(events, agent.ToolStarted)


def test_output_limit_keeps_partial_text():
    stream = Scripted([TextDelta("a" * 60), TextDelta("b" * 60), StepEnd("stop")])
    outcome, events = run(stream, limits=agent.Limits(max_output_chars=100))
    assert outcome.status == "limit"
    done = of(events, agent.AssistantDone)[-1]
    assert done.status == "error" and done.message.content.startswith("a" * 60)


def test_retryable_failure_before_first_token_is_retried():
    stream = Scripted([RateLimited("slow down", retryable=True, retry_after=0.01)], [TextDelta("hi"), StepEnd("stop")])
    outcome, events = run(stream)
    assert outcome.status == "completed" and len(stream.requests) == 2


def test_failure_after_text_keeps_partial_and_is_not_retried():
    stream = Scripted([TextDelta("partial "), ProviderError("Scripted dropped the connection", retryable=True)])
    outcome, events = run(stream)
    assert outcome.status == "failed" and "Scripted" in outcome.error_message
    assert len(stream.requests) == 1
    done = of(events, agent.AssistantDone)[-1]
    assert done.status == "error" and done.message.content == "partial "


def test_retries_are_bounded():
    errors = [[ProviderError("down", retryable=True, retry_after=0)] for _ in range(5)]
    stream = Scripted(*errors)
    outcome, _ = run(stream, limits=agent.Limits(max_retries=2))
    assert outcome.status == "failed" and len(stream.requests) == 3


def test_cancel_mid_stream_keeps_partial_and_closes_stream():
    cancel = CancelToken()
    stream = Scripted([TextDelta("one "), cancel.cancel, TextDelta("two"), StepEnd("stop")])
    outcome, events = run(stream, cancel=cancel)
    assert outcome.status == "cancelled"
    done = of(events, agent.AssistantDone)[-1]
    assert done.status == "cancelled" and done.message.content == "one "


@pytest.mark.parametrize("bad", [ValueError("boom"), KeyError("x")])
def test_unexpected_adapter_exception_becomes_provider_failure(bad):
    outcome, _ = run(Scripted([bad]))
    assert outcome.status == "failed" and "Scripted" in outcome.error_message


def test_wall_time_limit_is_checked_between_steps():
    now = [0.0]

    def slow_tool(args, cancel):
        now[0] += 601  # the tool took longer than the turn may
        return "late"

    stream = Scripted(tool_step(("c1", "slow", "{}")), [TextDelta("never"), StepEnd("stop")])
    events = []
    loop = agent.AgentLoop(request(), stream_fn=stream, emit=events.append,
                           approve=lambda call: agent.Decision("allow"), cancel=CancelToken(),
                           tools=ToolRegistry([echo_tool("slow", fn=slow_tool)]), clock=lambda: now[0])
    outcome = loop.run()
    assert outcome.status == "limit" and "600 s" in outcome.error_message
    assert len(stream.requests) == 1 and of(events, agent.ToolResult)


def test_cancel_while_waiting_for_approval_denies_and_ends_cancelled():
    cancel = CancelToken()

    def approve(call):
        cancel.cancel()
        return agent.Decision("deny", "The turn was stopped before anyone answered.")

    stream = Scripted(tool_step(("c1", "echo", "{}")))
    outcome, events = run(stream, ToolRegistry([echo_tool(needs_approval=True)]), approve=approve, cancel=cancel)
    assert outcome.status == "cancelled" and not of(events, agent.ToolStarted)
    assert len(stream.requests) == 1


def test_fallback_answers_after_retries_fail_before_any_text():
    from dataclasses import replace as dc_replace

    from backend.core.errors import ConnectionFailed

    backup = dc_replace(request(), model="backup-model", model_id="m_backup")
    main = dc_replace(request(), model_id="m_main")
    down = [ConnectionFailed("Scripted is unreachable", retryable=True, retry_after=0)]
    stream = Scripted(down, down, [TextDelta("from backup"), StepEnd("stop")])
    events = []
    loop = agent.AgentLoop(main, stream_fn=stream, emit=events.append, approve=lambda c: agent.Decision("allow"),
                           cancel=CancelToken(), tools=ToolRegistry(), limits=agent.Limits(max_retries=1),
                           fallbacks=(agent.Route("m_backup", backup),))
    outcome = loop.run()
    assert outcome.status == "completed"
    fell = of(events, agent.FellBack)
    assert [(f.from_model_id, f.to_model_id) for f in fell] == [("m_main", "m_backup")]
    assert "unreachable" in fell[0].reason
    assert [r.model for r in stream.requests] == ["m", "m", "backup-model"]
    assert stream.requests[2].messages == stream.requests[0].messages


def test_no_fallback_for_a_request_any_model_would_reject():
    from dataclasses import replace as dc_replace

    backup = dc_replace(request(), model_id="m_backup")
    stream = Scripted([ProviderError("bad request", status=400)])
    events = []
    loop = agent.AgentLoop(request(), stream_fn=stream, emit=events.append, approve=lambda c: agent.Decision("allow"),
                           cancel=CancelToken(), tools=ToolRegistry(), fallbacks=(agent.Route("m_backup", backup),))
    assert loop.run().status == "failed" and not of(events, agent.FellBack)


# --- the loop guard: the same call however it is written ---------------------------------------

def path_tool(name="read_file", fn=None):
    spec = ToolSpec(name=name, description="reads", parameters={"type": "object"})
    return Tool(spec, fn or (lambda args, cancel: "contents"), concurrent=True, path_arguments=("path",))


def command_tool():
    spec = ToolSpec(name="shell", description="runs", parameters={"type": "object"})
    return Tool(spec, lambda args, cancel: "ran", trimmed_arguments=("command",))


def asked(tool_name, *arguments):
    """A model asking for `tool_name` once per step with each of `arguments`, then answering."""
    steps = [tool_step((f"c{i}", tool_name, args)) for i, args in enumerate(arguments)]
    return Scripted(*steps, [TextDelta("done"), StepEnd("stop")])


def ran(events):
    return [e.call.id for e in of(events, agent.ToolFinished) if e.outcome.ok]


@pytest.mark.parametrize("third", ['{"path": "a.txt/"}', '{"path": "./a.txt"}', '{"path": "sub/../a.txt"}',
                                   '{"path": ".//a.txt//"}'])
def test_a_path_written_another_way_is_the_same_call(third):
    tools = ToolRegistry([path_tool()])
    outcome, events = run(asked("read_file", '{"path": "a.txt"}', '{"path": "./a.txt"}', third), tools=tools)
    assert (outcome.status, outcome.error_code) == ("limit", "loop_detected"), outcome
    assert ran(events) == ["c0", "c1"]  # the third never ran


def test_paths_in_folders_and_from_the_top_are_written_one_way_too():
    tools = ToolRegistry([path_tool("list_files")])
    outcome, _ = run(asked("list_files", '{"path": "src/lib/", "recursive": true}',
                           '{"recursive": true, "path": "src//lib"}', '{ "path" : "./src/lib/." , "recursive":true}'),
                     tools=tools)
    assert outcome.error_code == "loop_detected"
    outcome, _ = run(asked("list_files", '{"path": "/"}', '{"path": "//"}', '{"path": "///."}'), tools=tools)
    assert outcome.error_code == "loop_detected"


def test_a_command_with_other_surrounding_whitespace_is_the_same_call():
    tools = ToolRegistry([command_tool()])
    outcome, events = run(asked("shell", '{"command": "ls -la"}', '{"command": "  ls -la"}',
                                '{"command": "ls -la\\n"}'),
                          tools=tools)
    assert outcome.error_code == "loop_detected" and ran(events) == ["c0", "c1"]


def test_arguments_in_another_key_order_and_spacing_are_the_same_call():
    tools = ToolRegistry([path_tool()])
    outcome, _ = run(asked("read_file", '{"path": "a.txt", "start_line": 1}', '{"start_line":1,"path":"a.txt"}',
                           '{ "start_line" : 1.0 ,\n "path" : "./a.txt" }'), tools=tools)
    assert outcome.error_code == "loop_detected"


def test_different_paths_commands_and_undeclared_arguments_are_not_a_loop():
    # Control: what names another file, runs another command, or is not declared a path differs.
    tools = ToolRegistry([path_tool(), command_tool(), echo_tool("note")])
    for name, arguments in [
        ("read_file", ['{"path": "a.txt"}', '{"path": "b.txt"}', '{"path": "a.txt/b"}', '{"path": "../a.txt"}',
                       '{"path": "/a.txt"}', '{"path": " a.txt"}']),
        ("shell", ['{"command": "ls"}', '{"command": "ls -la"}', '{"command": "ls  -la"}']),
        ("note", ['{"path": "a.txt"}', '{"path": "./a.txt"}', '{"path": "a.txt/"}']),
    ]:
        outcome, events = run(asked(name, *arguments), tools=tools)
        assert outcome.status == "completed", (name, outcome)
        assert len(ran(events)) == len(arguments)


def test_the_workspace_and_shell_tools_declare_what_makes_a_call_the_same(tmp_path):
    from backend.tools.shell import shell_tool
    from backend.tools.workspace import Workspace, workspace_tools
    (tmp_path / "a.txt").write_text("one\n")
    tools = ToolRegistry([*workspace_tools(Workspace(tmp_path)), shell_tool(tmp_path)])
    outcome, events = run(asked("read_file", '{"path": "a.txt"}', '{"path": "./a.txt"}', '{"path": "a.txt/"}'),
                          tools=tools)
    assert outcome.error_code == "loop_detected" and ran(events) == ["c0", "c1"]
    # Each shell call is refused by the person here, so nothing runs; the guard counts the asking.
    outcome, _ = run(asked("shell", '{"command": "touch x"}', '{"command": " touch x "}', '{"command": "touch x\\t"}'),
                     tools=tools, approve=lambda call: agent.Decision("deny"))
    assert outcome.error_code == "loop_detected"
    assert not (tmp_path / "x").exists()
