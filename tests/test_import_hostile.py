"""Hostile and malformed imports, field by field: each is 422 naming the chat and the field, within
seconds, and nothing of the file is imported (CONTRACT §3 import)."""
from __future__ import annotations

import copy
import json
import time

import pytest

from tests.chat_samples import data_dir_files, import_file
from tests.numi_client import ServerProcess
from tests.test_api_import import chatgpt_conversation

GOOD_CHATGPT = 5  # good conversations before the hostile one: none of them may be imported


def chats(api) -> list[str]:
    return sorted(c["id"] for c in api.get("/api/chats?limit=200").body["items"])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One server for the module: each case only reads and refuses, so they cannot disturb each other."""
    proc = ServerProcess(tmp_path_factory.mktemp("hostile") / "data").start()
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def api(server):
    return server.api()


@pytest.fixture(scope="module")
def baseline(server, api):
    """One chat already there: a refused import must leave exactly it."""
    r = api.post("/api/chats", {"title": "Already here"})
    assert r.status == 201, r
    return chats(api)


def refused(api, server, baseline, name: str, raw: bytes, named: str, field: str) -> dict:
    """Import `raw`: 422 whose sentence names the chat (`named`) and the field, nothing kept.
    The answer's error gains "took": the seconds the import request took."""
    before = (chats(api), data_dir_files(server))
    assert baseline[0] in before[0]
    started = time.monotonic()
    r = import_file(api, name, raw)
    took = time.monotonic() - started
    assert r.status == 422, r
    error = r.body["error"]
    assert named in error["message"], error
    assert any(field in key for key in error.get("fields", {})), error
    assert field in error["message"], error
    assert (chats(api), data_dir_files(server)) == before
    return {**error, "took": took}


# -- ChatGPT: one mutation of a good conversation per case ------------------------------------

def _set(path: list, value):
    """A mutation that sets conv[path…] = value (the last key may be new)."""
    def apply(conv):
        target = conv
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return apply


def _node(node_id: str, *path, value):
    return _set(["mapping", node_id, *path], value)


def _loop(conv):
    """u3's children lead back to u1b: following the last child never ends."""
    conv.pop("current_node")
    conv["mapping"]["u3"]["children"] = ["u1b"]


def _detached_ring(conv):
    """Two nodes that name each other as parent and child, hanging from nothing; links agree."""
    conv["mapping"]["x1"] = {"id": "x1", "parent": "x2", "children": ["x2"], "message": None}
    conv["mapping"]["x2"] = {"id": "x2", "parent": "x1", "children": ["x1"], "message": None}


def _all_ring(conv):
    conv["mapping"] = {"x1": {"id": "x1", "parent": "x2", "children": ["x2"], "message": None},
                       "x2": {"id": "x2", "parent": "x1", "children": ["x1"], "message": None}}
    conv.pop("current_node")


def _unlisted(conv):
    """a1 names u1b as its parent, but u1b does not list it (and u1 no longer does)."""
    conv["mapping"]["a1"]["parent"] = "u1b"
    conv["mapping"]["u1"]["children"] = []


