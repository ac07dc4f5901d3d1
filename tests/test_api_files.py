"""POST /api/files and GET /api/files/{id} against the real server (CONTRACT §3 Files).

The type of a stored file comes from its bytes; what the browser is told when
it reads one back must never let it run or render active content.
"""
from __future__ import annotations

import hashlib
import http.client
import random

import pytest

from tests.numi_client import multipart
from tests.sample_files import noise_png, pdf, png

BINARY = "application/octet-stream"


def blobs(server) -> list:
    """The content-addressed blobs under <data dir>/files (not the upload scratch folder)."""
    root = server.data_dir / "files"
    return sorted(p for p in root.glob("??/*") if p.is_file())


def upload_ok(api, name, data, **kw) -> dict:
    r = api.upload(name, data, **kw)
    assert r.status == 201, r
    return r.body


def test_upload_answers_the_file_and_serves_the_same_bytes(server, api):
    data = png()
    body = upload_ok(api, "red dot.png", data, content_type="image/png")
    assert {"id", "name", "mime", "size", "sha256"} <= set(body)
    assert (body["name"], body["mime"], body["size"]) == ("red dot.png", "image/png", len(data))
    assert body["sha256"] == hashlib.sha256(data).hexdigest()
    sha = body["sha256"]
    assert blobs(server) == [server.data_dir / "files" / sha[:2] / sha]

    got = api.get(f"/api/files/{body['id']}")
    assert got.status == 200 and got.body == data
    assert got.headers["Content-Type"] == "image/png"
    assert got.headers["X-Content-Type-Options"] == "nosniff"
    # A raster image may show inline (as a thumbnail); its name travels along.
    assert got.headers["Content-Disposition"].startswith("inline;")
    assert 'filename="red dot.png"' in got.headers["Content-Disposition"]


def test_the_same_bytes_are_stored_once(server, api):
    data = b"# Notes\n\nThe same text twice.\n"
    first = upload_ok(api, "notes.md", data)
    again = upload_ok(api, "notes.md", data)
    renamed = upload_ok(api, "copy of notes.md", data)
    assert first["id"] == again["id"]  # same bytes, same name: the same attachment
    assert renamed["id"] != first["id"] and renamed["name"] == "copy of notes.md"
    assert first["sha256"] == renamed["sha256"]
    assert len(blobs(server)) == 1
    other = upload_ok(api, "notes.md", data + b"More.\n")
    assert other["id"] != first["id"] and len(blobs(server)) == 2
    for f in (first, renamed, other):
        assert api.get(f"/api/files/{f['id']}").status == 200


@pytest.mark.parametrize("extra", [1, 600 * 1024], ids=["just-over-while-streaming", "far-over-by-header"])
def test_over_the_size_limit_is_413_and_stores_nothing(start_server, extra):
    server = start_server({"NUMI_MAX_FILE_MB": "0.5"})
    api = server.api()
    limit = 512 * 1024
    r = api.upload("big.bin", b"\x01" * (limit + extra))
    assert r.status == 413, r
    assert r.body["error"]["code"] == "file_too_large"
    assert "512 KB" in r.body["error"]["message"]
    assert blobs(server) == []
    assert list((server.data_dir / "files" / ".tmp").glob("*")) == []  # the partial upload is gone
    # Exactly at the limit is fine, and the server is none the worse.
    ok = upload_ok(api, "fits.bin", b"\x01" * limit)
    assert ok["size"] == limit and len(blobs(server)) == 1


@pytest.mark.parametrize("name,claimed", [("cat.png", "image/png"), ("page.html", "text/html"),
                                          ("page.txt", "text/plain")])
