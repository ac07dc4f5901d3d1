"""A chat with everything an export must carry, made through the real server and the fake provider."""
from __future__ import annotations

import io
import json
import zipfile

from tests.fakeprovider import script as S
from tests.numi_client import multipart
from tests.sample_files import png

NOTES = "# Notes\n\nBring `the map` and ```fences```.\n".encode()
PICTURE = png(3, 2)


def rich_chat(setup, title: str = "Plans: ünïcode / ../<x>") -> str:
    """user (+2 files) → assistant (reasoning, tool call) → tool → assistant, with usage."""
    # The picture goes to the model with the message: it must be one that sees.
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"vision": True, "tools": True,
                                                                            "reasoning": True}}).status == 200
    chat = setup.chat(title=title, system_prompt="Be brief.", params={"temperature": 0.5})
    files = [setup.api.upload("picture.png", PICTURE).body, setup.api.upload("notes.md", NOTES).body]
    setup.fake.enqueue(
        [S.reasoning("Let me shout it."), S.tool_call(0, "call_a", "upper", '{"text": "abc"}'), S.usage(5, 3)],
        [S.reasoning("Done thinking."), S.text("Loud: ABC"), S.usage(9, 2)])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="Shout abc, please.", attachments=[f["id"] for f in files])
    end = sock.until("turn_end", timeout=30)
    assert end["status"] == "completed", sock.of("error")
    sock.close()
    # Its own tools switched off (CONTRACT §15) travel with its other settings.
    assert setup.api.patch(f"/api/chats/{chat}", {"tools_off": ["web_search", "mcp__files__*"]}).status == 200
    return chat


def export_json(api, chat_id: str) -> dict:
    r = api.get(f"/api/chats/{chat_id}/export?format=json")
    assert r.status == 200, r
    return r.body


def export_zip(api) -> zipfile.ZipFile:
    r = api.get("/api/export")
    assert r.status == 200 and r.headers["Content-Type"] == "application/zip", r
    return zipfile.ZipFile(io.BytesIO(r.body))


def comparable(doc: dict) -> list[dict]:
    """The chats of an export without what an import is meant to change (ids, export time):
    message ids become their place in the chat, so the links still say which is which."""
    chats = json.loads(json.dumps(doc["chats"]))
    for chat in chats:
        chat.pop("id")
        place = {m["id"]: n for n, m in enumerate(chat["messages"])}
        for m in chat["messages"]:
            m["id"], m["parent_id"] = place[m["id"]], place.get(m["parent_id"])
        chat["active_leaf_id"] = place.get(chat["active_leaf_id"])
    return chats


def import_file(api, name: str, data: bytes):
    body, ctype = multipart("file", name, data)
    # An import of thousands of messages may take half a minute on a loaded 2-core machine; how
    # long it takes is not what its tests check.
    return api.request("POST", "/api/import", raw=body, content_type=ctype, timeout=120)


def data_dir_files(server) -> list[str]:
    """Every blob in files/, and anything left in files/.tmp."""
    root = server.data_dir / "files"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.is_dir() else []
