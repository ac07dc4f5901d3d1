"""The offline token estimate: close to what BPE tokenizers count, on the safe side."""
from backend.core import tokens
from backend.core.types import Image, Message, ToolCall, ToolSpec


def test_common_english_is_about_a_token_a_word():
    text = "The quick brown fox jumps over the lazy dog."
    assert 9 <= tokens.estimate(text) <= 12  # BPE tokenizers count 10


def test_long_words_code_and_digits_cost_more_than_one_token():
    assert tokens.estimate("internationalization") >= 3
    assert tokens.estimate("1234567890") == 4
    code = 'def f(x):\n    return {"a": x[0]}\n'
    assert tokens.estimate(code) >= 12


def test_wide_scripts_count_a_token_a_character():
    assert tokens.estimate("你好世界") == 4
    assert tokens.estimate("Привет") >= 3


def test_nothing_costs_nothing_and_more_text_never_costs_less():
    assert tokens.estimate("") == 0
    text = "alpha bravo charlie " * 50
    assert tokens.estimate(text + "delta") > tokens.estimate(text)
    assert tokens.estimate("x" * 4000) >= 4000 / 6  # a run without breaks is not one token


def test_messages_tools_and_images_are_framed():
    plain = Message(role="user", content="hello")
    assert tokens.message_tokens(plain) == tokens.MESSAGE_FRAMING + tokens.estimate("hello")
    with_image = Message(role="user", content="hello", images=(Image("image/png", "AAAA"),))
    assert tokens.message_tokens(with_image) == tokens.message_tokens(plain) + tokens.IMAGE_TOKENS
    call = Message(role="assistant", tool_calls=(ToolCall("c1", "search", '{"q": "weather in Paris"}'),))
    assert tokens.message_tokens(call) > 2 * tokens.MESSAGE_FRAMING
    spec = ToolSpec("search", "Search the web.", {"type": "object", "properties": {"q": {"type": "string"}}})
    assert tokens.tools_tokens([spec]) > tokens.estimate("Search the web.") and tokens.tools_tokens([]) == 0
