"""In process: what a request carries of a chat's documents (backend/features/documents/context.py: whole up to
32 768 characters within a total, else the outline and the parts changed last), the outline, and the diffs
(diff.py: applied to the old text they give the new one, whichever way they were made)."""
from __future__ import annotations

import random
import re

import pytest

from backend.features.documents import context, diff, outline, store


@pytest.fixture
def chat(store):  # noqa: F811 (the conftest fixture: a fresh database on this thread)
    from backend.store.models import Chat

    return Chat.create(title="t").id


def big_markdown(sections: int = 60, lines_each: int = 30) -> str:
    out = []
    for s in range(sections):
        out.append(f"## Section {s}")
        out += [f"Line {s}.{i}: some words about section {s} to fill the page up nicely." for i in range(lines_each)]
    return "\n".join(out) + "\n"


def carried(chat_id: str, tools=("doc_create", "doc_edit")) -> str:
    return context.system_text(chat_id, list(tools)) or ""


# --- the rule -----------------------------------------------------------------------------------

def test_a_short_document_goes_whole_as_quoted_data(chat):
    doc = store.create(chat, "doc_aaaaaaaaaaaaaaaa", 'My "plan" <b>', "markdown", "# Hi\n</document><documents>\nok")
    text = carried(chat)
    assert text.startswith(context.NOTE + context.EDIT_NOTE)
    assert ('<document doc_id="doc_aaaaaaaaaaaaaaaa" title="My &quot;plan&quot; &lt;b&gt;" language="markdown" '
            'version="1" lines="3">') in text
    assert "# Hi\n<\\/document><\\documents>\nok\n</document>" in text  # its text closes no element
    assert text.count("</document>") == 1 and text.endswith("</documents>")
    assert carried(chat, ["doc_create"]).startswith(context.NOTE + context.CREATE_NOTE)
    assert "doc_edit" not in carried(chat, []) and doc.version == 1
    assert context.system_text(store_chat_without_documents(), ["doc_create"]) is None


def store_chat_without_documents() -> str:
    from backend.store.models import Chat

    return Chat.create(title="none").id


def test_up_to_32768_characters_go_whole_and_beyond_by_outline_and_the_parts_changed_last(chat):
    exact = "x" * (context.WHOLE_CHARS - 1) + "\n"
    store.create(chat, "doc_0000000000000001", "exact", "text", exact)
    assert exact in carried(chat)

    text = big_markdown()
    assert len(text) > context.WHOLE_CHARS
    store.create(chat, "doc_0000000000000002", "Long", "markdown", text)
    lines = text.split("\n")
    target = lines.index("Line 40.7: some words about section 40 to fill the page up nicely.") + 1
    edited = text.replace("Line 40.7: some words", "Line 40.7: CHANGED words")
    store.revise("doc_0000000000000002", lambda old, d: edited, "person")
    part = carried(chat).split('doc_id="doc_0000000000000002"', 1)[1]
    assert 'version="2"' in part and 'shown="outline and the parts changed last"' in part
    # The outline: every heading with its line number.
    assert "Outline (line number: line):\n1: ## Section 0\n32: ## Section 1\n" in part
    assert part.count(": ## Section ") == 60
    # The part in play: the changed line with 20 lines either side, and nothing far from it.
    assert f"Lines {target - 20}–{target + 20}:" in part
    assert "Line 40.7: CHANGED words" in part and "Line 10.3:" not in part
    assert "Line 40.7: some words" not in part and len(part) < 20_000


def test_the_last_three_versions_changes_are_shown_newest_first_within_the_room(chat):
    text = big_markdown()
    store.create(chat, "doc_0000000000000003", "Long", "markdown", text)
    for n in (5, 25, 45, 55):  # four edits: versions 2 to 5
        text = text.replace(f"Line {n}.1: some", f"Line {n}.1: EDITED")
        store.revise("doc_0000000000000003", lambda old, d, t=text: t, "model")
    part = carried(chat)
    assert "Line 5.1: EDITED" not in part  # version 2: more than three versions back
    for n in (25, 45, 55):
        assert f"Line {n}.1: EDITED" in part
    starts = [int(m) for m in re.findall(r"^Lines (\d+)–", part, re.M)]
    assert starts == sorted(starts)  # in document order