def test_html_bytes_are_never_served_as_html_or_an_image(api, name, claimed):
    html = b"<!doctype html><html><body><script>alert(document.cookie)</script></body></html>"
    body = upload_ok(api, name, html, content_type=claimed)
    assert not body["mime"].startswith("image/")
    got = api.get(f"/api/files/{body['id']}")
    assert got.body == html
    ctype = got.headers["Content-Type"]
    assert ctype.startswith("text/plain") and "html" not in ctype
    assert got.headers["Content-Disposition"].startswith("attachment;")
    assert got.headers["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in got.headers["Content-Security-Policy"]


def test_svg_is_never_served_inline_as_svg(api):
    svg = (b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">'
           b'<script>alert(1)</script><circle r="5"/></svg>')
    body = upload_ok(api, "logo.svg", svg, content_type="image/svg+xml")
    assert body["mime"] == "image/svg+xml"  # what it is, for the model …
    got = api.get(f"/api/files/{body['id']}")
    assert got.headers["Content-Type"] == "text/plain; charset=utf-8"  # … not how it is served
    assert got.headers["Content-Disposition"].startswith("attachment;")


def test_types_come_from_the_bytes_not_the_name(api):
    cases = [
        ("photo.txt", png(), "image/png", "image/png", "inline"),  # a real PNG under a wrong name
        ("scan.bin", pdf([["Hello"]]), "application/pdf", "application/pdf", "attachment"),
        ("bundle", b"PK\x03\x04" + b"\x00" * 40, "application/zip", "application/zip", "attachment"),
        ("data.csv", b"a,b\n1,2\n", "text/csv", "text/plain; charset=utf-8", "attachment"),
        ("app.js", b"document.write('x')\n", "text/javascript", "text/plain; charset=utf-8", "attachment"),
        ("fake.jpg", b"\x00\x01\x02\x03 binary \xff\xfe", "application/octet-stream",
         "application/octet-stream", "attachment"),
        ("grüße.txt", "Grüße, 世界\n".encode(), "text/plain", "text/plain; charset=utf-8", "attachment"),
    ]
    for name, data, mime, served, disposition in cases:
        body = upload_ok(api, name, data)
        assert body["mime"] == mime, name
        got = api.get(f"/api/files/{body['id']}")
        assert got.headers["Content-Type"] == served, name
        assert got.headers["Content-Disposition"].split(";")[0] == disposition, name


def test_names_lose_folders_and_control_characters_and_keep_unicode(api):
    body = upload_ok(api, "../../etc/pass\u202ewd\x07.txt", b"hi\n")
    assert body["name"] == "passwd.txt"
    body = upload_ok(api, "home/me/Résumé 2026.md", b"# CV\n")
    assert body["name"] == "Résumé 2026.md"
    got = api.get(f"/api/files/{body['id']}")
    assert "filename*=UTF-8''R%C3%A9sum%C3%A9%202026.md" in got.headers["Content-Disposition"]


def test_unknown_id_is_404(api):
    r = api.get("/api/files/file_0000000000000000")
    assert r.status == 404 and r.body["error"]["code"] == "not_found"


def test_missing_file_field_is_422_and_stores_nothing(server, api):
    body, ctype = multipart("attachment", "a.txt", b"hello")  # the wrong field name
    r = api.post("/api/files", raw=body, content_type=ctype)
    assert r.status == 422, r
    assert "file" in r.body["error"]["fields"]
    body, ctype = multipart("file", None, b"not a file part")  # a plain field, not a file
    assert api.post("/api/files", raw=body, content_type=ctype).status == 422
    assert blobs(server) == []


def test_a_json_body_or_a_broken_multipart_is_refused(api):
    r = api.post("/api/files", {"file": "aGVsbG8="})
    assert r.status == 415 and "multipart/form-data" in r.body["error"]["message"]
    r = api.post("/api/files", raw=b"--x\r\nno end", content_type="multipart/form-data; boundary=x")
    assert r.status in (400, 422), r


def test_files_need_the_token_and_the_origin(server):
    anonymous = server.api(token=None)
    assert anonymous.upload("a.txt", b"hi").status == 401
    assert anonymous.get("/api/files/file_0000000000000000").status == 401
    evil = server.api().upload("a.txt", b"hi", headers={"Origin": "http://evil.example"})
    assert evil.status == 403


def test_range_and_revalidation(api):
    data = b"0123456789" * 10
    body = upload_ok(api, "digits.txt", data)
    part = api.get(f"/api/files/{body['id']}", headers={"Range": "bytes=10-19"})
    assert part.status == 206 and part.body == data[10:20]
    etag = api.get(f"/api/files/{body['id']}").headers["ETag"]
    assert api.get(f"/api/files/{body['id']}", headers={"If-None-Match": etag}).status == 304


def test_upload_streams_a_body_sent_in_chunks(server):
    """No Content-Length (chunked): the limit is still enforced while the body streams."""
    body, ctype = multipart("file", "chunked.txt", b"line\n" * 1000)
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.putrequest("POST", "/api/files", skip_host=True)
    for name, value in (("Host", f"127.0.0.1:{server.port}"), ("Authorization", f"Bearer {server.token}"),
                        ("Content-Type", ctype), ("Transfer-Encoding", "chunked")):
        conn.putheader(name, value)
    conn.endheaders()
    for start in range(0, len(body), 1000):
        piece = body[start:start + 1000]
        conn.send(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
    conn.send(b"0\r\n\r\n")
    resp = conn.getresponse()
    assert resp.status == 201, resp.read()
    resp.read()
    conn.close()


# -- real-size files: binary bytes stream to disk whatever their line breaks -------------------

def random_bytes(size: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(size)


def test_real_size_binary_files_upload_whole(server, api):
    """Binary files have line breaks only where chance puts them: the multipart reader must
    never hold such a file's bytes as if they were a small text field."""
    picture, width, height = noise_png(200 * 1024)
    cases = [("photo.png", picture, "image/png"), ("150k.bin", random_bytes(150 * 1024, 1), BINARY),
             ("1m.bin", random_bytes(1 << 20, 2), BINARY), ("3m.bin", random_bytes(3 << 20, 3), BINARY)]
    for name, data, mime in cases:
        body = upload_ok(api, name, data)
        assert (body["name"], body["mime"], body["size"]) == (name, mime, len(data)), name
        assert body["sha256"] == hashlib.sha256(data).hexdigest(), name
        assert api.get(f"/api/files/{body['id']}").body == data, name
    assert len(blobs(server)) == len(cases)
    assert list((server.data_dir / "files" / ".tmp").glob("*")) == []


def test_a_file_just_over_the_default_limit_is_413_naming_it(server, api):
    limit = 50 << 20  # NUMI_MAX_FILE_MB's default, as docs/PROTOCOL.md says
    data = random_bytes(limit + 1, 4)
    r = api.upload("big.bin", data)
    assert r.status == 413, r
    assert r.body["error"]["code"] == "file_too_large"
    assert "larger than 50 MB" in r.body["error"]["message"]
    assert blobs(server) == [] and list((server.data_dir / "files" / ".tmp").glob("*")) == []
    ok = upload_ok(api, "fits.bin", data[:limit])
    assert ok["size"] == limit and ok["sha256"] == hashlib.sha256(data[:limit]).hexdigest()


def test_form_fields_and_parts_are_bounded(server, api):
    boundary = "b0undary"
    ctype = f"multipart/form-data; boundary={boundary}"

    def part(name, data, filename=None):
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        return f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n".encode() + data + b"\r\n"

    end = f"--{boundary}--\r\n".encode()
    # Text fields beside the file are held in memory: at most 64 KB of them.
    r = api.post("/api/files", raw=part("note", b"n" * (65 * 1024)) + part("file", b"hi", "a.txt") + end,
                 content_type=ctype)
    assert r.status == 400 and "64 KB" in r.body["error"]["message"], r
    r = api.post("/api/files", raw=b"".join(part(f"f{i}", b"x") for i in range(17)) + part("file", b"hi", "a.txt")
                 + end, content_type=ctype)
    assert r.status == 400 and "parts" in r.body["error"]["message"], r
    # Headers that never end are not buffered without bound either.
    r = api.post("/api/files", raw=f"--{boundary}\r\nX-Long: ".encode() + b"h" * (200 * 1024), content_type=ctype)
    assert r.status == 400, r
    r = api.post("/api/files", raw=part("file", b"one", "a.txt") + part("file", b"two", "b.txt") + end,
                 content_type=ctype)
    assert r.status == 422 and "one file" in r.body["error"]["fields"]["file"], r
    # Other file parts are read past; small fields are fine.
    r = api.post("/api/files", raw=part("note", b"hello") + part("other", b"ignored", "x.txt")
                 + part("file", b"kept", "k.txt") + end, content_type=ctype)
    assert r.status == 201 and r.body["size"] == 4, r
    assert len(blobs(server)) == 1 and list((server.data_dir / "files" / ".tmp").glob("*")) == []
