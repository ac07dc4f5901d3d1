"""Knowledge bases over HTTP against the real server (CONTRACT §8): a folder read in the background
into documents and chunks with locators, queries best first, the refusals and limits, problems
listed while the rest index, changes re-read, uploads, deletion, and an index kept across a restart."""
from __future__ import annotations

import os

import pytest

from tests.sandbox_checks import wait_until
from tests.test_api_catalog import assert_invalid

BASE_FIELDS = {"id", "name", "paths", "file_ids", "status", "documents", "chunks", "updated_at", "problems"}

GUIDE = """# Gardening guide

Intro text about this guide.

## Tomatoes

Tomatoes need full sun and deep watering twice a week. Stake them early.

## Compost

A compost heap turns kitchen scraps into humus within months.
"""

NOTES = "\n".join(f"line {i}: nothing much" for i in range(1, 40)) + "\nline 40: the owl hoots at midnight\n"

CODE = "def greet(name):\n    return f'hello {name}'\n\n\ndef frobnicate_widget():\n    return 42\n"

PAGE = ("<html><head><title>Bike repair</title><style>p {color: red}</style></head><body>"
        "<h1>Bike repair</h1><h2>Brakes</h2><p>Adjust the brake cable tension with the barrel adjuster.</p>"
        "<script>var secret = 'nope';</script></body></html>")


def make_folder(root) -> dict:
    root.mkdir(parents=True, exist_ok=True)
    (root / "guide.md").write_text(GUIDE)
    (root / "notes.txt").write_text(NOTES)
    (root / "sub").mkdir(exist_ok=True)
    (root / "sub" / "tool.py").write_text(CODE)
    (root / "sub" / "bikes.html").write_text(PAGE)
    (root / ".hidden").mkdir(exist_ok=True)
    (root / ".hidden" / "secret.md").write_text("# Hidden\n\nnever indexed frobnicate")
    return {p.name: str(p) for p in root.rglob("*") if p.is_file() and ".hidden" not in p.parts}


def ready(api, base_id) -> dict:
    """The base once its files are read (its status is said by the server: polled)."""
    seen: list[dict] = []

    def done():
        r = api.get(f"/api/knowledge/{base_id}")
        assert r.status == 200, r
        seen.append(r.body)
        return r.body["status"] == "ready"

    wait_until(done, "the base to be read", timeout=30)
    assert "progress" not in seen[-1]
    return seen[-1]


def query(api, base_id, q, **extra) -> list[dict]:
    r = api.post(f"/api/knowledge/{base_id}/query", {"q": q, **extra})
    assert r.status == 200, r
    return r.body["items"]


def create(api, **body) -> dict:
    r = api.post("/api/knowledge", body)
    assert r.status == 201, r
    assert set(r.body) >= BASE_FIELDS
    return r.body


def test_a_folder_is_read_then_found_with_its_locators(api, tmp_path):
    files = make_folder(tmp_path / "garden")
    base = create(api, name="Garden", paths=[str(tmp_path / "garden")])
    assert base["status"] in ("indexing", "ready") and base["paths"] == [str(tmp_path / "garden")]
    base = ready(api, base["id"])
    assert base["documents"] == 4 and base["chunks"] >= 4 and base["problems"] == []
    assert api.get("/api/knowledge").body["items"] == [base]

    docs = api.get(f"/api/knowledge/{base['id']}/documents").body["items"]
    assert sorted(d["path"] for d in docs) == sorted(files.values())
    assert {d["status"] for d in docs} == {"indexed"}
    titles = {os.path.basename(d["path"]): d["title"] for d in docs}
    assert titles["guide.md"] == "Gardening guide" and titles["bikes.html"] == "Bike repair"

    hit = query(api, base["id"], "how often should I water tomatoes?")[0]
    assert set(hit) == {"title", "file", "snippet", "score", "locator", "document_id"}
    assert hit["file"] == files["guide.md"] and hit["locator"] == {"heading": "Gardening guide > Tomatoes"}
    assert "water" in hit["snippet"].lower()
    # The notes are one chunk: their 40 lines, 1-based.
    assert query(api, base["id"], "owl midnight")[0]["locator"] == {"lines": [1, 40]}
    code = query(api, base["id"], "frobnicate widget")
    assert [h["file"] for h in code] == [files["tool.py"]]  # the hidden folder's file is never read
    assert query(api, base["id"], "brake cable")[0]["locator"] == {"heading": "Bike repair > Brakes"}
    assert query(api, base["id"], "secret nope") == []  # a page's scripts are not its text
    assert query(api, base["id"], "the and of") == []  # nothing but stop words

    doc = api.get(f"/api/knowledge/{base['id']}/documents/{hit['document_id']}").body
    assert doc["path"] == files["guide.md"] and doc["title"] == "Gardening guide"
    assert any("full sun" in c["text"] and c["locator"] == hit["locator"] for c in doc["chunks"])


