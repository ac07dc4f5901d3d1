"""A stand-in for the documents feature, for the previews' tests: a feature named "documents" whose
service provides "documents" (`content(doc_id, version=None) -> (chat_id, language, version, text)`)
from a JSON file the test writes (`write`), read at each use.

Loaded into the server through NUMI_TOOL_PLUGINS with NUMI_TEST_DOCUMENTS naming the file. It is
registered as "documents", so it takes the place of the real feature in that server. `PreviewDocs`
is the tests' side: such a server, its documents and their preview addresses.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from backend.turns import features


def write(path: Path, documents: dict) -> None:
    """`documents`: {doc_id: {"chat_id", "language", "versions": [text of version 1, 2, …]}}."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(documents))
    tmp.replace(path)  # whole, so a server reading it never sees half


class Documents:
    def __init__(self, path: Path):
        self.path = path

    def content(self, doc_id: str, version: int | None = None):
        doc = json.loads(self.path.read_text()).get(doc_id)
        if doc is None:
            return None
        versions = doc["versions"]
        number = len(versions) if version is None else version
        if not 1 <= number <= len(versions):
            return None
        return doc["chat_id"], doc["language"], number, versions[number - 1]


class _Service(features.FeatureService):
    def __init__(self, ctx):
        self.documents = Documents(Path(os.environ["NUMI_TEST_DOCUMENTS"]))

    def provides(self):
        return {"documents": self.documents}


def register(registry):
    """No tools: the feature, in the place of the real one."""
    features.register(features.Feature(name="documents", service=_Service))


class PreviewDocs:
    """The test's side: a server with this feature (and tests/request_log_plugin.py), the documents
    it holds (`add`), their preview addresses (`url`) and the requests the server saw (`requests`)."""

    def __init__(self, start_server, path: Path):
        self.path = path
        self.documents: dict = {}
        write(path, self.documents)
        self.server = start_server({"NUMI_TOOL_PLUGINS": "tests.documents_plugin,tests.request_log_plugin",
                                    "NUMI_TEST_DOCUMENTS": str(path)})
        self.api = self.server.api()
        self.app = f"http://127.0.0.1:{self.server.port}"

    def add(self, doc_id: str, language: str, *versions: str, chat_id: str = "chat-1") -> None:
        self.documents[doc_id] = {"chat_id": chat_id, "language": language, "versions": list(versions)}
        write(self.path, self.documents)

    def remove(self, doc_id: str) -> None:
        del self.documents[doc_id]
        write(self.path, self.documents)

    def url(self, doc_id: str, version: int | None = None) -> str:
        r = self.api.get(f"/api/documents/{doc_id}/preview" + (f"?version={version}" if version else ""))
        assert r.status == 200, r
        return r.body["url"]

    def requests(self) -> list[dict]:
        r = self.api.get("/api/test/requests")
        assert r.status == 200, r
        return r.body["items"]
