"""The paged lists' cursors: what one encodes comes back, and anything else is refused the same way."""
import pytest

from backend.store import cursor


def test_a_keyset_cursor_names_its_row_and_keeps_the_url_safe_form():
    text = cursor.encode(1767225600.25, "c_01J")
    assert "=" not in text and "+" not in text and "/" not in text
    assert cursor.decode(text) == (1767225600.25, "c_01J")
    assert cursor.decode(cursor.encode(7, "x")) == (7.0, "x")


@pytest.mark.parametrize("text", ["garbage", "WzEsMl0", cursor.encode(1, "x")[:-2], "!!", "bnVsbA"])
def test_a_cursor_this_server_did_not_give_out_is_refused_with_one_sentence(text):
    with pytest.raises(cursor.BadCursor) as caught:
        cursor.decode(text)
    assert str(caught.value) == cursor.BAD_CURSOR


def test_a_message_id_cursor_is_the_id_and_nothing_else():
    assert cursor.encode_id(42) == "42"
    assert cursor.decode_id("") == 0
    assert cursor.decode_id("42") == 42
    for text in ("abc", "-1", "²", "1" * 19, " 4"):
        with pytest.raises(cursor.BadCursor):
            cursor.decode_id(text)
