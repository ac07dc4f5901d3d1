"""The incremental reader of a tool call's argument JSON (backend/features/documents/partial_json.py), in process:
whatever the pieces, the watched string values come out as `json.loads` of the whole gives them (made
well-formed), escapes and surrogate pairs split across pieces included, keys in any order."""
from __future__ import annotations

import json
import random

import pytest

from backend.core.text import well_formed
from backend.features.documents.partial_json import REPLACEMENT, PartialObject

KEYS = ("title", "language", "content")

CASES = [
    {"title": "notes", "language": "markdown", "content": "# Hello\n\nA line with \"quotes\" and a \\ backslash."},
    {"content": "tabs\tand\r\nnewlines / slashes \b\f", "language": "python", "title": "x.py"},
    {"title": "emoji 😀 and é", "language": "text", "content": "pairs: 😀🎉 𝄞, BMP: ü ✓ 中文"},
    {"other": {"nested": ["a \"}\" b", {"deep": [1, 2, {"c": "]"}]}], "n": -1.5e3}, "flag": True, "none": None,
     "title": "t", "list": ["x", "y"], "language": "json", "count": 12, "content": "{\"a\": [1, 2]}"},
    {"title": "", "language": "", "content": ""},
]


def read(text: str, cuts: list[int]) -> tuple[PartialObject, dict[str, str]]:
    reader = PartialObject(KEYS)
    got: dict[str, list[str]] = {}
    bounds = [0, *cuts, len(text)]
    for a, b in zip(bounds, bounds[1:]):
        for key, piece in reader.feed(text[a:b]):
            got.setdefault(key, []).append(piece)
    return reader, {k: "".join(v) for k, v in got.items()}


def expected(text: str) -> dict[str, str]:
    whole = json.loads(text)
    return {k: well_formed(v) for k, v in whole.items() if k in KEYS and isinstance(v, str)}


@pytest.mark.parametrize("ascii_only", [True, False])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_every_single_character_split_gives_what_json_loads_gives(case, ascii_only):
    text = json.dumps(CASES[case], ensure_ascii=ascii_only)  # ascii: \uXXXX escapes and surrogate pairs
    reader, got = read(text, list(range(1, len(text))))
    want = expected(text)
    assert {k: v for k, v in got.items() if v} == {k: v for k, v in want.items() if v}
    assert {k: reader.text(k) for k in want} == want
    assert reader.ended == set(want) and reader.closed and not reader.broken


def test_random_splits_and_pretty_printing_read_the_same():
    rng = random.Random(37)
    for case in CASES:
        for text in (json.dumps(case), json.dumps(case, indent=2), json.dumps(case, separators=(",", ":"))):
            for _ in range(30):
                cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, rng.randrange(1, 12))))
                reader, got = read(text, cuts)
                assert {k: reader.text(k) for k in expected(text)} == expected(text), (text, cuts)


def test_a_surrogate_pair_split_between_its_halves_joins():
    reader = PartialObject(["content"])
    assert reader.feed('{"content": "a\\ud83d') == [("content", "a")]  # the high half waits
    assert reader.feed("\\ud") == []
    assert reader.feed("e00b") == [("content", "😀b")]
    reader.feed('"}')
    assert reader.text("content") == "a😀b" and reader.closed


@pytest.mark.parametrize("raw, text", [
    ('"\\ud83d"', REPLACEMENT),  # a high half, then the string ends
    ('"\\ude00x"', REPLACEMENT + "x"),  # a low half alone
    ('"\\ud83d\\n"', REPLACEMENT + "\n"),  # a high half, then another escape
    ('"\\ud83d\\u0041"', REPLACEMENT + "A"),  # a high half, then an ordinary \\u
    ('"\\ud83d\\ud83d\\ude00"', REPLACEMENT + "😀"),  # two highs: the first is alone
    ('"\\ud83dz"', REPLACEMENT + "z"),
])
def test_a_half_pair_alone_becomes_the_replacement_character_as_well_formed_makes_it(raw, text):
    whole = '{"content": ' + raw + "}"
    assert well_formed(json.loads(whole)["content"]) == text
    for cut in range(1, len(whole)):
        reader, _ = read(whole, [cut])
        assert reader.text("content") == text, cut


def test_values_arrive_as_they_are_written_not_only_when_whole():
    reader = PartialObject(KEYS)
    assert reader.feed('{"title": "Re') == [("title", "Re")]
    assert "title" not in reader.ended
    assert reader.feed('port", "content": "line 1\\nli') == [("title", "port"), ("content", "line 1\nli")]
    assert reader.ended == {"title"} and reader.text("title") == "Report"
    assert reader.feed("ne 2") == [("content", "ne 2")]
    assert reader.feed('"') == [] and reader.ended == {"title", "content"}
    assert not reader.closed
    reader.feed(" }")
    assert reader.closed and reader.seen == {"title", "content"}
    assert reader.feed('{"title": "more"}') == []  # after the object: nothing


def test_a_watched_key_that_is_no_string_is_noted_and_skipped():
    reader = PartialObject(KEYS)
    reader.feed('{"title": 5, "language": {"x": "y"}, "content": null, "other": "z"}')
    assert reader.not_text == {"title", "language", "content"} and reader.values == {}
    assert reader.closed and reader.seen == {"title", "language", "content", "other"}


@pytest.mark.parametrize("text", ["[1, 2]", '"just a string"', "nonsense", '{"title" "x"}', '{"title": "x" "y"}',
                                  '{title: "x"}'])
def test_what_is_no_json_object_stops_the_reading(text):
    reader, got = read(text, [])
    assert reader.broken and not reader.closed


def test_an_escape_json_does_not_have_stops_the_reading_and_keeps_what_came_before():
    reader = PartialObject(KEYS)
    assert reader.feed('{"content": "good so far \\x41 never"}') == [("content", "good so far ")]
    assert reader.broken and reader.text("content") == "good so far "
    reader = PartialObject(KEYS)
    reader.feed('{"content": "bad hex \\u12G4"}')
    assert reader.broken and reader.text("content") == "bad hex "


def test_a_watched_key_given_twice_stops_the_reading():
    # json.loads keeps the second value, which the reader never showed: it stops instead.
    reader = PartialObject(KEYS)
    reader.feed('{"content": "first", "content": "second"}')
    assert reader.broken and reader.text("content") == "first"
    other = PartialObject(KEYS)
    other.feed('{"x": 1, "x": 2, "title": "ok"}')  # an unwatched key twice is nothing to the reader
    assert other.closed and other.text("title") == "ok"


def test_a_megabyte_arrives_in_small_pieces_in_reasonable_time():
    import time
    content = ("word \"q\" \\ é 😀\n" * 60_000)[:1_000_000]
    text = json.dumps({"title": "big", "language": "text", "content": content})
    started = time.perf_counter()
    reader, _ = read(text, list(range(8, len(text), 8)))  # about 8 characters a token
    took = time.perf_counter() - started
    assert reader.text("content") == content
    assert took < 5.0, took  # ~1 s on a slow, loaded machine; a quadratic reader would take minutes
