"""Text made well-formed (backend.core.text) and JSON read strictly (backend.json_input), on their own."""
from __future__ import annotations

import pytest

from backend import json_input
from backend.core.text import SplitPairs, has_surrogate, well_formed

GRIN = "\U0001F600"


def test_well_formed_joins_pairs_and_replaces_lone_halves():
    assert well_formed("plain ascii") == "plain ascii"
    assert well_formed(f"é{GRIN}中") == f"é{GRIN}中"
    assert well_formed("a\ud83d" + "\ude00b") == f"a{GRIN}b"  # two code points that were one character
    assert well_formed("\ud800x\udfff\ud83d") == "\ufffdx\ufffd\ufffd"
    assert not has_surrogate(well_formed("\udc00\ud83d\ude00"))


def test_split_pairs_holds_a_high_half_for_the_next_piece_of_its_channel():
    pairs = SplitPairs()
    assert pairs.feed("text", "a\ud83d") == "a"
    assert pairs.feed("args", "\ude00") == "\ufffd"  # another channel's low half is lone
    assert pairs.feed("text", "\ude00b") == f"{GRIN}b"
    assert pairs.feed("text", "\ud83d") == ""
    assert pairs.feed("text", "c") == "\ufffdc"  # the held half met no low one
    assert pairs.feed("args", "x\udbff") == "x"
    assert pairs.held() == ["args"] and pairs.held() == []


def test_strict_json_names_each_place_that_cannot_be_kept():
    with pytest.raises(json_input.JsonInputError) as info:
        json_input.loads('{"a": "\\ud800", "b": [1, NaN, {"c": 1e400}], "d\\udc00": 0, "e": 9223372036854775808,'
                         ' "f": -9223372036854775808, "g": "\\ud83d\\ude00"}')
    assert info.value.kind == "values"
    assert list(info.value.problems) == ["a", "b[1]", "b[2].c", "d\ufffd", "e"]
    assert json_input.loads('{"f": -9223372036854775808, "g": "\\ud83d\\ude00"}') == {"f": -(1 << 63), "g": GRIN}


@pytest.mark.parametrize("depth, refused", [(99, False), (100, True), (100_000, True)])
def test_strict_json_refuses_nesting_past_a_hundred_levels(depth, refused):
    text = '{"x": ' + "[" * depth + "]" * depth + "}"  # the object is one level
    if not refused:
        assert json_input.loads(text)["x"]
        return
    with pytest.raises(json_input.JsonInputError) as info:
        json_input.loads(text)
    assert info.value.kind == "depth"


@pytest.mark.parametrize("text", ["", "{", "{'a': 1}", b"\xff\xfe{}", '{"a": 1,}'])
def test_strict_json_refuses_what_is_not_json(text):
    with pytest.raises(json_input.JsonInputError) as info:
        json_input.loads(text)
    assert info.value.kind == "syntax" and info.value.message
