"""Which history goes to the model: budgets, whole turns, tool pairs, the omission notice."""
import pytest

from backend.core.history import HistoryTooLarge, fit, repair_tool_pairs
from backend.core.tokens import message_tokens
from backend.core.types import Message, ToolCall


def user(text):
    return Message(role="user", content=text)


def assistant(text="", calls=()):
    return Message(role="assistant", content=text, tool_calls=tuple(calls))


def tool(call_id, text="r"):
    return Message(role="tool", content=text, tool_call_id=call_id)


def test_everything_fits_nothing_omitted():
    msgs = [user("a"), assistant("b"), user("c")]
    window = fit(msgs, 10_000)
    assert list(window.messages) == msgs and window.omitted == 0 and window.notice() == ""


def test_older_turns_are_dropped_whole_and_the_model_is_told():
    call = ToolCall("c1", "t", "{}")
    msgs = [user("x" * 50), assistant(calls=[call]), tool("c1", "y" * 50), assistant("z"), user("new")]
    # Room for the newest turn, not for the one before it.
    window = fit(msgs, message_tokens(msgs[-1]) + 5)
    assert [m.content for m in window.messages] == ["new"]
    assert window.omitted == 4 and "left out" in window.notice()


def test_message_count_budget_keeps_tool_results_with_their_call():
    call = ToolCall("c1", "t", "{}")
    msgs = [user("a"), assistant("b"), user("c"), assistant(calls=[call]), tool("c1"), assistant("d"), user("e")]
    window = fit(msgs, 10_000, max_messages=5)
    roles = [m.role for m in window.messages]
    assert roles == ["user", "assistant", "tool", "assistant", "user"]


def test_a_turn_bigger_than_the_budget_fails_clearly():
    with pytest.raises(HistoryTooLarge, match="too long"):
        fit([user("a"), assistant("b"), user("x" * 1000)], 100)


def test_unanswered_tool_calls_get_an_error_result_and_orphans_are_dropped():
    call = ToolCall("c1", "search", "{}")
    fixed = repair_tool_pairs([user("a"), tool("ghost"), assistant(calls=[call]), user("b")])
    assert [m.role for m in fixed] == ["user", "assistant", "tool", "user"]
    assert fixed[2].tool_call_id == "c1" and fixed[2].is_error and "did not run" in fixed[2].content


def test_history_never_starts_with_a_reply():
    window = fit([assistant("orphan"), user("q")], 10_000)
    assert [m.role for m in window.messages] == ["user"]
