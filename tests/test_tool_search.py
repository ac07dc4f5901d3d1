"""search_files against patterns built to take forever, on real files: RE2 answers at once,
ordinary searches find what they did before, and every bound (pattern size, long lines, bytes,
time, Stop) ends a search with a sentence saying so."""
from __future__ import annotations

import random
import re
import time

import pytest

from backend.core.cancel import CancelToken
from backend.tools import line_search
from backend.tools.workspace import Workspace, split_lines
from tests.test_tool_workspace import Tools

FAST_S = 1.0  # each of these searches takes milliseconds; Python's re took seconds to hours


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    return root


def tools(root) -> Tools:
    return Tools(Workspace(root))


def timed(tool: Tools, **args) -> str:
    started = time.monotonic()
    text = tool.ok("search_files", **args)
    assert time.monotonic() - started < FAST_S, (args, time.monotonic() - started)
    return text


# --- patterns that backtrack for ever in Python's re --------------------------------------

CATASTROPHIC = [
    (r"(=+)+x", "rulers.txt"),
    (r"(=|==)*x", "rulers.txt"),
    (r"(.|.)*Q", "prose.txt"),
    (r"(\w+\s?)*!", "prose.txt"),
    (r"(a|aa)+b", "prose.txt"),
    (r"^(([a-z])+.)+[A-Z]([a-z])+$", "prose.txt"),
]


@pytest.fixture
def traps(ws):
    # Lines of 26-29 '=' took Python's re seconds each; 40 would take hours.
    rulers = [("=" * n) for n in (26, 27, 28, 29, 40, 100, 100_000)]
    (ws / "rulers.txt").write_text("\n".join(rulers) + "\n")
    prose = ["the quick brown fox jumps ov", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
             "a sentence of exactly forty characters..", "x" * 27]
    (ws / "prose.txt").write_text("\n".join(prose) + "\n")
    return ws


@pytest.mark.parametrize("pattern,name", CATASTROPHIC, ids=[p for p, _ in CATASTROPHIC])
def test_a_catastrophic_pattern_answers_at_once(traps, pattern, name):
    text = timed(tools(traps), pattern=pattern, regex=True, path=name)
    assert text == f"No matches for {pattern!r} in {name}.", text


def test_the_same_shapes_still_find_what_they_match(traps):
    t = tools(traps)
    found = timed(t, pattern=r"^(=+)+$", regex=True, path="rulers.txt").splitlines()
    assert [line.split(":")[1] for line in found] == ["1", "2", "3", "4", "5", "6", "7"], found
    assert found[6].endswith("=" * 300 + " …")  # a long line is shown cut
    found = timed(t, pattern=r"(a|aa)+$", regex=True, ignore_case=True).splitlines()
    assert found == ["prose.txt:2: " + "a" * 40], found


def test_a_catastrophic_pattern_over_a_whole_tree_answers_at_once(ws):
    for i in range(50):
        (ws / f"f{i:02}.txt").write_text(("=" * 29 + "\n") * 200)
    text = timed(tools(ws), pattern=r"(=+)+x", regex=True)
    assert text.startswith("No matches"), text


# --- ordinary searches --------------------------------------------------------------------