CHATGPT_CASES = {
    # the tree
    "children loop, no current_node": (_loop, "mapping[\"u3\"].children"),
    "a detached ring": (_detached_ring, "mapping[\"x"),
    "every node on a ring": (_all_ring, "mapping"),
    "mapping a list": (_set(["mapping"], []), "mapping"),
    "current_node a list": (_set(["current_node"], ["u3"]), "current_node"),
    "current_node not a node": (_set(["current_node"], "nowhere"), "current_node"),
    "node a list": (_node("a1", value=[]), 'mapping["a1"]'),
    "node id a number": (_node("a1", "id", value=7), 'mapping["a1"].id'),
    "children a dict": (_node("u1", "children", value={"a1": True}), 'mapping["u1"].children'),
    "child an object": (_node("u1", "children", value=[{"id": "a1"}]), 'mapping["u1"].children[0]'),
    "child not a node": (_node("u1", "children", value=["a1", "ghost"]), 'mapping["u1"].children[1]'),
    "child listed twice": (_node("u1", "children", value=["a1", "a1"]), 'mapping["u1"].children'),
    "parent a number": (_node("a1", "parent", value=3), 'mapping["a1"].parent'),
    "parent not a node": (_node("a1", "parent", value="ghost"), 'mapping["a1"].parent'),
    "parent does not list it": (_unlisted, 'mapping["a1"].parent'),
    "child names another parent": (_node("u1", "children", value=["a1", "th"]), 'mapping["u1"].children'),
    # a node's message
    "message text": (_node("u1", "message", value="hi"), 'mapping["u1"].message'),
    "author a string": (_node("u1", "message", "author", value="user"), 'mapping["u1"].message.author'),
    "role a list": (_node("u1", "message", "author", "role", value=["user"]), "author.role"),
    "content a list": (_node("u1", "message", "content", value=["hi"]), 'mapping["u1"].message.content'),
    "content_type a number": (_node("u1", "message", "content", "content_type", value=1), "content.content_type"),
    "parts a string": (_node("u1", "message", "content", "parts", value="hi"), "content.parts"),
    "part a number": (_node("u1", "message", "content", "parts", value=["hi", 3]), "content.parts[1]"),
    "part a list": (_node("u1", "message", "content", "parts", value=[["hi"]]), "content.parts[0]"),
    "thoughts a dict": (_node("th", "message", "content", "thoughts", value={}), "content.thoughts"),
    "thought a string": (_node("th", "message", "content", "thoughts", value=["x"]), "content.thoughts[0]"),
    "thought content a number": (_node("th", "message", "content", "thoughts", value=[{"content": 1}]),
                                 "thoughts[0].content"),
    "metadata a list": (_node("u1", "message", "metadata", value=[]), 'mapping["u1"].message.metadata'),
    "hidden flag a string": (_node("u1", "message", "metadata", value={"is_visually_hidden_from_conversation": "no"}),
                             "is_visually_hidden_from_conversation"),
    "recipient a number": (_node("a1", "message", "recipient", value=0), 'mapping["a1"].message.recipient'),
    "message time text": (_node("u1", "message", "create_time", value="yesterday"), "message.create_time"),
    "message time huge": (_node("u1", "message", "create_time", value=1e300), "message.create_time"),
    "message time negative": (_node("u1", "message", "create_time", value=-5), "message.create_time"),
    "message time true": (_node("u1", "message", "create_time", value=True), "message.create_time"),
    # the conversation
    "title a number": (_set(["title"], 12), "title"),
    "create_time text": (_set(["create_time"], "2024"), "create_time"),
    "update_time an object": (_set(["update_time"], {}), "update_time"),
}


def _chatgpt_file(label: str, mutate=None, conv=None) -> bytes:
    good = [chatgpt_conversation() for _ in range(GOOD_CHATGPT)]
    if conv is None:
        conv = copy.deepcopy(chatgpt_conversation())
        conv.update(title=f"Hostile {label}", id=f"conv-{label.replace(' ', '-')}")
        if mutate:
            mutate(conv)
    return json.dumps(good + [conv]).encode()


@pytest.mark.parametrize("label", list(CHATGPT_CASES))
def test_a_malformed_chatgpt_field_is_422_naming_the_conversation_and_field(server, api, baseline, label):
    mutate, field = CHATGPT_CASES[label]
    raw = _chatgpt_file(label, mutate)
    # Named by number, title and id (a title that is no text is left out).
    title = f'"Hostile {label}", ' if label != "title a number" else ""
    refused(api, server, baseline, "conversations.json", raw,
            f"Conversation {GOOD_CHATGPT + 1} ({title}id conv-{label.replace(' ', '-')})", field)


def test_chatgpt_text_that_is_not_unicode_and_conversations_that_are_not_objects(server, api, baseline):
    raw = b'"Thanks \\ud800"'.join(_chatgpt_file("surrogate").rsplit(b'"Thanks"', 1))  # the last one
    refused(api, server, baseline, "conversations.json", raw, 'Conversation 6 ("Hostile surrogate"',
            'mapping["u3"].message.content.parts[0]')
    raw = _chatgpt_file("not an object", conv="just text")
    refused(api, server, baseline, "conversations.json", raw, "Conversation 6", "conversations[5]")


def test_a_long_loop_is_refused_within_seconds(server, api, baseline):
    """A ring of 20 000 nodes (links agreeing) and a chain whose last child leads back to its start:
    the checks are linear, so each answer comes in well under the two seconds allowed."""
    n = 20_000
    ring = {f"n{i}": {"id": f"n{i}", "parent": f"n{(i - 1) % n}", "children": [f"n{(i + 1) % n}"], "message": None}
            for i in range(n)}
    conv = {"title": "Ring", "id": "ring", "mapping": ring}
    error = refused(api, server, baseline, "conversations.json", _chatgpt_file("ring", conv=conv),
                    'Conversation 6 ("Ring"', "mapping")
    assert error["took"] < 2, error["took"]
    chain = {f"n{i}": {"id": f"n{i}", "parent": f"n{i - 1}" if i else None, "children": [f"n{i + 1}"],
                       "message": {"author": {"role": "user"}, "content": {"content_type": "text", "parts": [f"m{i}"]}}}
             for i in range(n)}
    chain[f"n{n - 1}"]["children"] = ["n0"]
    conv = {"title": "Chain", "id": "chain", "mapping": chain}
    error = refused(api, server, baseline, "conversations.json", _chatgpt_file("chain", conv=conv),
                    'Conversation 6 ("Chain"', f'mapping["n{n - 1}"].children')
    assert error["took"] < 2, error["took"]


