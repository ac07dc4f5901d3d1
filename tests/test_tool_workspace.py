"""Workspace file tools on a real folder: confinement (.., absolute paths, look-alike siblings, links
out), limits, line ranges, search, .gitignore, exact edits, atomic writes, and the live file index."""
from __future__ import annotations

import json
import os
import shutil
import stat
import time

import pytest

from backend.core.cancel import CancelToken
from backend.core.tools import execute
from backend.core.types import ToolCall
from backend.tools import workspace as workspace_module
from backend.tools.file_index import FileIndex, IgnoreRules, parse_gitignore
from backend.tools.workspace import DEFAULT_MAX_READ, Workspace, workspace_tools

INDEX_TIMEOUT_S = 10.0  # an upper bound for a file event to reach the index, not a delay

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")


class Tools:
    """The five tools on one workspace, called the way a turn calls them (through execute)."""

    def __init__(self, ws: Workspace, index: FileIndex | None = None):
        self.ws, self.index = ws, index
        self.by_name = {t.name: t for t in workspace_tools(ws, index)}

    def call(self, name: str, cancel=None, **args):
        outcome = execute(self.by_name[name], ToolCall("c1", name, json.dumps(args)), cancel or CancelToken())
        return outcome.ok, outcome.result.content

    def ok(self, name: str, **args) -> str:
        ok, text = self.call(name, **args)
        assert ok, text
        return text

    def error(self, name: str, **args) -> str:
        ok, text = self.call(name, **args)
        assert not ok, f"{name} {args} should have failed but gave: {text}"
        return text


