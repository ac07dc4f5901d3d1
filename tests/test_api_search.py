"""GET /api/search against the real server: ranking, folding, prefixes, phrases, hostile
queries, what is never found (deleted, temporary, tool output), filters and limits, and the
index following every change to a message (triggers) and the upgrade that builds it."""
from __future__ import annotations

import sqlite3
import time
from urllib.parse import quote, urlencode

import pytest

from tests.fakeprovider import script as S
from tests.numi_client import ServerProcess
from tests.test_api_catalog import assert_invalid
from tests.test_api_chats import ISO, add_message, new_chat, sql

ITEM_FIELDS = {"chat_id", "message_id", "title", "snippet", "created_at", "highlights", "role", "active"}


def search(api, q, **params):
    r = api.get("/api/search?" + urlencode({"q": q, **params}))
    assert r.status == 200, r
    return r.body["items"]


def found(api, q, **params) -> list[int]:
    return [item["message_id"] for item in search(api, q, **params)]


def hits(item) -> list[str]:
    """The highlighted parts of a snippet (offsets count code points)."""
    return [item["snippet"][a:b] for a, b in item["highlights"]]


# -- shape and ranking -------------------------------------------------------------

def test_shape_and_best_match_first(api, server):
    chat = new_chat(api, title="Zoo notes")
    other = new_chat(api, title="Long read")
    filler = " ".join(["the keeper walked past the enclosure and wrote in a notebook"] * 8)
    once = add_message(server, other["id"], "assistant", f"{filler} a zebra {filler}")
    many = add_message(server, chat["id"], "user", "zebra zebra, a zebra herd")
    add_message(server, chat["id"], "user", "nothing to see here")
    items = search(api, "zebra")
    assert [i["message_id"] for i in items] == [many, once]
    top = items[0]
    assert set(top) >= ITEM_FIELDS
    assert (top["chat_id"], top["title"], top["role"]) == (chat["id"], "Zoo notes", "user")
    assert ISO.match(top["created_at"])
    assert top["snippet"] == "zebra zebra, a zebra herd"
    assert hits(top) == ["zebra", "zebra", "zebra"]
    # A long message is cut to a window around the hit, with ellipses, on one line.
    long = items[1]
    assert long["snippet"].startswith("…") and long["snippet"].endswith("…")
    assert hits(long) == ["zebra"] and "\n" not in long["snippet"]


def test_title_falls_back_to_empty_string_and_created_at_is_the_messages(api, server):
    chat = new_chat(api)
    mid = add_message(server, chat["id"], "user", "quokka", created_at=1_700_000_000.5)
    [item] = search(api, "quokka")
    assert (item["message_id"], item["title"], item["created_at"]) == (mid, "", "2023-11-14T22:13:20.500Z")


# -- folding, prefixes, phrases ------------------------------------------------------

def test_diacritics_and_case_are_folded(api, server):
    chat = new_chat(api)
    accented = add_message(server, chat["id"], "user", "Un CAFÉ à Paris, très naïve")
    plain = add_message(server, chat["id"], "assistant", "the cafe is naive")
    assert sorted(found(api, "cafe")) == [accented, plain]
    assert sorted(found(api, "café")) == [accented, plain]
    assert sorted(found(api, "NAÏVE")) == [accented, plain]
    item = next(i for i in search(api, "cafe") if i["message_id"] == accented)
    assert hits(item) == ["CAFÉ"]


def test_last_word_is_a_prefix(api, server):
    chat = new_chat(api)
    deploy = add_message(server, chat["id"], "user", "deployment of kubernetes clusters")
    add_message(server, chat["id"], "user", "deploy it")
    assert deploy in found(api, "deplo")
    assert found(api, "kubernetes deploym") == [deploy]
    # Only the last word: an earlier one is a whole word.
    assert found(api, "deplo kubernetes") == []
    [item] = search(api, "clus")
    assert hits(item) == ["clusters"]


