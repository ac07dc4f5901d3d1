"""The knowledge viewer's routes against the real server (backend/features/knowledge/viewer.py): a PDF page drawn
as a PNG (by path and uploaded), cached by the browser with an ETag, 404 for a page or a document without pages,
409 for a file changed since it was read or gone; "Open file" hands a path document to the system's opener as it
is now (a real stub `xdg-open` script on PATH that records its argument), and refuses uploads, scripts and a file
gone."""
from __future__ import annotations

import io
import os
import stat

from PIL import Image

from tests import knowledge_files as kf
from tests.sandbox_checks import wait_until
from tests.test_knowledge_api import create, ready

STUB = """#!/bin/sh
printf '%s\\n' "$@" >> "{record}"
"""


def stub_opener(tmp_path):
    """A folder holding an `xdg-open` that appends its arguments to a file; (folder, record file)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "opened.txt"
    opener = bin_dir / "xdg-open"
    opener.write_text(STUB.format(record=record))
    opener.chmod(opener.stat().st_mode | stat.S_IXUSR)
    return bin_dir, record


def documents(api, base_id) -> dict:
    r = api.get(f"/api/knowledge/{base_id}/documents")
    assert r.status == 200, r
    return {os.path.basename(d.get("path") or "") or d["file_id"]: d for d in r.body["items"]}


def png(r) -> Image.Image:
    assert r.status == 200, r
    assert r.headers["Content-Type"] == "image/png"
    image = Image.open(io.BytesIO(r.body))
    image.load()
    return image


def inked(image: Image.Image) -> int:
    """How many pixels are dark (text drawn on the white page)."""
    return sum(image.convert("L").point(lambda v: 255 if v < 128 else 0).histogram()[255:])


def test_pages_are_drawn_and_files_open_in_the_systems_app(start_server, tmp_path):
    bin_dir, record = stub_opener(tmp_path)
    server = start_server({"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "NUMI_KNOWLEDGE_TEST_READERS": "1"})
    api = server.api()
    folder = tmp_path / "manuals"
    folder.mkdir()
    pdf = kf.write_pdf(folder / "manual.pdf")
    (folder / "notes.md").write_text("# Notes\n\n## Owls\n\nThe owl hoots at midnight.\n")
    (folder / "run.sh").write_text("#!/bin/sh\necho frobnicate\n")
    up = api.upload("uploaded.pdf", pdf.read_bytes(), content_type="application/pdf")
    assert up.status == 201, up
    base = ready(api, create(api, name="Manuals", paths=[str(folder)])["id"])
    uploaded = ready(api, create(api, name="Uploads", file_ids=[up.body["id"]])["id"])
    assert base["documents"] == 3 and uploaded["documents"] == 1
    docs = documents(api, base["id"])
    page = f"/api/knowledge/{base['id']}/documents/{docs['manual.pdf']['id']}/pages"

    # Each page of the PDF, within the size cap, with its text drawn; pages differ.
    first = png(api.get(f"{page}/0"))
    assert 600 <= first.width <= 1400 and first.height <= 2400
    assert first.height > first.width  # a portrait page
    last = png(api.get(f"{page}/4"))
    assert inked(first) > 200 and inked(last) > 200
    assert first.tobytes() != last.tobytes()
    # The browser's copy is used again while the file is unchanged.
    r = api.get(f"{page}/0")
    assert r.headers["Cache-Control"] == "private, no-cache"
    again = api.get(f"{page}/0", headers={"If-None-Match": r.headers["ETag"]})
    assert again.status == 304 and again.body == b""
    assert api.get(f"{page}/1", headers={"If-None-Match": r.headers["ETag"]}).status == 200
    # An uploaded PDF is drawn from Numi's copy.
    upload_doc = documents(api, uploaded["id"])[up.body["id"]]
    assert png(api.get(f"/api/knowledge/{uploaded['id']}/documents/{upload_doc['id']}/pages/2")).tobytes() \
        == png(api.get(f"{page}/2")).tobytes()

    # No such page, no pages at all, no such document or base: 404 with a sentence.
    r = api.get(f"{page}/5")
    assert r.status == 404 and "has 5 pages; there is no page 6" in r.body["error"]["message"], r
    r = api.get(f"/api/knowledge/{base['id']}/documents/{docs['notes.md']['id']}/pages/0")
    assert r.status == 404 and "not a PDF" in r.body["error"]["message"], r
    assert api.get(f"/api/knowledge/{base['id']}/documents/{upload_doc['id']}/pages/0").status == 404
    assert api.get(f"/api/knowledge/kb_missing/documents/{docs['manual.pdf']['id']}/pages/0").status == 404

    # Open file: the system's opener gets the path, once per click.
    opened = f"/api/knowledge/{base['id']}/documents/{docs['manual.pdf']['id']}/open"
    r = api.post(opened)
    assert r.status == 204, r
    wait_until(lambda: record.exists() and record.read_text() == f"{pdf}\n", "the opener to be run")
    assert api.post(f"/api/knowledge/{base['id']}/documents/{docs['notes.md']['id']}/open").status == 204
    wait_until(lambda: record.read_text() == f"{pdf}\n{folder / 'notes.md'}\n", "the opener to be run again")
    # Not an upload (it has no file of its own), nor a script (an opener may run it).
    r = api.post(f"/api/knowledge/{uploaded['id']}/documents/{upload_doc['id']}/open")
    assert r.status == 422 and r.body["error"]["code"] == "not_a_path", r
    r = api.post(f"/api/knowledge/{base['id']}/documents/{docs['run.sh']['id']}/open")
    assert r.status == 422 and r.body["error"]["code"] == "runnable" and str(folder) in r.body["error"]["message"], r

    # A file changed or gone since it was read: said, never drawn stale. Another base's
    # file that never finishes reading holds the indexer, so nothing is read again meanwhile.
    hang = tmp_path / "stuck" / "slow.hang"
    hang.parent.mkdir()
    hang.write_text("x")
    create(api, name="Stuck", paths=[str(hang)])  # a file given by path is read whatever its suffix
    wait_until(lambda: os.path.exists(f"{hang}.started"), "the stuck read to start", timeout=30)
    with open(pdf, "ab") as f:
        f.write(b"\n% a change\n")
    r = api.get(f"{page}/0")
    assert r.status == 409 and r.body["error"]["code"] == "file_changed" and "manual.pdf" in r.body["error"]["message"]
    # Opened as it is now, though: the person asks for the file, not for what was read of it.
    r = api.post(opened)
    assert r.status == 204, r
    wait_until(lambda: record.read_text().count("\n") == 3, "the changed file to be opened")
    (folder / "notes.md").unlink()
    r = api.post(f"/api/knowledge/{base['id']}/documents/{docs['notes.md']['id']}/open")
    assert r.status == 409 and r.body["error"]["code"] == "file_gone" and "moved or removed" in r.body["error"]["message"]
    assert record.read_text().count("\n") == 3  # nothing more was opened