def snapshot(top, skip) -> dict:
    """Every file under `top` except the `skip` folder: content and mtime, to prove nothing changed."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) != str(skip)]
        for name in filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            content = None
            if stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    content = f.read()
            found[path] = (content, st.st_mtime_ns)
    return found


@pytest.fixture
def tree(tmp_path):
    """ws/ with links pointing out, beside ws-sibling/ (same name start) and outside/, each with a sentinel."""
    ws, sibling, outside = tmp_path / "ws", tmp_path / "ws-sibling", tmp_path / "outside"
    for folder in (ws, sibling, outside):
        folder.mkdir()
    (outside / "sentinel.txt").write_text("SENTINEL outside\n")
    (sibling / "secret.txt").write_text("SENTINEL sibling\n")
    (ws / "inside.txt").write_text("hello\n")
    os.symlink(outside / "sentinel.txt", ws / "link_file")
    os.symlink(outside, ws / "link_dir")
    os.symlink("../ws-sibling", ws / "sib")  # as a string, /ws-sibling starts with /ws
    os.symlink(outside / "new.txt", ws / "dangling")
    return tmp_path


def tools_on(tmp_path, **kw) -> Tools:
    return Tools(Workspace(tmp_path / "ws", **kw))


# (what, a file path, a folder path): each leaves the workspace a different way
ESCAPES = [
    ("dotdot", "../outside/sentinel.txt", "../outside"),
    ("dotdot-sibling", "../ws-sibling/secret.txt", "../ws-sibling"),
    ("link-to-sibling", "sib/secret.txt", "sib"),
    ("link-to-file", "link_file", "link_file"),
    ("link-to-dir", "link_dir/sentinel.txt", "link_dir"),
    ("dangling-link", "dangling", "dangling"),
    ("absolute", "{root}/outside/sentinel.txt", "{root}/outside"),
    ("absolute-inside", "{root}/ws/inside.txt", "{root}/ws"),
]
WHY = {"dotdot": "'..'", "dotdot-sibling": "'..'", "absolute": "absolute", "absolute-inside": "absolute"}


def _arguments(tool: str, file_path: str, dir_path: str) -> dict:
    return {"read_file": {"path": file_path},
            "write_file": {"path": file_path, "content": "overwritten"},
            "edit_file": {"path": file_path, "old_text": "SENTINEL", "new_text": "edited"},
            "list_files": {"path": dir_path, "recursive": True},
            "search_files": {"pattern": "SENTINEL", "path": dir_path}}[tool]


@pytest.mark.parametrize("what,file_path,dir_path", ESCAPES, ids=[e[0] for e in ESCAPES])
@pytest.mark.parametrize("tool", ["read_file", "write_file", "edit_file", "list_files", "search_files"])
def test_no_path_reaches_outside_the_workspace(tree, tool, what, file_path, dir_path):
    tools = tools_on(tree)
    args = _arguments(tool, file_path.format(root=tree), dir_path.format(root=tree))
    before = snapshot(tree, tree / "ws")
    text = tools.error(tool, **args)
    assert snapshot(tree, tree / "ws") == before  # same files outside, same content, same mtimes
    assert "SENTINEL" not in text
    given = args["path"]
    assert repr(given) in text, text  # the message names the path as the model gave it
    assert WHY.get(what, "outside the workspace") in text, text


def test_whole_tree_listing_and_search_do_not_follow_links_out(tree):
    tools = tools_on(tree)
    listing = tools.ok("list_files", recursive=True).splitlines()
    assert "inside.txt" in listing and "link_dir" in listing
    assert not any(line.startswith(("link_dir/", "sib/")) for line in listing), listing
    found = tools.ok("search_files", pattern="SENTINEL")
    assert found.startswith("No matches"), found


def test_links_inside_the_workspace_work_and_writing_keeps_the_link(tree):
    ws = tree / "ws"
    os.symlink("inside.txt", ws / "alias")
    tools = tools_on(tree)
    assert tools.ok("read_file", path="alias") == "     1\thello"
    tools.ok("write_file", path="alias", content="changed\n")
    assert os.path.islink(ws / "alias") and (ws / "inside.txt").read_text() == "changed\n"


def test_files_over_the_size_limit_are_refused(tree):
    ws = tree / "ws"
    (ws / "fits.txt").write_text("x" * 99 + "\n")
    (ws / "big.txt").write_text("x" * 100 + "\n")
    tools = tools_on(tree, max_read_bytes=100)
    assert tools.ok("read_file", path="fits.txt").startswith("     1\txxx")
    text = tools.error("read_file", path="big.txt")
    assert "'big.txt'" in text and "101 bytes" in text and "100 bytes limit" in text, text
    found = tools.ok("search_files", pattern="xxx").splitlines()
    assert found[0].startswith("fits.txt:1: xxx") and found[1].startswith("[1 file(s) not searched"), found


def test_the_default_read_limit_is_2_mb(tree):
    (tree / "ws" / "huge.txt").write_text("y" * DEFAULT_MAX_READ + "\n")
    text = tools_on(tree).error("read_file", path="huge.txt")
    assert "2.0 MB limit" in text, text


def test_binary_and_non_utf8_files_are_refused(tree):
    ws = tree / "ws"
    (ws / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (ws / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    tools = tools_on(tree)
    assert "'image.png' is a binary file" in tools.error("read_file", path="image.png")
    assert "'latin1.txt' is not UTF-8 text" in tools.error("read_file", path="latin1.txt")
    found = tools.ok("search_files", pattern="PNG")
    assert found.startswith("No matches") and "not searched" in found, found


def test_read_line_ranges(tree):
    (tree / "ws" / "ten.txt").write_text("".join(f"line {n}\r\n" for n in range(1, 11)))
    tools = tools_on(tree)
    whole = tools.ok("read_file", path="ten.txt").splitlines()
    assert whole[0] == "     1\tline 1" and whole[-1] == "    10\tline 10" and len(whole) == 10
    part = tools.ok("read_file", path="ten.txt", start_line=3, end_line=5).splitlines()
    assert part == ["     3\tline 3", "     4\tline 4", "     5\tline 5",
                    "[lines 3-5 of 10; call read_file with start_line=6 to read on]"]
    tail = tools.ok("read_file", path="ten.txt", start_line=9, end_line=50).splitlines()
    assert tail == ["     9\tline 9", "    10\tline 10", "[lines 9-10 of 10]"]
    assert "has 10 lines; start_line 11" in tools.error("read_file", path="ten.txt", start_line=11)
    assert "before start_line" in tools.error("read_file", path="ten.txt", start_line=5, end_line=4)
    assert "'start_line' must be at least 1" in tools.error("read_file", path="ten.txt", start_line=0)


def test_a_long_read_stops_with_where_to_go_on(tree, monkeypatch):
    monkeypatch.setattr(workspace_module, "OUTPUT_CHARS", 40)
    (tree / "ws" / "ten.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    lines = tools_on(tree).ok("read_file", path="ten.txt").splitlines()
    assert lines[-1] == f"[lines 1-{len(lines) - 1} of 10; call read_file with start_line={len(lines)} to read on]"
    assert 1 < len(lines) < 10


def test_missing_files_and_folders_say_so(tree):
    tools = tools_on(tree)
    assert "'nope.txt' does not exist" in tools.error("read_file", path="nope.txt")
    assert "'inside.txt' is a file, not a folder" in tools.error("list_files", path="inside.txt")
    assert "A file path is needed" in tools.error("read_file", path=".")


def test_search_text_and_regex(tree):
    ws = tree / "ws"
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("x = a.b\ny = axb\nZ = A.B\n")
    (ws / "notes.md").write_text("a.b in notes\n")
    tools = tools_on(tree)
    text = tools.ok("search_files", pattern="a.b", path="src")
    assert text.splitlines() == ["src/a.py:1: x = a.b"]
    regex = tools.ok("search_files", pattern=r"a.b$", regex=True, path="src")
    assert regex.splitlines() == ["src/a.py:1: x = a.b", "src/a.py:2: y = axb"]
    either = tools.ok("search_files", pattern="a.b", ignore_case=True)
    assert either.splitlines() == ["notes.md:1: a.b in notes", "src/a.py:1: x = a.b", "src/a.py:3: Z = A.B"]
    assert tools.ok("search_files", pattern="a.b", glob="*.md").splitlines() == ["notes.md:1: a.b in notes"]
    capped = tools.ok("search_files", pattern="=", path="src", max_results=2).splitlines()
    assert capped[:2] == ["src/a.py:1: x = a.b", "src/a.py:2: y = axb"] and capped[2].startswith("[stopped at 2")
    bad = tools.error("search_files", pattern="(unclosed", regex=True)
    assert "The regex '(unclosed' is not valid" in bad and "regex to false" in bad, bad
    assert tools.ok("search_files", pattern="(unclosed").startswith("No matches")  # as text it is fine


def test_a_cancelled_search_says_it_is_incomplete(tree):
    cancel = CancelToken()
    cancel.cancel()
    ok, text = tools_on(tree).call("search_files", cancel=cancel, pattern="hello")
    assert ok and "[cancelled" in text, text


GITIGNORE = """\
# comment
*.log
!keep.log
build/
!build/rescued.js
/top.txt
docs/**/*.tmp
secret\\ 
"""

TREE_FILES = ["a.log", "keep.log", "build/out.js", "build/rescued.js", "src/build/deep.js", "top.txt",
              "src/top.txt", "docs/a/b/c.tmp", "docs/c.tmp", "docs/c.txt", "secret ", "secret",
              "nested/x.log", "nested/private.md", "private.md", ".git/config", "src/main.py"]
VISIBLE = {"keep.log", "src/top.txt", "docs/c.txt", "secret", "nested/x.log", "private.md", "src/main.py",
           ".gitignore", "nested/.gitignore"}


def _ignore_tree(ws):
    for rel in TREE_FILES:
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(f"NEEDLE in {rel}\n")
    (ws / ".gitignore").write_text(GITIGNORE)
    (ws / "nested" / ".gitignore").write_text("private.md\n!*.log\n")


@pytest.fixture(params=["walk", "index"])
def ignore_tools(request, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    _ignore_tree(ws)
    workspace = Workspace(ws)
    index = None
    if request.param == "index":
        index = FileIndex(workspace.root)
        index.start()
        request.addfinalizer(index.stop)
    return Tools(workspace, index)


def test_gitignore_is_respected_by_list_and_search(ignore_tools):
    listing = ignore_tools.ok("list_files", recursive=True).splitlines()
    assert {p for p in listing if not p.endswith("/")} == VISIBLE
    assert "build/" not in listing and ".git/" not in listing and "nested/" in listing
    found = ignore_tools.ok("search_files", pattern="NEEDLE").splitlines()
    assert {line.split(":")[0] for line in found} == VISIBLE - {".gitignore", "nested/.gitignore"}
    top = ignore_tools.ok("list_files").splitlines()
    assert top == [".gitignore", "docs/", "keep.log", "nested/", "private.md", "secret", "src/"]
    assert "excluded by .gitignore" in ignore_tools.error("list_files", path="build")
    assert ignore_tools.ok("read_file", path="build/out.js")  # named outright, an ignored file still reads


def test_a_listing_stops_at_max_entries(ignore_tools):
    lines = ignore_tools.ok("list_files", recursive=True, max_entries=3).splitlines()
    assert lines[:3] == [".gitignore", "docs/", "docs/a/"] and lines[3].startswith("[stopped at 3 entries")


@pytest.mark.parametrize("pattern,path,is_dir,ignored", [
    ("**/foo", "a/b/foo", False, True),
    ("a/**/b", "a/b", False, True),
    ("a/**/b", "a/x/y/b", False, True),
    ("a/**/b", "x/a/b", False, False),
    ("foo/**", "foo/x/y", False, True),
    ("foo/**", "foo", True, False),
    ("*.c", "dir/x.c", False, True),
    ("dir/*.c", "dir/sub/x.c", False, False),  # * does not cross a slash
    ("logs/", "logs", False, False),  # trailing slash: folders only
    ("logs/", "a/logs", True, True),
    ("\\#hash", "#hash", False, True),
    ("\\!bang", "!bang", False, True),
    ("f?o[0-9]", "fxo7", False, True),
    ("f?o[!0-9]", "fxo7", False, False),
])
def test_gitignore_patterns(tmp_path, pattern, path, is_dir, ignored):
    (tmp_path / ".gitignore").write_text(pattern + "\n")
    assert IgnoreRules(tmp_path).ignored(path, is_dir) is ignored


def test_a_gitignore_with_many_double_stars_is_matched_at_once(tmp_path):
    # Each "**" tried split by split took depth^k steps: 7 of them over 32 folders ran for seconds, 9 for minutes.
    (tmp_path / ".gitignore").write_text("a/" + "**/x/" * 9 + "zz\n" + "**/" * 40 + "never\n")
    deep = "/".join(["a"] + ["x"] * 30 + ["y"])
    started = time.monotonic()
    rules = IgnoreRules(tmp_path)
    assert rules.ignored(deep, False) is False
    assert rules.ignored("a/" + "x/" * 9 + "zz", False) is True
    assert time.monotonic() - started < 1.0


def test_gitignore_comments_blank_lines_and_trailing_spaces():
    rules = parse_gitignore("# c\n\n   \nfoo   \nbar\\ \n")
    assert [r.parts[-1] for r in rules] == ["foo", "bar "]


def test_edit_with_zero_one_and_two_matches(tree):
    ws = tree / "ws"
    (ws / "code.py").write_text("a = 1\nb = 2\na = 1\n")
    os.chmod(ws / "code.py", 0o750)
    tools = tools_on(tree)
    none = tools.error("edit_file", path="code.py", old_text="c = 3", new_text="c = 4")
    assert "(0 matches)" in none and "'code.py'" in none, none
    two = tools.error("edit_file", path="code.py", old_text="a = 1", new_text="a = 9")
    assert "occurs 2 times in 'code.py'" in two and "replace_all" in two, two
    assert (ws / "code.py").read_text() == "a = 1\nb = 2\na = 1\n"
    assert tools.ok("edit_file", path="code.py", old_text="b = 2", new_text="b = 3") == \
        "Replaced 1 occurrence in code.py."
    assert (ws / "code.py").read_text() == "a = 1\nb = 3\na = 1\n"
    assert tools.ok("edit_file", path="code.py", old_text="a = 1\n", new_text="", replace_all=True) == \
        "Replaced 2 occurrences in code.py."
    assert (ws / "code.py").read_text() == "b = 3\n"
    assert stat.S_IMODE(os.stat(ws / "code.py").st_mode) == 0o750  # the atomic write keeps the mode
    assert "Use write_file" in tools.error("edit_file", path="new.py", old_text="x", new_text="y")


def test_edit_matches_across_windows_line_ends(tree):
    (tree / "ws" / "win.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    tools_on(tree).ok("edit_file", path="win.txt", old_text="one\ntwo", new_text="1\n2")
    assert (tree / "ws" / "win.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_write_creates_folders_overwrites_and_leaves_no_temp_files(tree):
    ws = tree / "ws"
    tools = tools_on(tree)
    assert tools.ok("write_file", path="a/b/c.txt", content="hi\n") == "Created a/b/c.txt (3 bytes)."
    assert (ws / "a" / "b" / "c.txt").read_text() == "hi\n"
    assert tools.ok("write_file", path="a/b/c.txt", content="bye\n") == "Overwrote a/b/c.txt (4 bytes)."
    assert (ws / "a" / "b" / "c.txt").read_text() == "bye\n"
    assert os.listdir(ws / "a" / "b") == ["c.txt"]
    assert "part of it is a file" in tools.error("write_file", path="inside.txt/x.txt", content="")
    assert "is a folder" in tools.error("write_file", path="a/b", content="")
    assert "is protected (.git)" in tools.error("write_file", path=".git/hooks/pre-commit", content="")
    assert not (ws / ".git").exists()


def test_tool_flags_and_schemas(tree):
    tools = tools_on(tree).by_name
    assert sorted(tools) == ["edit_file", "list_files", "read_file", "search_files", "write_file"]
    for name in ("list_files", "read_file", "search_files"):
        assert tools[name].concurrent and not tools[name].needs_approval
    for name in ("write_file", "edit_file"):
        assert tools[name].needs_approval and not tools[name].concurrent
    assert tools["edit_file"].spec.parameters["required"] == ["path", "old_text", "new_text"]
    assert tools["search_files"].spec.parameters["properties"]["regex"]["type"] == "boolean"
    assert "must be a string" in tools_on(tree).error("read_file", path=3)


# --- the live index ---

@pytest.fixture
def index(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "first.txt").write_text("1\n")
    (ws / ".gitignore").write_text("*.log\n")
    idx = FileIndex(ws)
    idx.start()
    yield idx
    idx.stop()


def test_index_starts_with_what_is_there(index):
    assert index.running and index.files() == {"first.txt", ".gitignore"}


def test_index_sees_files_created_deleted_and_moved(index):
    ws = index.root
    with open(os.path.join(ws, "new.txt"), "w") as f:
        f.write("x")
    assert index.wait_for(lambda: "new.txt" in index.files(), INDEX_TIMEOUT_S)
    os.replace(os.path.join(ws, "new.txt"), os.path.join(ws, "moved.txt"))
    assert index.wait_for(lambda: "moved.txt" in index.files() and "new.txt" not in index.files(),
                          INDEX_TIMEOUT_S)
    os.remove(os.path.join(ws, "moved.txt"))
    assert index.wait_for(lambda: index.files() == {"first.txt", ".gitignore"}, INDEX_TIMEOUT_S)


def test_index_follows_folders_made_moved_and_removed(index):
    ws = index.root
    os.makedirs(os.path.join(ws, "d", "e"))
    for rel in ("d/one.txt", "d/e/two.txt"):
        with open(os.path.join(ws, rel), "w") as f:
            f.write("x")
    assert index.wait_for(lambda: {"d/one.txt", "d/e/two.txt"} <= index.files(), INDEX_TIMEOUT_S)
    assert {"d", "d/e"} <= index.dirs()
    os.rename(os.path.join(ws, "d"), os.path.join(ws, "z"))
    assert index.wait_for(lambda: index.files() == {"first.txt", ".gitignore", "z/one.txt", "z/e/two.txt"},
                          INDEX_TIMEOUT_S), index.files()
    assert index.dirs() == {"z", "z/e"}
    shutil.rmtree(os.path.join(ws, "z"))
    assert index.wait_for(lambda: index.files() == {"first.txt", ".gitignore"} and not index.dirs(),
                          INDEX_TIMEOUT_S)


def test_index_leaves_ignored_files_out_and_rescans_when_gitignore_changes(index):
    ws = index.root
    for name in ("noise.log", "marker.txt"):  # the marker's event comes after the ignored file's
        with open(os.path.join(ws, name), "w") as f:
            f.write("x")
    assert index.wait_for(lambda: "marker.txt" in index.files(), INDEX_TIMEOUT_S)
    assert "noise.log" not in index.files()
    with open(os.path.join(ws, ".gitignore"), "w") as f:
        f.write("*.txt\n")
    assert index.wait_for(lambda: index.files() == {".gitignore", "noise.log"}, INDEX_TIMEOUT_S), index.files()


def test_list_and_search_read_the_running_index_not_the_disk(index, monkeypatch):
    def no_walking(*args, **kw):
        raise AssertionError("walked the disk although an index is running")

    monkeypatch.setattr(workspace_module, "walk", no_walking)
    tools = Tools(Workspace(index.root), index)
    with open(os.path.join(index.root, "later.txt"), "w") as f:
        f.write("findme\n")
    assert index.wait_for(lambda: "later.txt" in index.files(), INDEX_TIMEOUT_S)
    assert tools.ok("list_files").splitlines() == [".gitignore", "first.txt", "later.txt"]
    assert tools.ok("search_files", pattern="findme") == "later.txt:1: findme"
    index.stop()
    assert "walked the disk" in tools.error("list_files")  # stopped, it falls back to walking
