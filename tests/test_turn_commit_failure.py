"""A commit that fails mid-turn ends the turn cleanly: an error, turn_end failed, nothing left streaming."""
from __future__ import annotations

import sqlite3

from tests.fakeprovider import script as S

# SQLite refuses the reply's final save, as a full disk or a broken row would: the
# server's own commit raises, inside the turn, with nothing mocked.
REFUSE_FINAL_SAVE = """
CREATE TRIGGER test_refuse_final_save BEFORE UPDATE OF status ON message
WHEN NEW.role = 'assistant' AND NEW.status = 'complete'
BEGIN SELECT RAISE(ABORT, 'refused by the test'); END
"""


def test_a_failed_commit_ends_the_turn_failed_and_keeps_the_text(setup):
    chat = setup.chat(title="t")
    db = sqlite3.connect(setup.server.data_dir / "numi.db", isolation_level=None)
    db.execute(REFUSE_FINAL_SAVE)
    setup.fake.enqueue([S.text("partial "), S.text("answer")])
    sock = setup.socket(chat)
    sock.send(type="send", request_id="r1", content="go")
    error = sock.until("error")
    assert error["code"] == "internal" and "log" in error["message"]
    assert sock.until("turn_end")["status"] == "failed"
    reply = setup.messages(chat)[-1]
    assert reply["role"] == "assistant" and reply["status"] == "error"
    assert reply["content"] == "partial answer" and reply["error"]["code"] == "internal"
    sock.send(type="ping")
    sock.until("pong")
    # The chat is free again: the next turn runs and saves as usual.
    db.execute("DROP TRIGGER test_refuse_final_save")
    db.close()
    setup.fake.enqueue([S.text("second")])
    sock.send(type="send", request_id="r2", content="again")
    assert sock.until("turn_end", turn_id=sock.until("turn_start")["turn_id"])["status"] == "completed"
    assert setup.messages(chat)[-1]["content"] == "second"