def test_ordinary_searches_find_the_same_lines_as_before(ws):
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("import os\n\ndef main():\n    return os.getcwd()  # ÄPFEL\n\n"
                                       "def helper(x):\n    return x\n")
    (ws / "src" / "win.txt").write_bytes(b"first end\r\nsecond\r\n\r\nlast end\r")
    (ws / "notes.md").write_text("Äpfel und Birnen\nstraße\nimport this\n")
    t = tools(ws)
    assert t.ok("search_files", pattern=r"^def \w+\(", regex=True).splitlines() == \
        ["src/app.py:3: def main():", "src/app.py:6: def helper(x):"]
    assert t.ok("search_files", pattern="äpfel", ignore_case=True).splitlines() == \
        ["notes.md:1: Äpfel und Birnen", "src/app.py:4:     return os.getcwd()  # ÄPFEL"]
    assert t.ok("search_files", pattern="STRASSE", ignore_case=True).startswith("No matches")
    assert t.ok("search_files", pattern="STRAßE", ignore_case=True).splitlines() == ["notes.md:2: straße"]
    # Windows line ends: $ is the end of the line, and a line's \r is not part of it.
    assert t.ok("search_files", pattern="end$", regex=True, path="src/win.txt").splitlines() == \
        ["src/win.txt:1: first end", "src/win.txt:4: last end"]
    assert t.ok("search_files", pattern="^$", regex=True, glob="*.py").splitlines() == \
        ["src/app.py:2: ", "src/app.py:5: "]
    # \A and \z are a line's start and end, as each line is matched on its own.
    assert t.ok("search_files", pattern=r"\Aimport", regex=True).splitlines() == \
        ["notes.md:3: import this", "src/app.py:1: import os"]
    assert t.ok("search_files", pattern=r"x\)?:?\z", regex=True, path="src").splitlines() == \
        ["src/app.py:6: def helper(x):", "src/app.py:7:     return x"]
    assert t.ok("search_files", pattern=r"(?i)(?-m:^IMPORT)", regex=True, glob="src/*").splitlines() == \
        ["src/app.py:1: import os"]
    # A match never spans two lines, whatever the pattern says.
    for spanning in (r"os\s+def", r"os[^x]*def", r"(?s)os.def", r"os\n"):
        assert t.ok("search_files", pattern=spanning, regex=True).startswith("No matches"), spanning
    assert t.ok("search_files", pattern="return", max_results=1).splitlines() == \
        ["src/app.py:4:     return os.getcwd()  # ÄPFEL", "[stopped at 1 matches; narrow it with path or glob, "
                                                        "or raise max_results (up to 1000)]"]


def _reference(pattern: str, text: str, name: str) -> list[str]:
    """What the line-by-line search with Python's re found (for patterns both engines read alike)."""
    rx = re.compile(pattern)
    return [f"{name}:{n}: {line}" for n, line in enumerate(split_lines(text), 1) if rx.search(line)]


@pytest.mark.parametrize("chunk", [64, 100, 1 << 18])
def test_matches_and_line_numbers_do_not_depend_on_chunks(ws, monkeypatch, chunk):
    monkeypatch.setattr(line_search, "CHUNK_BYTES", chunk)
    rng = random.Random(chunk)
    pieces = ["a", "b", "ab", "foo", " ", "\r", "=", "é", "日本"]  # ≤ 6 bytes: 10 of them fit a chunk
    patterns = [r"ab", r"^a", r"b$", r"^$", r"o+( |$)", r"a.b", r"é|本$", r"^[^a]*$", r"=\r", r"\Ab", r"a\z"]
    t = tools(ws)
    for trial in range(12):
        lines = ["".join(rng.choice(pieces) for _ in range(rng.randrange(0, 11))) for _ in range(rng.randrange(1, 40))]
        text = "".join(line + rng.choice(["\n", "\r\n"]) for line in lines)[:rng.choice([None, -1])]
        name = f"r{trial}.txt"
        (ws / name).write_bytes(text.encode())
        for pattern in patterns:
            expected = _reference(pattern.replace(r"\z", r"\Z"), text, name) or \
                [f"No matches for {pattern!r} in {name}."]
            assert t.ok("search_files", pattern=pattern, regex=True, path=name).split("\n") == expected, \
                (pattern, text)


# --- what RE2 cannot do, and the bounds ---------------------------------------------------

@pytest.mark.parametrize("pattern", [r"(a)\1", r"foo(?=bar)", r"(?<=a)b", r"(?<!a)b", r"(?!x)y", r"end\Z",
                                     r"(?>a+)b", r"a++"])
def test_what_re2_cannot_do_is_an_error_the_model_can_act_on(ws, pattern):
    (ws / "a.txt").write_text("aa foobar\n")
    text = tools(ws).error("search_files", pattern=pattern, regex=True)
    assert text.startswith(f"The regex {pattern!r} is not valid: "), text
    assert "RE2" in text and "backreferences" in text and "lookahead" in text and "regex to false" in text, text
    assert tools(ws).ok("search_files", pattern=pattern).startswith("No matches")  # as text it is fine