@pytest.mark.parametrize("body, field, says", [
    ({"name": "x", "paths": ["relative/notes"]}, "paths", "absolute"),
    ({"name": "x", "paths": ["/no/such/folder/anywhere"]}, "paths", "does not exist"),
    ({"name": "x"}, "paths", "at least one folder or file"),
    ({"name": "x", "paths": []}, "paths", "at least one folder or file"),
    ({"name": "x", "paths": "/tmp"}, "paths", "list"),
    ({"name": "x", "file_ids": ["file_nope"]}, "file_ids", "Upload it first"),
    ({"name": "", "paths": ["/tmp"]}, "name", "empty"),
    ({"paths": ["/tmp"]}, "name", "required"),
    ({"name": "x", "paths": ["/tmp"], "status": "ready"}, "status", "read-only"),
    ({"name": "x", "paths": ["/tmp"], "colour": "red"}, "colour", "Unknown field"),
])
def test_refusals_say_what_to_fix_and_keep_nothing(api, body, field, says):
    assert_invalid(api.post("/api/knowledge", body), field, says=says)
    assert api.get("/api/knowledge").body["items"] == []


def test_unknown_bases_and_documents_are_404(api, tmp_path):
    make_folder(tmp_path / "garden")
    base = ready(api, create(api, name="Garden", paths=[str(tmp_path / "garden")])["id"])
    for r in (api.get("/api/knowledge/kb_nope"), api.patch("/api/knowledge/kb_nope", {"name": "x"}),
              api.delete("/api/knowledge/kb_nope"), api.get("/api/knowledge/kb_nope/documents"),
              api.post("/api/knowledge/kb_nope/query", {"q": "compost"}),
              api.get(f"/api/knowledge/{base['id']}/documents/999999"),
              api.get(f"/api/knowledge/{base['id']}/documents/not-a-number")):
        assert r.status == 404, r
        assert r.body["error"]["message"].endswith("."), r
    assert api.get("/api/knowledge").body["items"] == [base]


def test_the_data_dir_and_a_symlink_loop_are_refused(api, server, tmp_path):
    assert_invalid(api.post("/api/knowledge", {"name": "x", "paths": [str(server.data_dir)]}), "paths",
                   says="Numi's own data folder")
    inside = server.data_dir / "mine"
    inside.mkdir()
    assert_invalid(api.post("/api/knowledge", {"name": "x", "paths": [str(inside)]}), "paths",
                   says="Numi's own data folder")
    assert_invalid(api.post("/api/knowledge", {"name": "x", "paths": [str(server.data_dir.parent)]}), "paths",
                   says="Numi's own data folder")
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    assert_invalid(api.post("/api/knowledge", {"name": "x", "paths": [str(loop)]}), "paths", says="leads back")
    # A link to a folder inside the folder is not followed: the walk ends.
    make_folder(tmp_path / "garden")
    os.symlink(tmp_path / "garden", tmp_path / "garden" / "again")
    base = ready(api, create(api, name="Garden", paths=[str(tmp_path / "garden")])["id"])
    assert base["documents"] == 4


