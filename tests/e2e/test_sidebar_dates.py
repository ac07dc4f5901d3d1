"""The chat list by date and by drag-and-drop, and the chat header's marks, in a real Chromium.

Chats with chosen times come from a Numi JSON export (POST /api/import keeps each chat's
`updated_at`). The browser runs in Tokyo time, so the day boundaries tested are the
page's local ones, not the server's UTC. Waits are on DOM states, never sleeps.
"""
from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, send, sign_in, wait_until
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")

TOKYO = ZoneInfo("Asia/Tokyo")


@pytest.fixture
def tokyo_page(browser):
    ctx = browser.new_context(viewport={"width": 1100, "height": 760}, color_scheme="light", timezone_id="Asia/Tokyo")
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    ctx.close()
    assert not errors, f"uncaught errors in the page: {errors}"


def iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def import_chats(api, chats: list[tuple[str, datetime]]) -> dict[str, str]:
    """Import chats titled and last active as given; their ids by title."""
    doc = {"format": "numi-export", "version": 1, "chats": [
        {"title": title, "created_at": iso(at), "updated_at": iso(at), "messages": []} for title, at in chats]}
    r = api.post("/api/import", doc)
    assert r.status == 201, r
    listed = {c["id"]: c for c in api.get("/api/chats?limit=200").body["items"]}
    ids = {listed[i]["title"]: i for i in r.body["chat_ids"]}
    # The export's times are kept: they decide the groups below.
    for title, at in chats:
        assert listed[ids[title]]["updated_at"] == iso(at), title
    return ids


def groups(page) -> list[tuple[str, list[str]]]:
    """The date headings under "Chats" and the chat titles under each, as drawn."""
    return page.evaluate("""() => {
      const out = [];
      for (const el of document.querySelectorAll('.chat-list .loose-chats > .date-label, .chat-list .loose-chats > .chat-item')) {
        if (el.classList.contains('date-label')) out.push([el.textContent, []]);
        else out[out.length - 1][1].push(el.querySelector('.chat-name').textContent);
      }
      return out;
    }""")


def test_chats_are_grouped_by_local_day_and_month_and_pages_join_their_group(tokyo_page, setup):
    page, api = tokyo_page, setup.api
    now = datetime.now(TOKYO)
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    old = (midnight - timedelta(days=75)).replace(hour=12)
    month = old.strftime("%B %Y")
    chats = [("Just now", now - timedelta(seconds=5)),
             # 00:01 Tokyo is the day before in UTC: only the local zone puts it under Today.
             ("Early today", min(midnight + timedelta(minutes=1), now - timedelta(seconds=4))),
             ("Late yesterday", midnight - timedelta(minutes=1)),
             ("Three days ago", midnight - timedelta(days=3) + timedelta(hours=9))]
    # 52 chats in one old month: the first page (50 chats) ends inside it.
    chats += [(f"Old {i:02d}", old - timedelta(minutes=i)) for i in range(52)]
    import_chats(api, chats)
    sign_in(page, setup.server)

    page.locator(".chat-list .chat-item").nth(49).wait_for()
    drawn = groups(page)
    assert drawn[:3] == [["Today", ["Just now", "Early today"]], ["Yesterday", ["Late yesterday"]],
                         ["Previous 7 days", ["Three days ago"]]]
    assert drawn[3][0] == month and len(drawn[3][1]) == 46 and len(drawn) == 4, drawn

    page.get_by_role("button", name="Show older chats").click()
    expect(page.locator(".chat-list .loose-chats .chat-item")).to_have_count(56)
    expect(page.get_by_role("button", name="Show older chats")).to_be_hidden()
    drawn = groups(page)
    # The older page joined the month's group: one heading each, nothing repeated.
    assert [label for label, _ in drawn] == ["Today", "Yesterday", "Previous 7 days", month]
    assert drawn[3][1] == [f"Old {i:02d}" for i in range(52)]


def test_a_chat_dragged_onto_a_folder_is_filed_and_dragged_back_is_unfiled(page, setup):
    api = setup.api
    folder = api.post("/api/folders", {"name": "Research"}).body
    chat_id = setup.chat(title="Field notes")
    sign_in(page, setup.server)
    row = page.locator(f'.chat-list .chat-item[data-id="{chat_id}"]')
    loose = page.locator(f'.chat-list .loose-chats .chat-item[data-id="{chat_id}"]')
    in_folder = page.locator(f'.chat-list .folder[data-folder-id="{folder["id"]}"] .chat-item[data-id="{chat_id}"]')
    expect(loose).to_have_count(1)

    row.drag_to(page.locator(f'.chat-list .folder[data-folder-id="{folder["id"]}"] .folder-head'))
    expect(in_folder).to_have_count(1)
    expect(page.locator(".toast").filter(has_text="Moved to “Research”.")).to_be_visible()
    wait_until(lambda: api.get(f"/api/chats/{chat_id}").body["folder_id"] == folder["id"], "the chat filed")

    # Back onto the chats outside folders ("Chats" stays shown as the place to drop).
    expect(page.locator(".chat-list .loose-chats")).to_contain_text("Drop a chat here to take it out of its folder.")
    in_folder.drag_to(page.locator(".chat-list .loose-chats > .group-label"))
    expect(loose).to_have_count(1)
    expect(in_folder).to_have_count(0)
    wait_until(lambda: api.get(f"/api/chats/{chat_id}").body["folder_id"] is None, "the chat unfiled")


def test_the_header_marks_custom_settings_and_totals_tokens_then_cost(page, setup):
    api = setup.api
    plain = setup.chat(title="Plain")
    custom = setup.chat(title="Tuned", system_prompt="Answer in haiku.", params={"temperature": 0.2})
    open_chat(page, setup.server, custom, "Tuned")
    mark = page.locator(".chat-header .settings-mark")
    expect(mark).to_be_visible()
    expect(mark).to_have_attribute("title", "System prompt · temperature 0.2")
    usage = page.locator(".chat-header .chat-usage")
    expect(usage).to_be_hidden()  # nothing used yet

    # No price for the model: tokens only.
    setup.fake.enqueue(S.reply("Autumn moonlight", prompt_tokens=1200, completion_tokens=34))
    send(page, "Write one.")
    expect(usage).to_have_text("1,234 tokens in this chat")
    # With prices, the next reply's cost is added and shown (the first one had none).
    assert api.patch(f"/api/models/{setup.model['id']}", {"price": {"input": 1, "output": 2}}).status == 200
    setup.fake.enqueue(S.reply("A frog jumps", prompt_tokens=1000, completion_tokens=500))
    send(page, "Another.")
    expect(usage).to_have_text("2,734 tokens in this chat · $0.0020")
    expect(usage).to_have_attribute("title", "This chat so far, every reply added up: 2,200 tokens in (each request sends the conversation again), 534 out over 2 replies, $0.0020.")

    # A chat on the defaults has no mark; giving it a system prompt shows it.
    page.goto(page.url.rsplit("#", 1)[0] + f"#/c/{plain}")
    expect(page).to_have_title("Plain — Numi")
    expect(mark).to_be_hidden()
    page.get_by_role("button", name="Chat settings: system prompt, temperature, reasoning, workspace, tool approvals").click()
    dialog = page.get_by_role("dialog", name="Chat settings")
    dialog.get_by_label("System prompt").fill("Be brief.")
    dialog.get_by_label("Reasoning effort").select_option("high")
    dialog.get_by_role("button", name="Save").click()
    expect(mark).to_have_attribute("title", "System prompt · reasoning high")