def test_a_conversation_over_the_node_limit_is_refused(server, api, baseline):
    n = 100_001
    mapping = {f"n{i}": {"parent": f"n{i - 1}" if i else None, "children": [f"n{i + 1}"] if i < n - 1 else []}
               for i in range(n)}
    raw = _chatgpt_file("big", conv={"title": "Big", "mapping": mapping})
    error = refused(api, server, baseline, "conversations.json", raw, 'Conversation 6 ("Big")', "mapping")
    assert "at most 100000" in error["message"]


def test_a_long_conversation_imports(tmp_path):
    """A long branch without current_node is read to its end (the walk down the last children ends)."""
    server = ServerProcess(tmp_path / "data").start()
    try:
        _long_conversation(server.api())
    finally:
        server.stop()


def _long_conversation(api):
    n = 3000
    mapping = {f"n{i}": {"id": f"n{i}", "parent": f"n{i - 1}" if i else None, "children": [f"n{i + 1}"] if i < n - 1 else [],
                         "message": {"author": {"role": "user" if i % 2 else "assistant"},
                                     "content": {"content_type": "text", "parts": [f"m{i}"]}}}
               for i in range(n)}
    r = import_file(api, "c.json", json.dumps([{"title": "Long", "mapping": mapping}]).encode())
    assert r.status == 201, r
    [chat] = r.body["chat_ids"]
    msgs = api.get(f"/api/chats/{chat}/messages?limit=5").body["items"]
    assert [m["content"] for m in msgs] == [f"m{i}" for i in range(n - 5, n)]


# -- Numi's own format ------------------------------------------------------------------------

def _numi_chat(title: str) -> dict:
    return {"id": "c_x", "title": title, "model_id": None, "folder": None, "system_prompt": "", "params": {},
            "pinned": False, "archived": False, "created_at": "2026-01-01T00:00:00.000Z",
            "updated_at": "2026-01-01T00:00:05.000Z", "messages": [
                {"role": "user", "content": "hi", "reasoning": "", "reasoning_details": None, "tool_calls": [],
                 "tool_call_id": None, "tool_error": False, "citation_sources": None, "status": "complete",
                 "model_id": None, "usage": None, "error": None, "created_at": "2026-01-01T00:00:01.000Z",
                 "attachments": [{"name": "a.txt", "mime": "text/plain", "size": 2, "sha256": "8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4",
                                  "created_at": "2026-01-01T00:00:01.000Z", "data": "aGk="}]}]}


def _msg(*path, value):
    return ["messages", 0, *path], value


NUMI_CASES = {
    "chat a string": ([], "chat"),
    "title a number": (["title"], 3),
    "model_id a list": (["model_id"], ["m"]),
    "folder an object": (["folder"], {}),
    "system_prompt a number": (["system_prompt"], 1),
    "params a list": (["params"], [1]),
    "temperature text": (["params", "temperature"], "hot"),
    "unknown param": (["params", "seed"], 1),
    "pinned text": (["pinned"], "yes"),
    "archived a number": (["archived"], 1),
    "created_at a number": (["created_at"], 1700000000),
    "updated_at text": (["updated_at"], "later"),
    "created_at far future": (["created_at"], "9999-12-31T23:59:59-23:59"),
    "messages an object": (["messages"], {}),
    "message a string": _msg(value="hi"),
    "role unknown": _msg("role", value="wizard"),
    "content a number": _msg("content", value=1),
    "reasoning a list": _msg("reasoning", value=[]),
    "reasoning_details an object": _msg("reasoning_details", value={}),
    "tool_calls an object": _msg("tool_calls", value={}),
    "tool call without name": _msg("tool_calls", value=[{"id": "1", "arguments": "{}"}]),
    "tool_call_id a number": _msg("tool_call_id", value=1),
    "tool_error text": _msg("tool_error", value="no"),
    "citation_sources an object": _msg("citation_sources", value={}),
    "status unknown": _msg("status", value="done"),
    "message model_id a number": _msg("model_id", value=1),
    "usage a list": _msg("usage", value=[]),
    "error text": _msg("error", value="boom"),
    "message created_at missing": _msg("created_at", value=None),
    "attachments an object": _msg("attachments", value={}),
    "attachment a string": _msg("attachments", value=["a.txt"]),
    "attachment name a number": _msg("attachments", 0, "name", value=5),
    "attachment sha256 short": _msg("attachments", 0, "sha256", value="abc"),
    "attachment size text": _msg("attachments", 0, "size", value="2"),
    "attachment size negative": _msg("attachments", 0, "size", value=-1),
    "attachment data a number": _msg("attachments", 0, "data", value=5),
    "attachment created_at a list": _msg("attachments", 0, "created_at", value=[]),
}


