"""The agent-tools UI in a real Chromium against the real server and the fake provider:
approval cards (edit, invalid JSON, no "always" for a chained shell line), tool rows
(shell exit-code chips, long output with Show all), steering with Ctrl+Enter, the
approvals screen and the chat's own tool policies, the workspace picker, and the
sidebar's "needs your approval" mark.

Tools come from tests/tool_plugin.py (`upper`, `guarded`, and with NUMI_TEST_WORKSPACE the
real `shell`). Every wait is on a DOM state (Playwright's auto-waiting `expect`), on the
fake provider's own events (a response parked in a `hang` step) or on the server's saved
state: no sleeps.
"""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import (
    CHROMIUM,
    open_chat,
    reload_counting_bubbles,
    replies,
    send,
    shot,
    sign_in,
    wait_chat_ready,
    wait_until,
)
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium); "
           "CI installs it")


def tool_rows(setup, chat_id) -> list[str]:
    return [m["content"] for m in setup.messages(chat_id) if m["role"] == "tool"]


def shell_call(call_id: str, command: str) -> list[dict]:
    return [S.tool_call(0, call_id, "shell", json.dumps({"command": command}))]


# A chat socket's events handed to the page one per frame (the app socket's as they come),
# and the queue chips each drawn frame showed: after a reload the socket re-sends the last
# turn in one burst, which a fast page folds into a single frame and a loaded one draws in
# several. Paced, every state the replay passes through is drawn, so a row or chip shown
# for a moment is shown every run.
PACED_SCRIPT = r"""
(() => {
  const Real = window.WebSocket;
  const chips = window.__chips = [];
  window.WebSocket = class extends Real {
    set onmessage(fn) {
      if (this.url.includes("/ws/_app")) { super.onmessage = fn; return; }
      const waiting = [];
      let busy = false;
      const next = () => {
        busy = waiting.length > 0;
        if (!busy) return;
        fn.call(this, waiting.shift());
        requestAnimationFrame(() => setTimeout(() => {
          chips.push(document.querySelectorAll(".queue .queue-chip").length);
          next();
        }));
      };
      super.onmessage = (m) => { waiting.push(m); if (!busy) next(); };
    }
  };
})();
"""


def reload_paced(page, title: str) -> tuple[list[int], int]:
    """reload_counting_bubbles with the chat socket's events paced (PACED_SCRIPT): the
    bubble counts drawn, and the most queue chips any frame showed."""
    page.add_init_script(PACED_SCRIPT)
    counts = reload_counting_bubbles(page, title)
    return counts, max(page.evaluate("window.__chips"), default=0)


def transcript(page) -> list[tuple[str, str]]:
    """The thread as shown, in order: (role, text) — a reply's tool calls by name."""
    rows = page.evaluate("""() => [...document.querySelectorAll(".messages > article.msg")].map((m) => {
        const role = m.classList.contains("user") ? "user" : m.classList.contains("assistant") ? "assistant" : "other";
        const tools = [...m.querySelectorAll(".tool-call .tool-name")].map((t) => "tool:" + t.textContent);
        const body = m.querySelector(".msg-body")?.textContent.trim() || "";
        return [role, [body, ...tools].filter(Boolean).join(" + ")];
    })""")
    return [tuple(x) for x in rows]


# --- (a) the approval card: edit the arguments, invalid JSON refused inline ------------------