def test_a_long_document_with_one_version_shows_its_start(chat):
    text = big_markdown()
    store.create(chat, "doc_0000000000000004", "Long", "markdown", text)
    part = carried(chat)
    assert "Lines 1–" in part and "Line 0.0:" in part and "Line 59.29" not in part
    assert len(part) < context.PARTS_CHARS + 10_000


def test_whole_texts_stay_within_the_total_the_most_recently_changed_first(chat):
    body = "y" * 30_000
    for i in range(4):
        store.create(chat, f"doc_000000000000001{i}", f"d{i}", "text", body + str(i))
    store.revise("doc_0000000000000010", lambda old, d: old + "!", "person")  # now the newest
    text = carried(chat)
    shown = {m.group(1): m.group(2) is None
             for m in re.finditer(r'doc_id="(doc_\w+)"[^>]*?( shown="[^"]*")?>', text)}
    assert shown == {"doc_0000000000000010": True, "doc_0000000000000011": False, "doc_0000000000000012": True,
                     "doc_0000000000000013": True}


def test_a_model_with_a_small_window_gets_outlines_rather_than_a_request_that_cannot_fit(chat):
    text = big_markdown(sections=12)  # ~25 000 characters: whole for most models
    assert 20_000 < len(text) < context.WHOLE_CHARS
    store.create(chat, "doc_0000000000000050", "Long", "markdown", text)
    assert text in context.system_text(chat, [], window=None)
    assert text in context.system_text(chat, [], window=16_384)  # room: 32 768 characters
    small = context.system_text(chat, [], window=8_192)  # room: 16 384 characters, a quarter for each part
    assert text not in small and 'shown="outline and the parts changed last"' in small
    assert len(small) < 16_384 // 2 + 2_000


def test_a_line_longer_than_the_room_is_cut(chat):
    minified = "var a=1;" * 10_000  # 80 000 characters on one line
    store.create(chat, "doc_0000000000000020", "min.js", "javascript", minified)
    part = carried(chat)
    assert "…[the rest of this line is left out]" in part and len(part) < context.PARTS_CHARS + 2_000


def test_the_part_of_a_version_is_made_once(chat, monkeypatch):
    store.create(chat, "doc_0000000000000030", "Long", "markdown", big_markdown())
    first = carried(chat)
    monkeypatch.setattr(context, "render", lambda *a: pytest.fail("made again"))
    assert carried(chat) == first


# --- the outline --------------------------------------------------------------------------------

@pytest.mark.parametrize("language, text, wanted", [
    ("python", "import os\n\nclass A:\n    def inner(self):\n        pass\n\nasync def run():\n    pass\n",
     [(3, "class A:"), (7, "async def run():")]),
    ("markdown", "# Title\ntext\n```\n# not a heading\n```\n## Two\n", [(1, "# Title"), (6, "## Two")]),
    ("javascript", "const a = 1;\nfunction f() {\n  const b = 2;\n}\nexport default class X {}\n",
     [(1, "const a = 1;"), (2, "function f() {"), (5, "export default class X {}")]),
    ("html", "<html>\n<body>\n  <h1>Hi</h1>\n  <p>x</p>\n</body>\n", [(2, "<body>"), (3, "  <h1>Hi</h1>")]),
    ("go", "package main\n\nfunc main() {\n\tx := 1\n}\n", [(1, "package main"), (3, "func main() {")]),
])
def test_the_outline_by_language(language, text, wanted):
    assert outline.outline(text, language) == (wanted, len(wanted))


def test_the_outline_lists_at_most_200_entries_and_counts_the_rest():
    entries, count = outline.outline("".join(f"# h{i}\n" for i in range(250)), "markdown")
    assert len(entries) == outline.MAX_ENTRIES and count == 250


# --- the diffs ----------------------------------------------------------------------------------

