"""Previews of the real documents feature's documents: one written by the model's `doc_create` (the fake
provider's scripted call) is previewed through `AppContext.provided("documents")`, version by version."""
from __future__ import annotations

import http.client
import importlib.util
import json
from urllib.parse import urlsplit

import pytest

from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(importlib.util.find_spec("backend.features.documents") is None,
                                reason="the documents feature is not there")


def page(url: str) -> tuple[int, str]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection("127.0.0.1", parts.port, timeout=30)
    conn.request("GET", parts.path)
    resp = conn.getresponse()
    result = resp.status, resp.read().decode()
    conn.close()
    return result


def test_a_document_the_model_wrote_is_previewed(setup):
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
    chat = setup.chat(title="Previewed")
    args = {"title": "Page", "language": "html", "content": "<!doctype html><p>first</p>"}
    setup.fake.enqueue([S.tool_call(0, "call_1", "doc_create", json.dumps(args)), S.finish("tool_calls")],
                       [S.text("Done.")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="write a page")
    assert sock.until("turn_end")["status"] == "completed"
    doc = setup.api.get(f"/api/chats/{chat}/documents").body["items"][0]
    assert setup.api.patch(f"/api/documents/{doc['id']}", {"content": "<p>second</p>", "base_version": 1}).status == 200

    latest = setup.api.get(f"/api/documents/{doc['id']}/preview").body["url"]
    first = setup.api.get(f"/api/documents/{doc['id']}/preview?version=1").body["url"]
    assert latest.endswith(f"/doc/{doc['id']}/2") and first.endswith(f"/doc/{doc['id']}/1")
    status, text = page(latest)
    assert status == 200 and text.endswith("</script><p>second</p>")
    status, text = page(first)
    assert status == 200 and text.startswith("<!doctype html><script>") and text.endswith("<p>first</p>")
    r = setup.api.get(f"/api/documents/{doc['id']}/preview?version=3")
    assert r.status == 404
