"""Watched folders name what changed: a saved file is looked at alone, a folder's change looks the base over.

files.find() must agree with files.walk() on which files a base reads; FolderWatch reports the files
that changed (or None: the whole base) through real watchdog events; the server follows renames,
files hidden or moved away, and folders moved in or removed."""
from __future__ import annotations

import os
import threading

from backend.features.knowledge import files
from backend.features.knowledge.watch import FolderWatch
from tests.sandbox_checks import wait_until
from tests.test_knowledge_api import create, make_folder, query, ready


def test_find_agrees_with_walk(tmp_path):
    root = tmp_path / "notes"
    for folder in (".git", "node_modules", "sub", "sub/deeper"):
        (root / folder).mkdir(parents=True)
    for name in ("a.md", ".git/b.md", "node_modules/c.md", "sub/d.txt", "sub/e.bin", ".f.md", "sub/deeper/g.py"):
        (root / name).write_text("text")
    (tmp_path / "solo.md").write_text("alone")
    (root / "link").symlink_to(root / "sub")  # walk does not follow links to folders
    roots = [str(root), str(tmp_path / "solo.md")]
    walked = {f.path for f in files.walk(roots)}
    assert walked == {str(root / "a.md"), str(root / "sub" / "d.txt"), str(root / "sub" / "deeper" / "g.py"),
                      str(tmp_path / "solo.md")}
    candidates = [str(p) for p in (*root.rglob("*"), root / "gone.md", root / "link" / "d.txt", root,
                                   tmp_path / "solo.md", tmp_path / "other.md")]
    for path in candidates:
        found = files.find(roots, path)
        assert (found is not None) == (path in walked), path
        if found is not None:
            assert found == next(f for f in files.walk(roots) if f.path == path)


def test_the_watch_names_the_files_that_changed_and_a_folder_means_all(tmp_path):
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("one")
    calls: list[tuple[str, list[str] | None]] = []
    lock = threading.Lock()

    def changed(base_id, paths):
        with lock:
            calls.append((base_id, paths))

    watch = FolderWatch(changed)
    watch.start()
    try:
        watch.watch("kb_1", [str(root)])
        two = {str(root / "a.md"), str(root / "b.md")}
        (root / "a.md").write_text("two")
        (root / "b.md").write_text("new")

        def named() -> set[str]:
            with lock:
                assert all(base == "kb_1" and paths is not None and set(paths) <= two for base, paths in calls), calls
                return {p for _, paths in calls for p in paths or ()}

        wait_until(lambda: named() == two, "the watch to name the two files", timeout=10)
        (root / "sub").mkdir()
        wait_until(lambda: ("kb_1", None) in calls, "the watch to report the folder as a look at all", timeout=10)
        with lock:
            assert all(paths is None or set(paths) <= two for _, paths in calls), calls
    finally:
        watch.stop(5)


def test_renames_hidden_files_and_folders_are_followed(api, tmp_path):
    folder = tmp_path / "garden"
    make_folder(folder)
    base = ready(api, create(api, name="Garden", paths=[str(folder)])["id"])
    guide, notes = folder / "guide.md", folder / "notes.txt"

    os.rename(guide, folder / "handbook.md")  # one file renamed: the old name goes, the new one is read
    notes.rename(folder / ".notes.txt")  # hidden now: no longer one of the base's files
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "moths.md").write_text("# Moths\n\nThe lamp draws the moths at night.\n")
    outside.rename(folder / "moved-in")  # a folder moved in: its files are read
    wait_until(lambda: [h["file"] for h in query(api, base["id"], "tomatoes water")] == [str(folder / "handbook.md")]
               and query(api, base["id"], "owl midnight") == []
               and [h["file"] for h in query(api, base["id"], "lamp moths")] == [str(folder / "moved-in" / "moths.md")],
               "the renames and the moved folder to be read", timeout=10)

    for p in (folder / "sub").iterdir():
        p.unlink()
    (folder / "sub").rmdir()  # a folder removed: its files' documents go
    wait_until(lambda: query(api, base["id"], "frobnicate widget") == [] and query(api, base["id"], "brake cable") == [],
               "the removed folder's files to be dropped", timeout=10)
    now = ready(api, base["id"])
    docs = sorted(d["path"] for d in api.get(f"/api/knowledge/{base['id']}/documents").body["items"])
    assert docs == [str(folder / "handbook.md"), str(folder / "moved-in" / "moths.md")] and now["problems"] == []