def test_a_regex_too_big_or_too_long_is_refused_with_the_limit(ws):
    (ws / "a.txt").write_text("a\n")
    huge = tools(ws).error("search_files", pattern=r"(?:.{0,200}a){4}Q", regex=True)
    assert "too complex" in huge and f"the limit is {line_search.PROGRAM_MAX}" in huge, huge
    too_long = "x" * (line_search.PATTERN_CHARS + 1)
    text = tools(ws).error("search_files", pattern=too_long)
    assert f"{line_search.PATTERN_CHARS + 1} characters long; the limit is {line_search.PATTERN_CHARS}" in text
    assert tools(ws).ok("search_files", pattern="x" * line_search.PATTERN_CHARS).startswith("No matches")
    text = tools(ws).error("search_files", pattern="a", glob="*" * (line_search.PATTERN_CHARS + 1))
    assert f"'glob' is {line_search.PATTERN_CHARS + 1} characters long" in text, text


def test_a_regex_sees_the_start_of_a_very_long_line_and_a_text_all_of_it(ws, monkeypatch):
    monkeypatch.setattr(line_search, "CHUNK_BYTES", 1024)
    (ws / "min.js").write_text("start" + "é" * 2000 + "NEEDLE\nshort NEEDLE\n")
    t = tools(ws)
    found = t.ok("search_files", pattern="NEEDLE|start", regex=True).splitlines()
    assert [line.split(":")[1] for line in found[:-1]] == ["1", "2"], found
    assert found[-1] == ("[1 line(s) longer than 1 KiB: a regex searched only their first 1 KiB "
                         "(a search with regex false sees all of them)]"), found
    assert t.ok("search_files", pattern="D[L]E", regex=True).splitlines()[0] == "min.js:2: short NEEDLE"
    assert [line.split(":")[1] for line in t.ok("search_files", pattern="NEEDLE").splitlines()] == ["1", "2"]


def test_a_search_stops_at_its_byte_budget_and_says_so(ws, monkeypatch):
    monkeypatch.setattr(line_search, "SEARCH_BYTES", 250)
    for name in ("a.txt", "b.txt", "c.txt"):
        (ws / name).write_text("needle\n" + "x" * 92 + "\n")  # 100 bytes each
    lines = tools(ws).ok("search_files", pattern="needle").splitlines()
    assert lines == ["a.txt:1: needle", "b.txt:1: needle",
                     "[stopped after 2 file(s) / 200 bytes: a search reads at most 250 bytes of files; "
                     "narrow the search with path or glob]"], lines


def test_a_search_stops_at_its_time_budget_and_says_so(ws, monkeypatch):
    monkeypatch.setattr(line_search, "SEARCH_SECONDS", 0)
    (ws / "a.txt").write_text("needle\n")
    lines = tools(ws).ok("search_files", pattern="needle").splitlines()
    assert lines[-1] == ("[stopped after 0 file(s) / 0 bytes: a search runs for at most 0 s; "
                         "narrow the search with path or glob]"), lines


class StopAfter(CancelToken):
    """A Stop pressed once the search has looked `checks` times: inside a file, between chunks."""

    def __init__(self, checks: int):
        super().__init__()
        self.left = checks

    def is_set(self) -> bool:
        self.left -= 1
        return self.left < 0 or super().is_set()


def test_stop_is_seen_between_the_chunks_of_one_file(ws, monkeypatch):
    monkeypatch.setattr(line_search, "CHUNK_BYTES", 64)
    (ws / "big.txt").write_text("needle one\n" + ("." * 40 + "\n") * 20 + "needle two\n")
    ok, text = tools(ws).call("search_files", cancel=StopAfter(3), pattern="needle")
    assert ok and text.splitlines() == ["big.txt:1: needle one", "[cancelled: the search is incomplete]"], text
    ok, text = tools(ws).call("search_files", cancel=StopAfter(1000), pattern="needle")
    assert text.splitlines() == ["big.txt:1: needle one", "big.txt:22: needle two"], text


def test_a_slow_regex_is_stopped_within_a_chunk(ws):
    # On random text RE2's DFA gives up on this pattern: about a µs a byte, so some 8 s for this
    # file and a fraction of a second for a chunk.
    size = 8 * 1024 * 1024
    noise = random.Random(5).randbytes(size).translate(bytes(b"ab =xyz\n"[i % 8] for i in range(256)))
    (ws / "noise.txt").write_bytes(noise)
    started = time.monotonic()
    ok, text = Tools(Workspace(ws, max_read_bytes=size)).call(
        "search_files", cancel=StopAfter(3), pattern=r"(?:.{0,25}a){2}(?:.{0,25}b){2}Q", regex=True)
    assert ok and text.endswith("[cancelled: the search is incomplete]"), text
    assert time.monotonic() - started < 4.0  # two chunks, not the whole file