def test_approval_card_edit_runs_what_was_approved(page, setup):
    chat = setup.chat(title="E2E edit approval")
    setup.fake.enqueue([S.tool_call(0, "call_1", "guarded", '{"text": "as asked"}')], S.reply("Echoed."))
    open_chat(page, setup.server, chat, "E2E edit approval")
    send(page, "Use the guarded tool")

    card = page.get_by_role("group", name="Approval needed for guarded")
    expect(card).to_be_visible()
    expect(card.locator("pre")).to_have_text('{\n  "text": "as asked"\n}')
    row = page.locator("details.tool-call")
    expect(row).to_have_attribute("data-state", "wait")
    # The chat list marks the chat: it needs the person, besides running.
    item = page.locator(f".chat-item[data-id='{chat}']")
    expect(item.get_by_role("img", name="needs your approval")).to_be_visible()
    expect(item.get_by_role("img", name="running")).to_be_visible()

    card.get_by_role("button", name=re.compile("^Edit")).click()
    area = card.get_by_role("textbox", name="Arguments (JSON)")
    expect(area).to_be_focused()
    expect(area).to_have_value('{\n  "text": "as asked"\n}')

    # Not JSON: said under the field, nothing sent, the card still answerable.
    area.fill('{"text": "as edited"')
    card.get_by_role("button", name="Allow once").click()
    error = card.get_by_role("alert").filter(has_text="not valid JSON")
    expect(error).to_be_visible()
    expect(area).to_have_attribute("aria-invalid", "true")
    expect(area).to_be_focused()
    expect(card.get_by_role("button", name="Allow once")).to_be_enabled()
    shot(page, "tools-01-approval-invalid-json")
    # JSON, but not an object.
    area.fill("[1, 2]")
    area.press("Control+Enter")  # the same as Allow once
    expect(card.get_by_role("alert").filter(has_text="must be one JSON object")).to_be_visible()
    expect(row).to_have_attribute("data-state", "wait")
    assert tool_rows(setup, chat) == []  # nothing ran, nothing was answered

    area.fill('{"text": "as edited"}')
    expect(card.get_by_role("alert").filter(has_text="JSON")).to_have_count(1)  # the old sentence stays until the next try
    shot(page, "tools-02-approval-editing")
    card.get_by_role("button", name="Allow once").click()
    expect(card).to_be_hidden()
    expect(row).to_have_attribute("data-state", "ok")
    row.locator("summary").click()
    # What ran is what was approved: the arguments shown and the tool's echo.
    expect(row.locator(".tool-section").first.locator("pre")).to_contain_text('"text": "as edited"')
    expect(row.locator(".tool-out")).to_have_text('{"echo": "as edited"}')
    expect(replies(page).last.locator(".msg-body")).to_have_text("Echoed.")
    expect(replies(page).last).to_have_attribute("data-status", "complete")
    expect(item.get_by_role("img", name="needs your approval")).to_have_count(0)
    shot(page, "tools-03-approval-edited-ran")
    [result] = tool_rows(setup, chat)
    assert "edited the arguments" in result and result.endswith('{"echo": "as edited"}')


# --- (b) a chained shell line: no "always"; exit-code chips ----------------------------------

