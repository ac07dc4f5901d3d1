"""Modes and plans in a real Chromium against the real server and the fake provider: the
composer's mode switch (by keyboard, saved, following a change made elsewhere), the folder
dialog's mode, and a plan card — proposed in plan mode, executed, its steps following the
model's updates live, and shown again after a reload.

Every wait is on a DOM state (Playwright's auto-waiting `expect`), on the fake provider's
own events (a response parked in a `hang` step) or on the server's saved state: no sleeps.
"""
from __future__ import annotations

import json
import os

import pytest
from playwright.sync_api import expect

from backend.features.plans import EXECUTE_TEXT
from tests.e2e.ui import CHROMIUM, open_chat, send, shot, sign_in, wait_chat_ready, wait_until
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium); "
           "CI installs it")

STEPS = ["Read the notes", "Write the summary"]


def plan_call(call_id: str, statuses: list[str], text: str = "") -> list[dict]:
    steps = [{"text": t, "status": s} for t, s in zip(STEPS, statuses)]
    return ([S.text(text)] if text else []) + [S.tool_call(0, call_id, "update_plan", json.dumps({"steps": steps}))]


def chat_mode(setup, chat) -> str:
    return setup.api.get(f"/api/chats/{chat}").body["mode"]


@pytest.fixture
def tooled(setup):
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
    return setup


def test_the_mode_switch_is_keyboard_reachable_saved_and_follows_changes(page, tooled):
    setup = tooled
    chat = setup.chat(title="E2E modes")
    open_chat(page, setup.server, chat, "E2E modes")
    switch = page.get_by_role("combobox", name="Mode")
    expect(switch).to_have_value("ask")
    expect(switch).to_have_attribute("title", "Ask mode: Each tool runs or asks as its approval settings say.")
    # From the message box, Tab reaches the model picker and then the switch.
    page.locator(".composer-input").focus()
    for _ in range(10):  # past the box's own buttons (dictation, research, image, send) and the picker
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('mode-select')"):
            break
    expect(switch).to_be_focused()
    switch.select_option("plan")
    wait_until(lambda: chat_mode(setup, chat) == "plan", "the chat is in plan mode")
    expect(switch).to_have_attribute("data-mode", "plan")
    shot(page, "modes-01-plan-selected")
    # Changed elsewhere (another window, the API): the open chat follows.
    assert setup.api.patch(f"/api/chats/{chat}", {"mode": "auto"}).status == 200
    expect(switch).to_have_value("auto")
    page.reload()
    wait_chat_ready(page, "E2E modes")
    expect(page.get_by_role("combobox", name="Mode")).to_have_value("auto")


def test_a_folder_sets_the_mode_its_new_chats_start_in(page, tooled):
    setup = tooled
    sign_in(page, setup.server)
    page.get_by_role("button", name="New folder").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Name").fill("Careful work")
    dialog.get_by_label("Model", exact=True).select_option(setup.model["id"])
    dialog.get_by_label("Mode", exact=True).select_option("plan")
    dialog.get_by_role("button", name="Create folder").click()
    wait_until(lambda: [f["mode"] for f in setup.api.get("/api/folders").body["items"]] == ["plan"],
               "the folder is saved with its mode")
    # A new chat in it starts in Plan: shown before anything is sent, and made so.
    page.get_by_role("button", name="Options for folder Careful work").click()
    page.get_by_role("menuitem", name="New chat in this folder").click()
    expect(page.get_by_role("combobox", name="Mode")).to_have_value("plan")
    setup.fake.enqueue(S.reply("Planned."))
    send(page, "What should we do?")
    expect(page.locator("article.msg.assistant .msg-body").last).to_have_text("Planned.")
    made = setup.api.get("/api/chats").body["items"]
    assert [c["mode"] for c in made] == ["plan"]


def test_a_plan_card_executes_follows_the_model_and_comes_back_after_a_reload(page, tooled):
    setup = tooled
    chat = setup.chat(title="E2E plan", mode="plan")
    setup.fake.enqueue(plan_call("p1", ["pending", "pending"], "Here is my plan."), S.reply("Shall I go ahead?"))
    open_chat(page, setup.server, chat, "E2E plan")
    send(page, "Plan the summary")

    card = page.get_by_role("region", name="Plan: 0 of 2 steps done")
    expect(card).to_be_visible()
    expect(card.get_by_role("listitem")).to_have_text([f"{STEPS[0]} (to do)", f"{STEPS[1]} (to do)"])
    # Each status is drawn as an icon, hidden from assistive technology (the text says it).
    expect(card.locator(".plan-mark.i-circle[aria-hidden='true']")).to_have_count(2)
    execute = card.get_by_role("button", name="Execute plan")
    expect(execute).to_be_visible()
    shot(page, "modes-02-plan-card")

    # Executing: the first update lands, then the model's next request waits (hang).
    setup.fake.enqueue(plan_call("x1", ["done", "active"], "Working."),
                       [S.hang()] + plan_call("x2", ["done", "done"]), S.reply("All done."))
    execute.focus()
    page.keyboard.press("Enter")
    setup.fake.wait_hanging()
    expect(page.get_by_role("combobox", name="Mode")).to_have_value("edit")
    expect(page.locator("article.msg.user .msg-body").last).to_have_text(EXECUTE_TEXT)
    live = page.get_by_role("region", name="Plan: 1 of 2 steps done")
    expect(live).to_be_visible()
    expect(live.locator(".plan-step[data-status='active']")).to_have_text(f"{STEPS[1]} (in progress)")
    expect(live.locator(".plan-step[data-status='done'] .plan-mark.i-check")).to_have_count(1)
    # A reply runs: no card offers to execute.
    expect(page.get_by_role("button", name="Execute plan")).to_have_count(0)
    shot(page, "modes-03-plan-running")
    setup.fake.release()

    expect(page.get_by_role("region", name="Plan: All 2 steps done")).to_be_visible()
    expect(page.locator("article.msg.assistant .msg-body").last).to_have_text("All done.")
    expect(page.get_by_role("button", name="Execute plan")).to_have_count(0)
    assert chat_mode(setup, chat) == "edit"

    # After a reload each message shows its plan as its update left it.
    page.reload()
    wait_chat_ready(page, "E2E plan")
    cards = page.locator("section.plan-card")
    expect(cards).to_have_count(3)
    expect(cards.nth(0)).to_have_attribute("aria-label", "Plan: 0 of 2 steps done")
    expect(cards.nth(1)).to_have_attribute("aria-label", "Plan: 1 of 2 steps done")
    expect(cards.nth(2)).to_have_attribute("aria-label", "Plan: All 2 steps done")
    expect(page.get_by_role("button", name="Execute plan")).to_have_count(0)
    shot(page, "modes-04-plan-done")
