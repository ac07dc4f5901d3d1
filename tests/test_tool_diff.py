"""What write_file and edit_file would change, as the person sees it before and after: a unified
diff from a real workspace folder, or a sentence for binary and huge files; a preview writes nothing."""
from __future__ import annotations

import difflib

import pytest

from backend.tools import file_diff
from backend.tools.file_diff import describe_change
from backend.tools.workspace import Workspace, workspace_tools


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "poem.txt").write_text("one\ntwo\nthree\n")
    return root


def previews(root):
    tools = {t.name: t for t in workspace_tools(Workspace(root))}
    return tools["write_file"].preview, tools["edit_file"].preview


def test_only_the_tools_that_write_preview(ws):
    tools = {t.name: t for t in workspace_tools(Workspace(ws))}
    assert {n for n, t in tools.items() if t.preview is not None} == {"write_file", "edit_file"}


def test_a_new_file_is_all_added_and_nothing_is_written(ws):
    write, _ = previews(ws)
    diff = write({"path": "sub/new.txt", "content": "alpha\nbeta\n"})
    assert diff == "--- /dev/null\n+++ b/sub/new.txt\n@@ -0,0 +1,2 @@\n+alpha\n+beta\n"
    assert not (ws / "sub").exists()


def test_an_overwrite_and_an_edit_show_what_goes_and_what_comes(ws):
    write, edit = previews(ws)
    expected = "--- a/poem.txt\n+++ b/poem.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
    assert write({"path": "poem.txt", "content": "one\nTWO\nthree\n"}) == expected
    assert edit({"path": "poem.txt", "old_text": "two", "new_text": "TWO"}) == expected
    assert (ws / "poem.txt").read_text() == "one\ntwo\nthree\n"  # a preview changes nothing


def test_an_edit_of_every_occurrence_and_windows_line_ends(ws):
    (ws / "crlf.txt").write_bytes(b"a = 1\r\nb = 1\r\n")
    _, edit = previews(ws)
    diff = edit({"path": "crlf.txt", "old_text": "= 1\n", "new_text": "= 2\n", "replace_all": True})
    assert diff.split("\n")[3:] == ["-a = 1\r", "-b = 1\r", "+a = 2\r", "+b = 2\r", ""]


def test_a_missing_newline_at_the_end_is_marked(ws):
    write, _ = previews(ws)
    diff = write({"path": "poem.txt", "content": "one\ntwo\nthree"})
    assert diff.endswith("-three\n+three\n\\ No newline at end of file\n")


def test_binary_files_say_so_instead(ws):
    (ws / "image.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    (ws / "latin1.txt").write_bytes("café".encode("latin-1"))
    write, _ = previews(ws)
    for path, content in (("image.bin", "text now"), ("latin1.txt", "café"), ("poem.txt", "nul\x00inside")):
        said = write({"path": path, "content": content})
        assert said == f"{path} is a binary file (it holds NUL bytes or is not UTF-8 text), so no diff is shown."


def test_huge_files_and_huge_diffs_say_so_instead(ws, monkeypatch):
    big = "x" * 100 + "\n"
    (ws / "big.txt").write_text(big * 6_000)  # 606 KB, over the 512 KB a diff is worked out for
    write, _ = previews(ws)
    said = write({"path": "big.txt", "content": "small\n"})
    assert said.startswith("big.txt is too large to show as a diff (592 KB → 6 bytes;")
    said = write({"path": "many.txt", "content": "a\n" * (file_diff.MAX_LINES + 1)})
    assert said.startswith("many.txt is too large to show as a diff (10 KB;") and "5,000 lines" in said
    monkeypatch.setattr(file_diff, "MAX_DIFF_CHARS", 200)
    said = write({"path": "poem.txt", "content": "".join(f"line {i}\n" for i in range(40))})
    assert said.startswith("The diff of poem.txt is too long to show here (40 lines added, 3 removed;")


def test_the_same_content_says_nothing_changes(ws):
    write, _ = previews(ws)
    assert write({"path": "poem.txt", "content": "one\ntwo\nthree\n"}) == \
        "No change: poem.txt already holds exactly this content."


def test_a_call_that_would_fail_has_no_preview(ws, tmp_path):
    write, edit = previews(ws)
    (tmp_path / "outside.txt").write_text("secret\n")
    with pytest.raises(ValueError):
        write({"path": "../outside.txt", "content": "x"})
    with pytest.raises(ValueError, match="not found"):
        edit({"path": "poem.txt", "old_text": "four", "new_text": "4"})


def test_the_diff_applies_as_a_patch():
    """The text is a standard unified diff: applying its hunks to the old file gives the new one."""
    old = "".join(f"line {i}\n" for i in range(30)).encode()
    new = old.replace(b"line 3\n", b"line three\n").replace(b"line 20\n", b"") + b"tail\n"
    diff = describe_change("f.txt", old, new)
    assert diff.count("\n@@ ") == 3  # three changes far apart: three hunks
    assert "".join(difflib.restore(_ndiff_from_unified(diff, old.decode()), 2)) == new.decode()


def _ndiff_from_unified(diff: str, old: str) -> list[str]:
    """Apply a unified diff's hunks to `old`, written as ndiff lines ('  ', '- ', '+ ')."""
    lines = old.splitlines(keepends=True)
    out, at = [], 0
    body = diff.splitlines(keepends=True)[2:]
    for line in body:
        if line.startswith("@@"):
            start = int(line.split()[1].split(",")[0][1:]) - 1
            out += ["  " + x for x in lines[at:start]]
            at = start
        elif line.startswith("-"):
            out.append("- " + line[1:])
            at += 1
        elif line.startswith("+"):
            out.append("+ " + line[1:])
        else:
            out.append("  " + line[1:])
            at += 1
    return out + ["  " + x for x in lines[at:]]