def test_limits_are_named(start_server, tmp_path):
    make_folder(tmp_path / "garden")
    api = start_server(env={"NUMI_KNOWLEDGE_MAX_FILES": "3"}).api()
    assert_invalid(api.post("/api/knowledge", {"name": "x", "paths": [str(tmp_path / "garden")]}), "paths",
                   says="at most 3")
    api = start_server(env={"NUMI_KNOWLEDGE_MAX_BYTES": "200"}).api()
    assert_invalid(api.post("/api/knowledge", {"name": "x", "paths": [str(tmp_path / "garden")]}), "paths",
                   says="at most 200 bytes")


def test_problems_are_listed_while_the_rest_index(start_server, tmp_path):
    folder = tmp_path / "mixed"
    make_folder(folder)
    (folder / "blob.txt").write_bytes(b"\x00\x01binary" * 100)
    (folder / "big.md").write_text("# Big\n\n" + "word " * 2000)
    odd = tmp_path / "picture.bmp"
    odd.write_bytes(b"BM" + b"\x00" * 64)
    api = start_server(env={"NUMI_KNOWLEDGE_MAX_FILE_BYTES": "5000"}).api()
    base = ready(api, create(api, name="Mixed", paths=[str(folder), str(odd)])["id"])
    reasons = {os.path.basename(p["path"]): p["reason"] for p in base["problems"]}
    assert set(reasons) == {"blob.txt", "big.md", "picture.bmp"}, reasons
    assert "not a text file" in reasons["blob.txt"]
    assert "at most 4.9 KB" in reasons["big.md"]
    assert "not a format Numi can read" in reasons["picture.bmp"]
    assert all(r.endswith(".") for r in reasons.values())
    assert base["documents"] == 4
    docs = {os.path.basename(d["path"]): d for d in api.get(f"/api/knowledge/{base['id']}/documents").body["items"]}
    assert docs["blob.txt"]["status"] == "unreadable" and docs["blob.txt"]["reason"] == reasons["blob.txt"]
    assert query(api, base["id"], "compost humus")[0]["file"].endswith("guide.md")


def test_a_change_rereads_only_what_changed(api, tmp_path):
    folder = tmp_path / "garden"
    make_folder(folder)
    base = ready(api, create(api, name="Garden", paths=[str(folder)])["id"])
    before = {d["path"]: d for d in api.get(f"/api/knowledge/{base['id']}/documents").body["items"]}
    (folder / "notes.txt").write_text("the badger digs at dawn\n")
    os.utime(folder / "notes.txt", (1, 1))  # a new mtime whatever the clock's resolution
    (folder / "sub" / "tool.py").unlink()
    (folder / "new.md").write_text("# Bees\n\nBees like lavender.\n")
    r = api.patch(f"/api/knowledge/{base['id']}", {"paths": [str(folder)]})
    assert r.status == 200, r
    base = ready(api, base["id"])
    after = {d["path"]: d for d in api.get(f"/api/knowledge/{base['id']}/documents").body["items"]}
    assert set(after) == set(before) - {str(folder / "sub" / "tool.py")} | {str(folder / "new.md")}
    assert after[str(folder / "guide.md")]["id"] == before[str(folder / "guide.md")]["id"]
    assert query(api, base["id"], "badger dawn")[0]["file"] == str(folder / "notes.txt")
    assert query(api, base["id"], "owl midnight") == [] and query(api, base["id"], "frobnicate") == []
    assert query(api, base["id"], "lavender")[0]["file"] == str(folder / "new.md")


def test_uploaded_files_renaming_and_deleting(api, tmp_path):
    up = api.upload("recipes.md", b"# Recipes\n\n## Soup\n\nSimmer the leeks slowly.\n")
    assert up.status == 201, up
    base = ready(api, create(api, name="Kitchen", file_ids=[up.body["id"]])["id"])
    assert base["documents"] == 1 and base["paths"] == []
    doc = api.get(f"/api/knowledge/{base['id']}/documents").body["items"][0]
    assert doc["file_id"] == up.body["id"] and doc["title"] == "Recipes" and "path" not in doc
    assert query(api, base["id"], "leeks")[0]["locator"] == {"heading": "Recipes > Soup"}

    r = api.patch(f"/api/knowledge/{base['id']}", {"name": "Cooking"})
    assert r.status == 200 and r.body["name"] == "Cooking"
    assert_invalid(api.patch(f"/api/knowledge/{base['id']}", {"file_ids": []}), "paths",
                   says="at least one folder or file")

    assert api.delete(f"/api/knowledge/{base['id']}").status == 204
    for path in (f"/api/knowledge/{base['id']}", f"/api/knowledge/{base['id']}/documents"):
        assert api.get(path).status == 404
    assert api.post(f"/api/knowledge/{base['id']}/query", {"q": "leeks"}).status == 404
    assert api.get("/api/knowledge").body["items"] == []