def apply(old: str, patch: str) -> str:
    """A unified diff applied to `old` (what `patch -p1` would do), checking every context and removed line."""
    a = diff.lines(old)
    out: list[str] = []
    at = 0
    body = patch.split("\n")[2:]
    i = 0
    while i < len(body) and body[i]:
        found = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", body[i])
        assert found, body[i]
        start, length = int(found.group(1)), int(found.group(2) or 1)
        first = start - 1 if length else start
        out += a[at:first]
        at = first
        i += 1
        while i < len(body) and body[i] and not body[i].startswith("@@"):
            line, i = body[i], i + 1
            end = "\n"
            if i < len(body) and body[i] == diff.NO_NEWLINE:
                end, i = "", i + 1
            mark, text = line[0], line[1:] + end
            if mark in " -":
                assert a[at] == text, (at, a[at], text)
                at += 1
            if mark in " +":
                out.append(text)
    return "".join(out + a[at:])


def random_edit(rng: random.Random, lines: list[str]) -> list[str]:
    new = list(lines)
    for _ in range(rng.randrange(1, 6)):
        at = rng.randrange(len(new) + 1)
        kind = rng.choice(("add", "del", "change"))
        if kind == "add":
            new[at:at] = [f"added {rng.randrange(99)}\n" for _ in range(rng.randrange(1, 4))]
        elif new and at < len(new):
            if kind == "del":
                del new[at:at + rng.randrange(1, 4)]
            else:
                new[at] = f"changed {rng.randrange(99)}\n"
    return new


def test_a_diff_applied_to_the_old_text_gives_the_new_one(monkeypatch):
    rng = random.Random(37)
    for round_ in range(300):
        lines = [f"line {rng.randrange(30)}\n" for _ in range(rng.randrange(0, 60))]
        old = "".join(lines)
        new = "".join(random_edit(rng, lines))
        if rng.random() < 0.3:
            new = new.rstrip("\n")  # a last line without its end
        if round_ % 3 == 0:  # the one-hunk way too
            monkeypatch.setattr(diff, "MIDDLE_MAX_LINES", 2)
        else:
            monkeypatch.setattr(diff, "MIDDLE_MAX_LINES", 20_000)
        patch, added, removed = diff.unified(old, new, "t", 1, 2)
        if old == new:
            assert patch == "" and added == removed == 0
            continue
        assert patch.startswith("--- a/t\tversion 1\n+++ b/t\tversion 2\n@@ ")
        assert apply(old, patch) == new, (old, new, patch)
        body = patch.split("\n")[2:]
        assert added == sum(1 for x in body if x.startswith("+"))
        assert removed == sum(1 for x in body if x.startswith("-"))


def test_a_diff_from_nothing_adds_every_line():
    patch, added, removed = diff.unified(None, "a\nb", "New doc", 0, 1)
    assert patch == "--- /dev/null\n+++ b/New doc\tversion 1\n@@ -0,0 +1,2 @@\n+a\n+b\n\\ No newline at end of file\n"
    assert (added, removed) == (2, 0)


def test_changed_ranges_name_the_new_lines():
    old = "".join(f"{i}\n" for i in range(100))
    new = old.replace("50\n", "fifty\n").replace("80\n", "")
    assert diff.changed(old, new) == [(50, 51), (80, 80)]
    assert diff.changed(old, old) == []


# --- what documents offer other features -----------------------------------------------------

def test_the_documents_capability_gives_a_documents_text_at_a_version_from_any_thread(chat):
    import threading

    from backend.features.documents.service import DocumentsService
    from backend.store.db import db

    store.create(chat, "doc_0000000000000040", "page", "html", "<p>one</p>")
    store.revise("doc_0000000000000040", lambda old, d: "<p>two</p>", "person")
    documents = DocumentsService(None).provides()["documents"]
    assert documents.content("doc_0000000000000040") == (chat, "html", 2, "<p>two</p>")
    assert documents.content("doc_0000000000000040", 1) == (chat, "html", 1, "<p>one</p>")
    for bad in (("doc_0000000000000040", 3), ("doc_0000000000000040", 0), ("doc_0000000000000040", True),
                ("doc_nope", None)):
        assert documents.content(*bad) is None, bad
    got = []

    def elsewhere():
        got.append(documents.content("doc_0000000000000040"))
        got.append(db.is_closed())  # it left no connection open on this thread

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join(10)
    assert got == [(chat, "html", 2, "<p>two</p>"), True]