def test_one_letter_last_word_is_a_word_not_a_prefix(api, server):
    chat = new_chat(api)
    letter = add_message(server, chat["id"], "user", "vitamin k is here")
    add_message(server, chat["id"], "user", "kilometres and kettles")
    assert found(api, "vitamin k") == [letter]


def test_quoted_phrase(api, server):
    chat = new_chat(api)
    phrase = add_message(server, chat["id"], "user", "I ate a red apple today")
    apart = add_message(server, chat["id"], "user", "the apple was red")
    assert found(api, '"red apple"') == [phrase]
    assert sorted(found(api, "red apple")) == sorted([phrase, apart])
    [item] = search(api, '"red apple"')
    assert hits(item) == ["red apple"]
    # A closed phrase is exact: no prefix.
    assert found(api, '"red app"') == []
    # An unclosed quote runs to the end and, being last, its last word is a prefix.
    assert found(api, '"red app') == [phrase]


# -- hostile text ----------------------------------------------------------------------

HOSTILE = [
    '"', '""', '"""', "'", "''", "*", "**", "-", "--", "+", "^", ":", "::", "(", ")", "()", "((a)", "{a b}",
    "[x]", "\\", "\\\\", "%", "%%", "_", "?", "!", "#", "&", "|", "~", "`", "$", "@", "=", ";", ",", ".",
    "AND", "OR", "NOT", "NEAR", "and", "a AND", "OR b", "NOT zebra", "zebra NOT", "NEAR(a b, 2)",
    "NEAR/2", "a OR b AND c", "zebra*", "*zebra", "ze*bra", "-zebra", "zebra-", "^zebra", "+zebra",
    "content:zebra", "content:", ":zebra", "message_fts:zebra", "{content}: zebra", "rank:1", "rowid:1",
    "col1:x", '"zebra', 'zebra"', '"zebra" "', '"a" OR "b"', "MATCH", "bm25(message_fts)",
    "'; DROP TABLE message; --", "\" OR 1=1 --", "1' OR '1'='1", "<script>alert(1)</script>",
    "<mark>zebra</mark>", "&lt;b&gt;", "\ue000zebra\ue001", "\ue001", "😀", "👩‍👩‍👧", "🇫🇷 flag",
    "\u0301", "e\u0301", "\u200b", "\u200d", "\ufeff", "\u202e evil", "שלום", "مرحبا", "日本語",
    "Ω≈ç√∫", "ﬁ ligature", "İstanbul", "ß", "\t", "a\nb", "\r\n", "\x01\x02", "0", "-1", "1e309",
    "NaN", "null", "undefined", "{}", "[]", "%00", "\x00", "zebra\x00", "\x00\"", "%s%s%s", "{{7*7}}", "${jndi:x}",
    "a " * 250, "zebra " * 83, "x" * 500, "é" * 500, '"' * 500, "(" * 500, "* " * 250,
]


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory):
    """One server for the whole table: the queries only read."""
    proc = ServerProcess(tmp_path_factory.mktemp("hostile") / "data").start()
    api = proc.api()
    chat = new_chat(api)
    add_message(proc, chat["id"], "user", "zebra NEAR the AND gate OR not (a) \"quoted\" content: x")
    yield proc
    proc.stop()