@pytest.fixture
def ws_setup(setup_with, tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    setup = setup_with({"NUMI_TEST_WORKSPACE": str(workspace)})
    setup.workspace = workspace
    return setup


def test_chained_shell_command_offers_no_always_and_rows_show_exit_codes(page, ws_setup):
    setup = ws_setup
    chat = setup.chat(title="E2E shell")
    setup.fake.enqueue(shell_call("c1", "echo one; echo two"), shell_call("c2", "ls no-such-file"),
                       S.reply("Both ran."))
    open_chat(page, setup.server, chat, "E2E shell")
    send(page, "Run things")

    card = page.get_by_role("group", name="Approval needed for shell")
    expect(card).to_be_visible()
    expect(card.locator("pre")).to_contain_text('"command": "echo one; echo two"')
    always = card.get_by_role("button", name="Always allow")
    expect(always).to_be_disabled()
    expect(always).to_have_attribute("title", re.compile("chains commands"))
    expect(card.locator(".approval-note")).to_contain_text("only a single plain command")
    row = page.locator("details.tool-call").first
    expect(row.locator(".tool-preview")).to_have_text("echo one; echo two")
    shot(page, "tools-04-shell-no-always")
    card.get_by_role("button", name="Allow once").click()

    # The second command is a plain one: "always" is offered.
    card2 = page.get_by_role("group", name="Approval needed for shell")
    expect(card2.locator("pre")).to_contain_text("ls no-such-file")
    expect(card2.get_by_role("button", name="Always allow")).to_be_enabled()
    card2.get_by_role("button", name="Allow once").click()
    expect(replies(page).last.locator(".msg-body")).to_have_text("Both ran.")

    rows = page.locator("details.tool-call")
    expect(rows).to_have_count(2)
    first, second = rows.nth(0), rows.nth(1)
    expect(first.locator(".exit-chip")).to_have_text("exit 0")
    expect(first.locator(".exit-chip")).to_have_class(re.compile(r"\bok\b"))
    expect(second.locator(".exit-chip")).to_have_text(re.compile(r"^exit [1-9]\d*$"))
    expect(second.locator(".exit-chip")).to_have_class(re.compile(r"\bbad\b"))
    expect(first.locator(".tool-time")).to_have_text(re.compile(r"^\d+(\.\d+)? m?s$"))
    first.locator("summary").click()
    # The footer became the chip: the output shows what the command printed.
    expect(first.locator(".tool-out")).to_have_text("one\ntwo")
    expect(first.locator(".exit-chip")).to_have_attribute("title", re.compile(r"^\[exit code 0 · \d+ m?s\]$"))
    colours = page.evaluate("""() => [...document.querySelectorAll('.exit-chip')].map((c) => getComputedStyle(c).color)""")
    assert colours[0] != colours[1]
    shot(page, "tools-05-shell-exit-chips")
    # Nothing chained was remembered: no rule was offered, none exists.
    assert setup.api.get(f"/api/approvals?chat_id={chat}").body["rules"] == []


# --- (c) steering with Ctrl+Enter ------------------------------------------------------------

def test_steer_with_ctrl_enter_lands_between_the_tool_row_and_the_answer(page, setup):
    chat = setup.chat(title="E2E steer")
    setup.fake.enqueue([S.text("Looking"), S.hang(), S.tool_call(0, "c1", "upper", '{"text": "abc"}')],
                       [S.text("Done, in French.")])
    open_chat(page, setup.server, chat, "E2E steer")
    send(page, "find it")
    setup.fake.wait_hanging(1, timeout=15)
    expect(replies(page).last.locator(".msg-body")).to_have_text("Looking")
    expect(page.locator(".composer-note")).to_contain_text("Enter: send now, to steer it")

    box = page.locator(".composer-input")
    box.fill("answer in French")
    box.press("Control+Enter")
    chip = page.locator(".queue .queue-chip")
    expect(chip).to_have_count(1)
    expect(chip).to_have_attribute("data-steer", "true")
    expect(chip.locator(".steer-mark")).to_have_text("steer")
    expect(chip).to_contain_text("answer in French")
    expect(page.get_by_role("button", name="Remove steering message: answer in French")).to_be_visible()
    # Shown once: the chip, no bubble beside it until it joins the reply.
    expect(page.locator("article.msg.user", has_text="answer in French")).to_have_count(0)
    shot(page, "tools-06-steer-queued")

    setup.fake.release()
    expect(page.locator(".queue")).to_be_hidden()
    expect(replies(page).last.locator(".msg-body")).to_have_text("Done, in French.")
    expect(replies(page).last).to_have_attribute("data-status", "complete")
    expect(page.locator(".messages > article.msg")).to_have_count(4)
    assert transcript(page) == [("user", "find it"), ("assistant", "Looking + tool:upper"),
                                ("user", "answer in French"), ("assistant", "Done, in French.")]
    expect(page.locator("article.msg.user", has_text="answer in French").locator(".msg-meta")).to_have_text("You")
    shot(page, "tools-07-steered")
    stored = [(m["role"], m["content"]) for m in setup.messages(chat)]
    assert stored == [("user", "find it"), ("assistant", "Looking"), ("tool", "ABC"),
                      ("user", "answer in French"), ("assistant", "Done, in French.")]
    # One turn: the steering message joined it rather than starting another.
    assert len(setup.fake.requests) == 2

    # A reload shows the same order from history, and still once the socket has re-sent
    # the turn (it ended under 180 s ago) and the page re-read the newest page at its end.
    counts, chips = reload_paced(page, "E2E steer")
    expect(replies(page).last.locator(".msg-body")).to_have_text("Done, in French.")
    # No row left the screen on the way (the replay wrote the steering message too), and
    # the message it names as queued before it was steered, already moved, is not shown.
    assert counts == [4]
    assert chips == 0
    assert transcript(page) == [("user", "find it"), ("assistant", "Looking + tool:upper"),
                                ("user", "answer in French"), ("assistant", "Done, in French.")]

    # The shortcut is in the sheet.
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("?")
    sheet = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(sheet).to_contain_text("send now, to steer it")
    page.keyboard.press("Escape")


def test_a_regenerated_reply_that_was_steered_reloads_whole(page, setup):
    chat = setup.chat(title="E2E regen steered")
    setup.fake.enqueue(S.reply("The first take."),
                       [S.text("Looking"), S.hang(), S.tool_call(0, "c1", "upper", '{"text": "abc"}')],
                       [S.text("Done, in French.")])
    open_chat(page, setup.server, chat, "E2E regen steered")
    send(page, "find it")
    expect(replies(page).last).to_have_attribute("data-status", "complete")
    replies(page).last.get_by_role("button", name="Regenerate this reply").click()
    setup.fake.wait_hanging(1, timeout=15)
    expect(replies(page).last.locator(".msg-body")).to_have_text("Looking")
    box = page.locator(".composer-input")
    box.fill("answer in French")
    box.press("Control+Enter")
    expect(page.locator(".queue .queue-chip")).to_have_count(1)
    setup.fake.release()
    expect(replies(page).last.locator(".msg-body")).to_have_text("Done, in French.")
    expect(replies(page).last).to_have_attribute("data-status", "complete")
    shown = [("user", "find it"), ("assistant", "Looking + tool:upper"), ("user", "answer in French"),
             ("assistant", "Done, in French.")]
    expect(page.locator(".messages > article.msg")).to_have_count(len(shown))
    assert transcript(page) == shown

    # Reloaded, the socket re-sends the regenerated turn (steering message and all): the
    # history read after the regenerate already holds all of it, and none of it goes.
    counts, chips = reload_paced(page, "E2E regen steered")
    assert counts == [len(shown)]
    assert chips == 0
    assert transcript(page) == shown


def test_a_message_queued_behind_a_tool_turn_leaves_that_turn_on_screen(page, setup):
    chat = setup.chat(title="E2E queued behind tools")
    setup.fake.enqueue([S.text("Looking"), S.hang(), S.tool_call(0, "c1", "upper", '{"text": "abc"}')],
                       [S.text("Found it.")], [S.text("Second"), S.hang(), S.text(" answer.")])
    open_chat(page, setup.server, chat, "E2E queued behind tools")
    send(page, "find it")
    setup.fake.wait_hanging(1, timeout=15)
    expect(replies(page).last.locator(".msg-body")).to_have_text("Looking")
    send(page, "and then this")
    expect(page.locator(".queue .queue-chip")).to_have_count(1)

    # The queued message keeps the id it was given when it was sent, and joins the branch
    # after the turn it waited for (the tool result and the step after it have newer ids
    # but come before it); its turn then starts from it. While it writes, the turn before
    # it stays on screen.
    setup.fake.release()
    setup.fake.wait_hanging(1, timeout=15)
    expect(replies(page).last.locator(".msg-body")).to_have_text("Second")
    shown = [("user", "find it"), ("assistant", "Looking + tool:upper"), ("assistant", "Found it."),
             ("user", "and then this"), ("assistant", "Second")]
    assert transcript(page) == shown
    setup.fake.release()
    expect(replies(page).last.locator(".msg-body")).to_have_text("Second answer.")
    expect(replies(page).last).to_have_attribute("data-status", "complete")
    shown[-1] = ("assistant", "Second answer.")
    assert transcript(page) == shown
    stored = [(m["role"], m["content"]) for m in setup.messages(chat)]
    assert stored == [("user", "find it"), ("assistant", "Looking"), ("tool", "ABC"), ("assistant", "Found it."),
                      ("user", "and then this"), ("assistant", "Second answer.")]

    # After a reload the socket re-sends that last turn: the rows before it stay too.
    counts, _ = reload_paced(page, "E2E queued behind tools")
    assert counts == [len(shown)]
    assert transcript(page) == shown


# --- (d) the approvals screen: a rule from "Always allow", removed --------------------------

def test_approvals_screen_lists_an_always_rule_and_removes_it(page, setup):
    chat = setup.chat(title="E2E rules")
    setup.fake.enqueue([S.tool_call(0, "call_1", "guarded", '{"text": "hi"}')], S.reply("Allowed for good."))
    open_chat(page, setup.server, chat, "E2E rules")
    send(page, "Use the guarded tool")
    card = page.get_by_role("group", name="Approval needed for guarded")
    card.get_by_role("button", name="Always allow").click()
    expect(replies(page).last.locator(".msg-body")).to_have_text("Allowed for good.")
    assert setup.api.get("/api/approvals").body["rules"] == [{"chat_id": chat, "tool": "guarded"}]

    page.keyboard.press("Control+,")
    page.get_by_role("navigation", name="Settings sections").get_by_role("link", name="Tools & approvals").click()
    expect(page.get_by_role("heading", name="Tools & approvals", level=2)).to_be_visible()
    rules = page.get_by_role("list", name="Always-allowed rules")
    rule = rules.get_by_role("listitem")
    expect(rule).to_have_count(1)
    expect(rule).to_contain_text("E2E rules")  # the chat's title, from the chat list
    expect(rule).to_contain_text("guarded")
    expect(rule).to_contain_text("any arguments")

    # The default policy of a tool for every chat.
    policy = page.get_by_role("list", name="Tool policies for every chat").locator("select[data-tool='guarded']")
    expect(policy).to_have_value("")
    expect(policy.locator("option").first).to_have_text("Tool's default (ask each time)")
    policy.select_option("deny")
    expect(page.locator(".approvals-status")).to_have_text("guarded never runs by default.")
    assert setup.api.get("/api/approvals").body["default"] == {"guarded": "deny"}
    rule.scroll_into_view_if_needed()
    shot(page, "tools-08-approvals-settings")
    policy.select_option("")
    expect(page.locator(".approvals-status")).to_have_text("guarded asks each time by default.")
    assert setup.api.get("/api/approvals").body["default"] == {}

    rule.get_by_role("button", name="Remove the rule guarded (any arguments)").click()
    expect(rule).to_have_count(0)
    expect(page.locator(".rules-empty")).to_be_visible()
    expect(page.locator(".approvals-status")).to_have_text("Removed: guarded (any arguments). It asks again.")
    assert setup.api.get("/api/approvals").body["rules"] == []

    # The chat's own policy, in its settings sheet.
    page.get_by_role("button", name="Close settings").click()
    wait_chat_ready(page, "E2E rules")
    page.get_by_role("button", name=re.compile("^Chat settings")).click()
    dialog = page.get_by_role("dialog", name="Chat settings")
    dialog.locator("summary", has_text="Tool approvals in this chat").click()
    mine = dialog.get_by_role("list", name="Tool policies in this chat").locator("select[data-tool='guarded']")
    expect(mine.locator("option").first).to_have_text("As for every chat (ask each time)")
    mine.select_option("allow")
    expect(dialog.locator(".approvals-status")).to_have_text("guarded runs without asking in this chat.")
    expect(dialog.locator(".rules-empty")).to_be_visible()
    shot(page, "tools-09-chat-tool-policies")
    body = setup.api.get(f"/api/approvals?chat_id={chat}").body
    assert body["chat"] == {"guarded": "allow"} and body["default"] == {}


# --- (e) the workspace picker: typed path (no folder chooser in a browser) -------------------

def test_workspace_picker_typed_path_saved_shown_and_refused(page, setup, tmp_path):
    folder = tmp_path / "my-project"
    folder.mkdir()
    chat = setup.chat(title="E2E workspace")
    open_chat(page, setup.server, chat, "E2E workspace")
    header_chip = page.locator(".chat-header .workspace-chip")
    expect(header_chip).to_be_hidden()

    page.get_by_role("button", name=re.compile("^Chat settings")).click()
    dialog = page.get_by_role("dialog", name="Chat settings")
    expect(dialog.get_by_role("region", name="Workspace")).to_contain_text("None")
    dialog.get_by_role("button", name="Choose folder…").click()
    # The browser has no folder chooser (POST /api/desktop/pick-folder is 404): type the path.
    field = dialog.get_by_role("textbox", name="Folder path")
    expect(field).to_be_focused()
    expect(dialog.get_by_role("button", name="Choose folder…")).to_be_hidden()

    field.fill("relative/path")
    dialog.get_by_role("button", name="Use this folder").click()
    refused = setup.api.patch(f"/api/chats/{chat}", {"workspace": "relative/path"})
    assert refused.status == 422
    sentence = refused.body["error"]["fields"]["workspace"]
    expect(dialog.get_by_role("alert").filter(has_text=sentence)).to_be_visible()
    expect(field).to_have_attribute("aria-invalid", "true")
    shot(page, "tools-10-workspace-refused")

    field.fill(str(folder))
    field.press("Enter")
    real = str(folder.resolve())
    expect(dialog.locator(".workspace-path")).to_have_text(real)
    expect(dialog.get_by_role("status").filter(has_text=real)).to_be_visible()
    expect(field).not_to_have_attribute("aria-invalid", "true")
    expect(dialog.get_by_role("alert").filter(has_text=sentence)).to_have_count(0)
    assert setup.api.get(f"/api/chats/{chat}").body["workspace"] == real
    # The header shows the folder's name, the whole path in its title.
    expect(header_chip).to_be_visible()
    expect(header_chip).to_have_text("my-project")
    expect(header_chip.locator(".i-folder")).to_have_count(1)
    expect(header_chip).to_have_attribute("title", real)
    shot(page, "tools-11-workspace-set")
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(header_chip).to_be_visible()

    # The header chip opens the sheet; Remove clears it. The page remembers there is no chooser.
    header_chip.click()
    dialog = page.get_by_role("dialog", name="Chat settings")
    expect(dialog.get_by_role("textbox", name="Folder path")).to_be_visible()
    dialog.get_by_role("button", name="Remove the workspace").click()
    expect(dialog.get_by_role("status").filter(has_text="Workspace removed.")).to_be_visible()
    expect(header_chip).to_be_hidden()
    assert setup.api.get(f"/api/chats/{chat}").body["workspace"] is None

    # Reloaded, the header reads it from GET /api/chats/{id}.
    setup.api.patch(f"/api/chats/{chat}", {"workspace": str(folder)})
    page.keyboard.press("Escape")
    page.reload()
    wait_chat_ready(page, "E2E workspace")
    expect(header_chip).to_have_attribute("title", real)


# --- (f) long tool output: the first lines, then Show all ------------------------------------

def test_long_tool_output_is_cut_with_show_all(page, setup):
    chat = setup.chat(title="E2E long output")
    text = "\n".join(f"line {i:03d}" for i in range(100))
    setup.fake.enqueue([S.tool_call(0, "call_1", "upper", json.dumps({"text": text}))], S.reply("Shouted."))
    open_chat(page, setup.server, chat, "E2E long output")
    send(page, "Shout a lot")
    expect(replies(page).last.locator(".msg-body")).to_have_text("Shouted.")
    row = page.locator("details.tool-call")
    expect(row).to_have_attribute("data-state", "ok")
    expect(row.locator(".tool-state")).to_have_text("ok")
    row.locator("summary").click()
    out = row.locator(".tool-out")
    expect(out).to_contain_text("LINE 039")
    expect(out).not_to_contain_text("LINE 040")
    more = row.get_by_role("button", name=re.compile("^Show all 100 lines"))
    expect(more).to_have_attribute("aria-expanded", "false")
    row.scroll_into_view_if_needed()
    shot(page, "tools-12-output-cut")
    more.click()
    expect(out).to_contain_text("LINE 099")
    less = row.get_by_role("button", name="Show less")
    expect(less).to_have_attribute("aria-expanded", "true")
    expect(less).to_be_focused()
    shot(page, "tools-13-output-all")
    less.click()
    expect(out).not_to_contain_text("LINE 040")

    # Arguments and output fold away on their own.
    args_fold = row.get_by_role("button", name="Arguments", exact=True)
    expect(args_fold).to_have_attribute("aria-expanded", "true")
    args_fold.click()
    expect(args_fold).to_have_attribute("aria-expanded", "false")
    expect(row.locator(".tool-section").first.locator("pre")).to_be_hidden()
    out_fold = row.get_by_role("button", name="Output", exact=True)
    out_fold.click()
    expect(out).to_be_hidden()
    out_fold.click()
    expect(out).to_be_visible()
    assert tool_rows(setup, chat) == [text.upper()]


# --- the sidebar mark for a chat in the background ---------------------------------------------

def test_a_chat_waiting_in_the_background_is_marked_in_the_list(page, setup):
    waiting = setup.chat(title="E2E waits for you")
    here = setup.chat(title="E2E open chat")
    setup.fake.enqueue([S.tool_call(0, "call_1", "guarded", '{"text": "x"}')], S.reply("ok"))
    open_chat(page, setup.server, here, "E2E open chat")
    sock = setup.socket(waiting)
    try:
        sock.send(type="send", request_id="bg-1", content="go")
        ask = sock.until("approval_required")
        item = page.locator(f".chat-item[data-id='{waiting}']")
        mark = item.get_by_role("img", name="needs your approval")
        expect(mark).to_be_visible()
        expect(mark).to_have_attribute("title", "Waiting for your approval")
        shot(page, "tools-14-sidebar-needs-you", dark=False)
        sock.send(type="approve", approval_id=ask["approval_id"], decision="allow")
        sock.until("turn_end")
        expect(mark).to_have_count(0)
        wait_until(lambda: not setup.api.get(f"/api/chats/{waiting}").body["awaiting_approval"], "the approval is answered")
    finally:
        sock.close()


# --- names and contrast of the new states (the checks of test_a11y.py) --------------------

def test_new_states_are_named_and_readable(page, ws_setup):
    from tests.e2e.test_a11y import A11y, assert_modal_dialog, assert_structure, low_contrast

    setup = ws_setup
    chat = setup.chat(title="E2E tools a11y")
    setup.fake.enqueue(shell_call("c1", "echo a; exit 3"), S.reply("Done."))
    open_chat(page, setup.server, chat, "E2E tools a11y")
    send(page, "Run it")
    card = page.get_by_role("group", name="Approval needed for shell")
    card.get_by_role("button", name=re.compile("^Edit")).click()
    expect(card.get_by_role("textbox", name="Arguments (JSON)")).to_be_focused()
    a11y = A11y(page)
    assert_structure(a11y)
    card.get_by_role("textbox", name="Arguments (JSON)").fill("nope")
    card.get_by_role("button", name="Allow once").click()
    expect(card.get_by_role("alert").filter(has_text="not valid JSON")).to_be_visible()
    tree = a11y.tree()
    area = a11y.node(tree, ".approval-json")
    assert tree.prop(area, "invalid") == "true"
    assert "not valid JSON" in str((area.get("description") or {}).get("value", ""))
    item = page.locator(f".chat-item[data-id='{chat}']")
    expect(item.get_by_role("img", name="needs your approval")).to_be_visible()

    def check(selectors):
        bad = []
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            bad += [f"{scheme}: {x}" for x in low_contrast(page, selectors)]
        page.emulate_media(color_scheme="light")
        assert bad == []

    check([".approval .field-error", ".approval-note", ".approval .tool-label", ".tool-call .tool-preview",
           ".composer-note", ".mark.attention"])
    card.get_by_role("button", name="Cancel edit: keep the model's arguments").click()
    card.get_by_role("button", name="Allow once").click()
    expect(replies(page).last.locator(".msg-body")).to_have_text("Done.")
    row = page.locator("details.tool-call")
    expect(row.locator(".exit-chip")).to_have_text("exit 3")
    row.locator("summary").click()
    assert_structure(a11y)
    check([".exit-chip.bad", ".tool-call .tool-time", "button.tool-fold"])

    page.get_by_role("button", name=re.compile("^Chat settings")).click()
    dialog = page.get_by_role("dialog", name="Chat settings")
    dialog.locator("summary", has_text="Tool approvals in this chat").click()
    expect(dialog.locator("select[data-tool='shell']")).to_be_visible()
    dialog.get_by_role("button", name="Choose folder…").click()
    expect(dialog.get_by_role("textbox", name="Folder path")).to_be_focused()
    assert_modal_dialog(a11y, "Chat settings")
    check([".policy-name", ".policy-desc", ".sheet-section h3", ".workspace-typed .hint"])
    page.keyboard.press("Escape")

    page.keyboard.press("Control+,")
    page.get_by_role("navigation", name="Settings sections").get_by_role("link", name="Tools & approvals").click()
    expect(page.locator(".approvals-policies select[data-tool='shell']")).to_be_visible()
    assert_structure(a11y, ("Chats", "Settings sections"))
    check([".approvals-policies .policy-name", ".approvals-policies .chip", ".rules-empty"])


# --- a running tool: spinner and the seconds so far, then how it ended ---------------------

def test_a_running_tool_shows_a_spinner_and_its_time(page, ws_setup):
    setup = ws_setup
    chat = setup.chat(title="E2E running tool")
    assert setup.api.put("/api/approvals/policy", {"chat_id": chat, "tool": "shell", "policy": "allow"}).status == 200
    # The command waits for the test's go-ahead (a file), so the row is seen while it runs.
    setup.fake.enqueue(shell_call("c1", "while [ ! -f go ]; do sleep 0.05; done; echo went"), S.reply("Finished."))
    open_chat(page, setup.server, chat, "E2E running tool")
    send(page, "Wait for it")
    row = page.locator("details.tool-call")
    expect(row).to_have_attribute("data-state", "run")
    expect(row.locator(".tool-state")).to_have_text("running…")
    expect(row.locator(".tool-spinner")).to_be_visible()
    expect(row.locator(".tool-elapsed")).to_have_text(re.compile(r"^[1-9]\d* s$"))
    expect(row.locator(".tool-time")).to_have_text("")
    shot(page, "tools-15-tool-running")
    (setup.workspace / "go").write_text("")
    expect(row.locator(".exit-chip")).to_have_text("exit 0")
    expect(row.locator(".tool-spinner")).to_be_hidden()
    expect(row.locator(".tool-elapsed")).to_be_hidden()
    expect(row.locator(".tool-time")).to_have_text(re.compile(r"^\d+(\.\d+)? (ms|s)$"))
    expect(replies(page).last.locator(".msg-body")).to_have_text("Finished.")
    row.locator("summary").click()
    expect(row.locator(".tool-out")).to_have_text("went")


# --- MCP servers (Settings) ------------------------------------------------------------------

MCP_SERVER = str(Path(__file__).resolve().parents[1] / "mcp_test_server.py")


def test_mcp_servers_screen_adds_lists_tools_edits_and_removes(page, setup):
    api = setup.api
    sign_in(page, setup.server, "/settings/mcp")
    section = page.locator(".mcp-settings")
    expect(page.get_by_role("heading", name="MCP servers", level=2)).to_be_visible()
    expect(section.locator(".mcp-empty")).to_be_visible()
    add = section.locator("details.mcp-add")
    add.locator("summary").click()
    form = add.get_by_role("form", name="Add an MCP server")
    try:
        # A field the server refuses: its sentence under that field.
        form.get_by_label("Id", exact=True).fill("t")
        form.get_by_label("Runs as").select_option("http")
        form.get_by_label("Address").fill("ftp://example.com/mcp")
        form.get_by_role("button", name="Add server").click()
        refused = api.post("/api/mcp/servers", {"id": "t", "transport": "http", "url": "ftp://example.com/mcp",
                                                "headers": {}, "secret_headers": [], "enabled": True,
                                                "call_timeout": 60})
        assert refused.status == 422
        url_field = form.get_by_label("Address")
        expect(form.locator("[data-field='url'] .field-error")).to_have_text(refused.body["error"]["fields"]["url"])
        expect(url_field).to_have_attribute("aria-invalid", "true")

        form.get_by_label("Runs as").select_option("stdio")
        form.get_by_label("Command").fill(sys.executable)
        form.get_by_label("Arguments").fill(MCP_SERVER)
        form.get_by_role("button", name="Add server").click()
        card = section.locator(".mcp-server[data-id='t']")
        expect(card).to_be_visible()
        expect(card.locator(".mcp-state")).to_have_text("stopped")  # listing never starts it
        expect(card.locator(".mcp-where")).to_have_text(f"{sys.executable} {MCP_SERVER}")
        assert [(s["id"], s["transport"], s["args"]) for s in api.get("/api/mcp/servers").body] == [("t", "stdio", [MCP_SERVER])]

        card.get_by_role("button", name="Show tools of t").click()
        tools = card.get_by_role("list", name="Tools of t")
        expect(tools.locator(".mcp-tool-name", has_text="echo")).to_be_visible()
        expect(card.locator(".mcp-state")).to_have_text("running")
        expect(section.locator(".mcp-status")).to_have_text(re.compile(r"^t offers \d+ tools?\.$"))
        shot(page, "tools-16-mcp-server")
        from tests.e2e.test_a11y import A11y, assert_structure
        add.locator("summary").click()  # open again: the form's fields are checked too
        expect(form.get_by_label("Command")).to_be_visible()
        assert_structure(A11y(page), navs=("Chats", "Settings sections"))
        add.locator("summary").click()

        card.get_by_role("button", name="Restart t").click()
        expect(section.locator(".mcp-status")).to_have_text(re.compile(r"^t: (running|starting…|stopped)\.$"))
        expect(tools).to_have_count(0)

        card.get_by_role("button", name="Edit t").click()
        edit = card.get_by_role("form", name="Edit MCP server t")
        edit.get_by_label("Time limit per call (seconds)").fill("30")
        edit.get_by_role("button", name="Save").click()
        expect(edit).to_have_count(0)
        expect(card).to_contain_text("Time limit per call: 30 s")
        assert api.get("/api/mcp/servers/t").body["call_timeout"] == 30

        card.get_by_label("Enabled").uncheck()
        expect(section.locator(".mcp-status")).to_contain_text("t is off")
        expect(card.get_by_label("Enabled")).not_to_be_checked()
        expect(card.locator(".mcp-state")).to_have_text("stopped")
        assert api.get("/api/mcp/servers/t").body["enabled"] is False

        card.get_by_role("button", name="Remove t").click()
        confirm = page.get_by_role("dialog", name="Remove t?")
        expect(confirm.get_by_role("button", name="Cancel")).to_be_focused()
        confirm.get_by_role("button", name="Remove server").click()
        expect(card).to_have_count(0)
        expect(section.locator(".mcp-empty")).to_be_visible()
        assert api.get("/api/mcp/servers").body == []
    finally:
        if api.get("/api/mcp/servers/t").status == 200:
            api.request("DELETE", "/api/mcp/servers/t")  # the server process goes with it