def test_query_refusals_and_hostile_text(api, tmp_path):
    make_folder(tmp_path / "garden")
    base = ready(api, create(api, name="Garden", paths=[str(tmp_path / "garden")])["id"])
    url = f"/api/knowledge/{base['id']}/query"
    assert_invalid(api.post(url, {"q": "  "}), "q", says="empty")
    assert_invalid(api.post(url, {}), "q", says="required")
    assert_invalid(api.post(url, {"q": "x", "limit": 0}), "limit")
    assert_invalid(api.post(url, {"q": "x", "limit": 51}), "limit")
    assert_invalid(api.post(url, {"q": "x" * 1001}), "q", says="at most 1 000 characters")
    for hostile in ('"unbalanced', "NEAR(compost", "title:compost", "compost*", "-compost", "AND OR NOT",
                    "(((", "🌱 compost", "compost " * 124):
        items = query(api, base["id"], hostile)
        assert all(set(i) == {"title", "file", "snippet", "score", "locator", "document_id"} for i in items)
    assert len(query(api, base["id"], "line nothing much", limit=1)) == 1


def test_the_index_outlives_a_restart_and_reads_what_changed_meanwhile(start_server, tmp_path):
    folder = tmp_path / "garden"
    make_folder(folder)
    data = tmp_path / "data"
    server = start_server(data_dir=data)
    api = server.api()
    base = ready(api, create(api, name="Garden", paths=[str(folder)])["id"])
    server.stop()
    (folder / "guide.md").write_text("# Gardening guide\n\n## Roses\n\nPrune roses in late winter.\n")
    os.utime(folder / "guide.md", (2, 2))
    api = start_server(data_dir=data).api()
    again = ready(api, base["id"])
    assert again["documents"] == 4
    assert query(api, base["id"], "prune roses")[0]["locator"] == {"heading": "Gardening guide > Roses"}
    assert query(api, base["id"], "tomatoes") == []
    assert (data / "knowledge" / "index.db").exists()


def test_a_watched_folder_follows_its_files_and_a_burst_is_read_once(server, api, tmp_path):
    folder = tmp_path / "garden"
    make_folder(folder)
    base = ready(api, create(api, name="Garden", paths=[str(folder)])["id"])
    # Changes made behind Numi's back reach queries within the contract's 10 s, with no request.
    (folder / "sub" / "bees.md").write_text("# Bees\n\nBees like lavender.\n")
    (folder / "notes.txt").write_text("the badger digs at dawn\n")
    (folder / "sub" / "tool.py").unlink()
    wait_until(lambda: [h["file"] for h in query(api, base["id"], "lavender")] == [str(folder / "sub" / "bees.md")]
               and query(api, base["id"], "badger")[:1] != [] and query(api, base["id"], "frobnicate") == [],
               "the folder's changes to be read", timeout=10)

    # A burst (a checkout of 200 files) is one look over the folder, or a few, not 200.
    log = server.data_dir / "logs" / "numi.log"
    looks = log.read_text().count("looked over")
    burst = folder / "checkout"
    burst.mkdir()
    for i in range(200):
        (burst / f"page{i}.md").write_text(f"# Page {i}\n\nquokka number {i}\n")
    def all_read():
        now = api.get(f"/api/knowledge/{base['id']}").body
        return now["status"] == "ready" and now["documents"] == 204  # the four files (one new, one gone) and 200

    wait_until(all_read, "the burst to be read", timeout=30)
    assert log.read_text().count("looked over") - looks <= 3
    assert query(api, base["id"], "quokka 137", limit=50)