@pytest.mark.parametrize("q", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_queries_are_text_never_an_error(hostile_server, q):
    r = hostile_server.api().get("/api/search?q=" + quote(q, safe=""))
    if not q.strip():
        assert_invalid(r, "q")  # only whitespace: nothing to search for
        return
    assert r.status == 200, (q, r)
    for item in r.body["items"]:
        assert isinstance(item["snippet"], str)
        for a, b in item["highlights"]:
            assert 0 <= a < b <= len(item["snippet"])


def test_operators_and_column_filters_are_searched_as_words(api, server):
    chat = new_chat(api)
    gate = add_message(server, chat["id"], "user", "the NEAR AND gate OR not")
    col = add_message(server, chat["id"], "user", "set content: zebra in the header")
    add_message(server, chat["id"], "user", "zebra crossing")
    assert found(api, "NEAR AND OR") == [gate]
    assert found(api, "gate NOT") == [gate]
    assert found(api, "content:zebra") == [col]
    assert found(api, "-zebra") == found(api, "zebra")
    assert found(api, "((gate") == [gate]


def test_invalid_utf8_and_nul_in_the_query(api, server):
    chat = new_chat(api)
    add_message(server, chat["id"], "user", "zebra")
    for raw in ("%ff%fe", "zebra%00", "%00", "%ed%a0%80"):
        r = api.get("/api/search?q=" + raw)
        assert r.status == 200, (raw, r)


def test_highlights_are_offsets_in_code_points_of_plain_text(api, server):
    chat = new_chat(api)
    add_message(server, chat["id"], "user", "😀👩‍👩‍👧 <b>zebra</b> \ue000 private \ue001 &amp; zebra")
    [item] = search(api, "zebra")
    assert item["snippet"] == "😀👩‍👩‍👧 <b>zebra</b> \ue000 private \ue001 &amp; zebra"
    assert item["highlights"] == [[10, 15], [38, 43]] and hits(item) == ["zebra", "zebra"]


def test_snippets_are_plain_text_without_markdown_syntax(api, server):
    chat = new_chat(api)
    add_message(server, chat["id"], "assistant",
                "## Walrus facts\n\n- [x] The **walrus** uses its `tusks` to climb; see "
                "[the walrus page](https://example.org/walrus) and *more* ~~walrus~~ lore.\n"
                "> A quoted walrus\n\n```python\nwalrus = 1\n```\n| walrus | tusk |\n|---|---|")
    [item] = search(api, "walrus")
    text = item["snippet"]
    for syntax in ("**", "##", "`", "](", "~~", "> ", "- [x]", "|"):
        assert syntax not in text, (syntax, text)
    assert "see the walrus page and more walrus lore. A quoted walrus walrus = 1 walrus tusk" in text
    assert set(hits(item)) == {"walrus"}
    # What only looks like syntax stays: a snake_case name, a product.
    add_message(server, chat["id"], "user", "the snake_case name of 2*3*4")
    assert search(api, "snake_case")[0]["snippet"] == "the snake_case name of 2*3*4"


# -- validation -----------------------------------------------------------------------

@pytest.mark.parametrize("query, field", [
    ("", "q"), ("q=", "q"), ("q=%20%20%09", "q"), ("q=" + "x" * 501, "q"),
    ("q=a&limit=0", "limit"), ("q=a&limit=101", "limit"), ("q=a&limit=-1", "limit"),
    ("q=a&limit=ten", "limit"), ("q=a&limit=1.5", "limit"), ("q=a&limit=%C2%B2", "limit"),
    ("q=a&limit=%D9%A1%D9%A0", "limit"),
    ("q=a&role=system", "role"), ("q=a&role=tool", "role"),
    ("q=a&from=yesterday", "from"), ("q=a&to=2026-13-01", "to"), ("q=a&from=1700000000", "from"),
    ("q=a&from=2026-02-01&to=2026-01-01", "to"),
    ("q=a&folder_id=f_missing", "folder_id"),
])
def test_refusals_say_what_to_fix(api, query, field):
    fields = assert_invalid(api.get("/api/search?" + query), field)
    if field == "q" and "x" * 501 not in query:
        assert fields["q"] == "Type something to search for."


def test_every_problem_is_listed_at_once(api):
    fields = assert_invalid(api.get("/api/search?q=&limit=0&role=x&from=never"), "q", "limit", "role", "from")
    assert len(fields) == 4


def test_query_length_at_the_limit_is_fine(api):
    assert api.get("/api/search?q=" + "x" * 500).status == 200


def test_search_needs_the_token(server):
    r = server.api(token=None).get("/api/search?q=zebra")
    assert r.status == 401


def test_limit_default_bounds_and_order(api, server):
    chat = new_chat(api)
    for i in range(25):
        add_message(server, chat["id"], "user", "otter " * (1 + i % 5) + f"number {i}")
    assert len(search(api, "otter")) == 20
    assert len(search(api, "otter", limit=5)) == 5
    assert len(search(api, "otter", limit=1)) == 1
    assert len(search(api, "otter", limit=100)) == 25
    # The first five of the full list are the five of limit=5: the limit cuts a ranking.
    assert found(api, "otter", limit=5) == found(api, "otter", limit=100)[:5]


# -- what is never found ----------------------------------------------------------------

def test_deleted_chats_are_not_found_until_restored(api, server):
    chat = new_chat(api, title="Gone")
    mid = add_message(server, chat["id"], "user", "pangolin facts")
    assert found(api, "pangolin") == [mid]
    assert api.delete(f"/api/chats/{chat['id']}").status == 204
    assert found(api, "pangolin") == []
    assert api.post(f"/api/chats/{chat['id']}/restore").status == 200
    assert found(api, "pangolin") == [mid]
    assert api.delete(f"/api/chats/{chat['id']}?purge=1").status == 204
    assert found(api, "pangolin") == []
    assert sql(server, "SELECT count(*) FROM message_fts WHERE message_fts MATCH 'pangolin'") == [(0,)]


def test_temporary_chats_are_never_found(api, server):
    temp = new_chat(api, temporary=True)
    add_message(server, temp["id"], "user", "secret narwhal")
    assert found(api, "narwhal") == []
    assert api.patch(f"/api/chats/{temp['id']}", {"temporary": False}).status == 200
    assert len(found(api, "narwhal")) == 1


def test_archived_chats_are_found(api, server):
    chat = new_chat(api)
    mid = add_message(server, chat["id"], "user", "archived axolotl")
    assert api.patch(f"/api/chats/{chat['id']}", {"archived": True}).status == 200
    assert found(api, "axolotl") == [mid]


def test_tool_output_reasoning_and_deleted_messages_are_not_indexed(api, server):
    chat = new_chat(api)
    add_message(server, chat["id"], "tool", "tapir from a tool", tool_call_id="call_1")
    add_message(server, chat["id"], "system", "tapir system note")
    add_message(server, chat["id"], "assistant", "an answer", reasoning_content="thinking about a tapir")
    add_message(server, chat["id"], "user", "deleted tapir", deleted_at=time.time())
    assert found(api, "tapir") == []


# -- the index follows every change ------------------------------------------------------

def test_direct_row_changes_are_followed(api, server):
    """The triggers: insert, content update, soft delete, undelete, role change, delete."""
    chat = new_chat(api)
    mid = add_message(server, chat["id"], "assistant", "first draft about lemurs")
    assert found(api, "lemurs") == [mid]
    sql(server, "UPDATE message SET content = 'now about okapis' WHERE id = ?", (mid,))
    assert found(api, "lemurs") == [] and found(api, "okapis") == [mid]
    sql(server, "UPDATE message SET status = 'error', usage_json = '{}' WHERE id = ?", (mid,))
    assert found(api, "okapis") == [mid]
    sql(server, "UPDATE message SET deleted_at = 1 WHERE id = ?", (mid,))
    assert found(api, "okapis") == []
    sql(server, "UPDATE message SET deleted_at = 2 WHERE id = ?", (mid,))
    sql(server, "UPDATE message SET deleted_at = NULL WHERE id = ?", (mid,))
    assert found(api, "okapis") == [mid]
    sql(server, "UPDATE message SET role = 'tool' WHERE id = ?", (mid,))
    assert found(api, "okapis") == []
    sql(server, "UPDATE message SET role = 'assistant' WHERE id = ?", (mid,))
    assert found(api, "okapis") == [mid]
    # A reply being written is found once it is done (its text changes twice a second meanwhile).
    sql(server, "UPDATE message SET status = 'streaming' WHERE id = ?", (mid,))
    assert found(api, "okapis") == []
    sql(server, "UPDATE message SET content = 'now about okapis and tapirs' WHERE id = ?", (mid,))
    assert found(api, "tapirs") == []
    sql(server, "UPDATE message SET status = 'complete' WHERE id = ?", (mid,))
    assert found(api, "tapirs") == [mid]
    streaming = add_message(server, chat["id"], "assistant", "half an answer about okapis", status="streaming")
    assert streaming not in found(api, "okapis")
    sql(server, "UPDATE message SET status = 'interrupted' WHERE id = ?", (streaming,))
    assert streaming in found(api, "okapis")
    sql(server, "DELETE FROM message WHERE id = ?", (streaming,))
    other = add_message(server, chat["id"], "user", "okapis and lemurs")
    assert sorted(found(api, "okapis")) == sorted([mid, other])
    # Every row is one the index should hold, so it can be checked against them word by
    # word: a trigger that removed other words than it added would fail here.
    check_index_matches_messages(server)
    sql(server, "DELETE FROM message WHERE id = ?", (mid,))
    assert found(api, "okapis") == [other]
    check_index_matches_messages(server)


def check_index_matches_messages(server):
    """FTS5's integrity-check against the content table (rank 1): 'malformed' on any difference."""
    sql(server, "INSERT INTO message_fts (message_fts, rank) VALUES ('integrity-check', 1)")


def test_sent_messages_and_replies_are_found(setup):
    chat = setup.chat(title="Live")
    setup.fake.enqueue([S.text("Capybaras "), S.text("are calm.")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="tell me about capybaras")
    user_id = sock.until("accepted")["message_id"]
    reply_id = sock.until("done")["message_id"]
    sock.until("turn_end")
    items = search(setup.api, "capybaras")
    assert {i["message_id"]: i["role"] for i in items} == {user_id: "user", reply_id: "assistant"}


def active_of(api, q) -> dict[int, bool]:
    return {item["message_id"]: item["active"] for item in search(api, q)}


def test_every_version_is_found_and_says_whether_it_is_on_the_active_branch(setup):
    chat = setup.chat(title="Edits")
    setup.fake.enqueue([S.text("wombat answer")], [S.text("platypus answer")], [S.text("echidna answer")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="question about wombats")
    user_id = sock.until("accepted")["message_id"]
    old_reply = sock.until("done")["message_id"]
    sock.until("turn_end")
    assert active_of(setup.api, "wombat") == {user_id: True, old_reply: True}
    sock.send(type="edit", message_id=user_id, content="question about platypuses")
    new_user = sock.until("branched")["message_id"]
    reply_id = sock.until("done")["message_id"]
    sock.until("turn_end")
    # The old question and its reply stay found, off the branch shown; the new ones are on it.
    assert active_of(setup.api, "wombat") == {user_id: False, old_reply: False}
    assert active_of(setup.api, "platypus") == {new_user: True, reply_id: True}
    sock.send(type="regenerate", message_id=reply_id)
    new_reply = sock.until("branched")["message_id"]
    sock.until("turn_end")
    assert active_of(setup.api, "platypus answer") == {reply_id: False}
    assert active_of(setup.api, "echidna") == {new_reply: True}
    # A hit's message id opens its branch.
    r = setup.api.post(f"/api/chats/{chat}/active", {"message_id": old_reply})
    assert r.status == 200 and [m["id"] for m in r.body["items"]] == [user_id, old_reply]
    assert active_of(setup.api, "wombat") == {user_id: True, old_reply: True}
    assert active_of(setup.api, "platypus") == {new_user: False, reply_id: False}
    assert active_of(setup.api, "echidna") == {new_reply: False}


def test_a_queued_message_counts_as_on_the_active_branch(api, server):
    chat = new_chat(api)["id"]
    question = add_message(server, chat, "user", "walrus question")
    answer = add_message(server, chat, "assistant", "walrus answer")
    waiting = add_message(server, chat, "user", "walrus again", status="queued")  # listed after the branch
    assert active_of(api, "walrus") == {question: True, answer: True, waiting: True}


# -- filters ------------------------------------------------------------------------------

def test_filter_by_role_folder_and_dates(api, server):
    sql(server, "INSERT INTO folder (id, name, created_at) VALUES ('f_work', 'Work', 0)")
    work = new_chat(api, folder_id="f_work")
    home = new_chat(api)
    day = 86400.0
    jan1 = 1_767_225_600.0  # 2026-01-01T00:00:00Z
    q_old = add_message(server, work["id"], "user", "heron question", created_at=jan1 + 3600)
    a_old = add_message(server, work["id"], "assistant", "heron answer", created_at=jan1 + 7200)
    q_new = add_message(server, home["id"], "user", "heron again", created_at=jan1 + 10 * day)
    assert sorted(found(api, "heron")) == sorted([q_old, a_old, q_new])
    assert sorted(found(api, "heron", role="user")) == sorted([q_old, q_new])
    assert found(api, "heron", role="assistant") == [a_old]
    assert sorted(found(api, "heron", folder_id="f_work")) == sorted([q_old, a_old])
    # A bare date: `from` is the start of that day, `to` its end (UTC).
    assert sorted(found(api, "heron", to="2026-01-01")) == sorted([q_old, a_old])
    assert found(api, "heron", **{"from": "2026-01-02"}) == [q_new]
    assert found(api, "heron", **{"from": "2026-01-11", "to": "2026-01-11"}) == [q_new]
    # A date-time is exact, with its offset (none: UTC).
    assert found(api, "heron", **{"from": "2026-01-01T01:30:00Z", "to": "2026-01-01T02:00:00"}) == [a_old]
    assert found(api, "heron", to="2026-01-01T03:00:00+02:00") == [q_old]
    assert found(api, "heron", role="assistant", folder_id="f_work", **{"from": "2026-01-01"}) == [a_old]
    # The ends of the calendar are dates too.
    assert len(found(api, "heron", **{"from": "0001-01-01", "to": "9999-12-31"})) == 3
    assert len(found(api, "heron", **{"from": "0001-01-01T00:00:00+14:00", "to": "9999-12-31T23:59:59-14:00"})) == 3


# -- the upgrade builds the index ------------------------------------------------------------

def test_upgrade_indexes_existing_messages(tmp_path):
    """A database from before search (schema 3) is indexed by the migration."""
    from peewee import SqliteDatabase

    from backend.store.migrations import migrate

    data = tmp_path / "data"
    data.mkdir()
    db = SqliteDatabase(str(data / "numi.db"))
    with db.connection_context():
        migrate(db, target=3)
    con = sqlite3.connect(data / "numi.db")
    with con:
        con.execute("INSERT INTO chat (id, title, created_at, updated_at) VALUES ('c_old', 'Old', 0, 0)")
        # The last row is a queued message discarded before it was sent: it stays hidden.
        con.executemany("INSERT INTO message (chat_id, role, content, created_at, deleted_at, status) "
                        "VALUES (?, ?, ?, 0, ?, ?)",
                        [("c_old", "user", "an old meerkat question", None, "complete"),
                         ("c_old", "assistant", "an old meerkat answer", None, "complete"),
                         ("c_old", "tool", "meerkat tool output", None, "complete"),
                         ("c_old", "user", "a deleted meerkat", 5.0, "queued")])
    con.close()
    server = ServerProcess(data).start()
    try:
        items = search(server.api(), "meerkat")
        assert sorted((i["role"], i["snippet"], i["active"]) for i in items) == [
            ("assistant", "an old meerkat answer", True), ("user", "an old meerkat question", True)]
    finally:
        server.stop()