def _numi_file(chats: list, version: int = 1) -> bytes:
    return json.dumps({"format": "numi-export", "version": version, "chats": chats}).encode()


@pytest.mark.parametrize("label", list(NUMI_CASES))
def test_a_malformed_numi_field_is_422_naming_the_chat_and_field(server, api, baseline, label):
    path, value = NUMI_CASES[label]
    chat = _numi_chat(f"Hostile {label}")
    if path:
        target = chat
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    else:
        chat = value
    field = "chats[1]" + "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path)
    named = "chat 2" if not path else f'chat 2 ("Hostile {label}")' if path != ["title"] else "chat 2,"
    refused(api, server, baseline, "export.json", _numi_file([_numi_chat("Good"), chat]), named, field)


def test_numi_text_that_is_not_unicode_or_numbers_json_has_not_are_refused(server, api, baseline):
    good = _numi_file([_numi_chat("Good"), _numi_chat("Hostile")])
    for raw, field in ((good.replace(b'"content": "hi"', b'"content": "hi \\udc00"', 1), "chats[0].messages[0].content"),
                       (good.replace(b'"title": "Hostile"', b'"title": "\\ud83d"'), "chats[1].title"),
                       (good.replace(b'"usage": null', b'"usage": {"n": "\\ud800x"}', 1), "chats[0].messages[0].usage")):
        refused(api, server, baseline, "export.json", raw, "chat ", field)
    for constant in (b"NaN", b"Infinity", b"-Infinity", b"1e400"):
        r = import_file(api, "export.json", good.replace(b'"usage": null', b'"usage": {"n": ' + constant + b"}", 1))
        assert r.status == 422 and "valid JSON" in r.body["error"]["message"], r
    assert chats(api) == baseline


# -- version 2's links ---------------------------------------------------------------------------

def _tree_chat(title: str) -> dict:
    """A version 2 chat: a question (id 10) and its answer (id 11, active)."""
    chat = _numi_chat(title)
    question = chat["messages"][0]
    question.update(id=10, parent_id=None, attachments=[])
    answer = {**question, "id": 11, "parent_id": 10, "role": "assistant", "content": "hello"}
    chat.update(messages=[question, answer], active_leaf_id=11)
    return chat


def _links(**changes):
    def apply(chat):
        for where, value in changes.items():
            if where == "active":
                chat["active_leaf_id"] = value
            else:
                key, n = where.rsplit("_", 1)
                chat["messages"][int(n)][key] = value
    return apply


def _ring(chat):
    chat["messages"][0]["parent_id"] = 11


TREE_CASES = {
    "id missing": (_links(id_0=None), "chats[1].messages[0].id"),
    "id text": (_links(id_1="11"), "chats[1].messages[1].id"),
    "id negative": (_links(id_1=-1), "chats[1].messages[1].id"),
    "id fractional": (_links(id_1=11.5), "chats[1].messages[1].id"),
    "id twice": (_links(id_1=10), "chats[1].messages[1].id"),
    "parent unknown": (_links(parent_id_1=12), "chats[1].messages[1].parent_id"),
    "parent itself": (_links(parent_id_1=11), "chats[1].messages[1].parent_id"),
    "parent text": (_links(parent_id_1="10"), "chats[1].messages[1].parent_id"),
    "parents loop": (_ring, "chats[1].messages[0].parent_id"),
    "active leaf unknown": (_links(active=12), "chats[1].active_leaf_id"),
    "active leaf text": (_links(active="11"), "chats[1].active_leaf_id"),
    "active leaf true": (_links(active=True, id_0=1, parent_id_1=1), "chats[1].active_leaf_id"),
}


@pytest.mark.parametrize("label", list(TREE_CASES))
def test_broken_links_in_a_version_2_export_are_422_naming_the_chat_and_field(server, api, baseline, label):
    mutate, field = TREE_CASES[label]
    chat = _tree_chat(f"Hostile {label}")
    mutate(chat)
    refused(api, server, baseline, "export.json", _numi_file([_tree_chat("Good"), chat], version=2),
            f'chat 2 ("Hostile {label}")', field)


def test_a_long_loop_of_parent_links_is_refused_within_seconds(server, api, baseline):
    n = 20_000
    chat = _tree_chat("Long ring")
    chat["messages"] = [{"id": i, "parent_id": (i - 1) % n, "role": "user", "content": "hi",
                         "created_at": "2026-01-01T00:00:01Z"} for i in range(n)]
    chat["active_leaf_id"] = n - 1
    error = refused(api, server, baseline, "export.json", _numi_file([chat], version=2), 'chat 1 ("Long ring")',
                    "chats[0].messages[0].parent_id")
    assert error["took"] < 2, error["took"]
