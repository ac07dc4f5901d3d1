"""Turns and the desktop shell: close-to-tray keeps a turn running, a notification
is raised and opens the chat, quit asks while a turn runs, then stops it like Stop, within 10 s."""
import json
import time

from tests.desktop.harness import (
    Numi,
    close_until_closing,
    find_dialog,
    find_window,
    press_keys,
    tray_click,
    tray_menu,
    wait_x,
)
from tests.fakeprovider import script as S
from tests.fakeprovider.server import FakeProvider
from tests.numi_client import Api, ServerProcess, Socket


class _Info:
    """Enough of ServerProcess for the test clients, from the desktop app's server.json."""

    def __init__(self, info):
        self.info = info
        self.port, self.token = info["port"], info["token"]

    def ws_url(self, chat_id):
        return f"ws://127.0.0.1:{self.port}/ws/{chat_id}"


def _wait_tray_label(session, pid, label, timeout=15.0):
    deadline = time.monotonic() + timeout
    while True:
        _, items = tray_menu(session.env, pid)
        if label in items:
            return items
        if time.monotonic() > deadline:
            raise AssertionError(f"tray menu never showed {label!r}: {sorted(items)}")
        time.sleep(0.1)  # polling the tray's D-Bus menu: there is no change signal to wait on here


def _tray_quit(session, numi):
    bus, items = tray_menu(session.env, numi.proc.pid)
    tray_click(session.env, bus, items["Quit Numi"])


def _wait_dialog(display) -> int:
    return wait_x(lambda: find_dialog(display), "the quit question did not appear")


def test_close_to_tray_notification_and_quit_while_running(session, tmp_path):
    data = tmp_path / "data"
    with FakeProvider() as fake:
        numi = Numi(session, data)
        try:
            numi.wait_line(r"UI ready", 60)
            srv = _Info(numi.info)
            api = Api(srv.port, srv.token)
            provider = api.post("/api/providers", {"kind": "openai_compatible", "name": "Fake Local",
                                                   "base_url": fake.base_url, "api_key": "sk-test-not-real"}).body
            model = api.post("/api/models", {"provider_id": provider["id"], "api_model": "fake-model"}).body
            chat_id = api.post("/api/chats", {"model_id": model["id"], "title": "Desk test"}).body["id"]

            # A turn that streams some text, then waits for the test.
            fake.enqueue([S.text("Hello "), S.hang(), S.text("world.")])
            sock = Socket(srv, chat_id)
            sock.send(type="send", request_id="r1", content="hi")
            fake.wait_hanging(1, timeout=15)
            _wait_tray_label(session, numi.proc.pid, "1 reply running")

            # Closing the window while it runs: the app stays (in the tray), the turn goes on.
            assert find_window(session.env["DISPLAY"]) is not None
            mark = len(numi.lines)
            close_until_closing(numi, session.env["DISPLAY"], after=mark)
            numi.wait_line(r"window closed to the tray \(1 replies running\)", after=mark)
            wait_x(lambda: find_window(session.env["DISPLAY"]) is None, "the window did not go")
            assert numi.proc.poll() is None
            fake.release()
            sock.until("turn_end", status="completed")
            assert sock.text() == "Hello world."
            _wait_tray_label(session, numi.proc.pid, "No replies running")

            # The window is hidden, so the finished turn raised a native notification...
            numi.wait_line(rf"notification shown for chat {chat_id}", after=mark)
            assert int(session.dunst("count", "displayed").strip() or 0) >= 1
            # ...and so does a turn that waits for the person's approval.
            asked_mark = len(numi.lines)
            fake.enqueue([S.tool_call(0, "c1", "guarded", '{"text": "x"}')], [S.text("Done.")])
            sock.send(type="send", request_id="r1b", content="use the tool")
            ask = sock.until("approval_required")
            numi.wait_line(rf"notification shown for chat {chat_id}", after=asked_mark)
            sock.send(type="approve", approval_id=ask["approval_id"], decision="allow")
            sock.until("turn_end", status="completed")
            # ...and so does a question from the model (a model that calls tools may ask).
            api.patch(f"/api/models/{model['id']}", {"supports": {"tools": True}})
            asked_mark = len(numi.lines)
            items = [{"key": "db", "prompt": "Which database?", "kind": "text"}]
            fake.enqueue([S.tool_call(0, "q1", "ask_user", json.dumps({"items": items}))], [S.text("Noted.")])
            sock.send(type="send", request_id="r1c", content="ask me")
            question = sock.until("question")
            numi.wait_line(rf"notification shown for chat {chat_id}", after=asked_mark)
            sock.send(type="answer", question_id=question["question_id"], answers={"db": "SQLite"})
            sock.until("turn_end", status="completed")
            # ...and clicking it (its default action) opens that chat in the window.
            session.dunst("action", "0")
            numi.wait_line(rf"opening chat {chat_id}", after=mark)
            numi.wait_line("window shown", after=mark)
            session.dunst("close-all")  # closed notifications move to dunst's history
            history = json.loads(session.dunst("history"))["data"][0]
            assert any(n["summary"]["data"] == "Desk test" for n in history)
            assert any("Waiting for your approval to run guarded" in n["body"]["data"] for n in history)
            assert any(n["body"]["data"] == "Asks you: Which database?" for n in history)

            # Quit from the tray while a turn runs asks first; declining keeps everything going.
            fake.enqueue([S.text("Partial "), S.hang()])
            sock.send(type="send", request_id="r2", content="again")
            fake.wait_hanging(1, timeout=15)
            display = session.env["DISPLAY"]
            mark = len(numi.lines)
            _tray_quit(session, numi)
            numi.wait_line(r"asking before quitting \(1 replies running\)", after=mark)
            press_keys(display, _wait_dialog(display), "Escape")
            numi.wait_line("quit cancelled", after=mark)
            assert numi.proc.poll() is None and fake.hanging == 1

            # Asked again and answered OK: the turn stops like Stop and Numi exits within 10 s.
            mark = len(numi.lines)
            _tray_quit(session, numi)
            numi.wait_line(r"asking before quitting \(1 replies running\)", after=mark)
            asked = time.monotonic()
            press_keys(display, _wait_dialog(display), "Alt_L", "o")  # the dialog's "_OK" mnemonic
            assert numi.proc.wait(10) == 0 and time.monotonic() - asked < 10
            sock.close()
        finally:
            numi.kill()

    # The partial reply was kept, as Stop keeps it.
    headless = ServerProcess(data).start()
    try:
        items = headless.api().get(f"/api/chats/{chat_id}/messages").body["items"]
        last = items[-1]
        assert last["role"] == "assistant" and last["status"] == "cancelled"
        assert last["content"] == "Partial "
    finally:
        headless.stop()
