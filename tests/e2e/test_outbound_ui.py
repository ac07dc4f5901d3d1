"""The approval card of a call that would send text out after a private read (docs/PROTOCOL.md
"Approvals"), in a real Chromium against the real server, the fake provider and a fake SearXNG:
it says why, shows exactly what would be sent as text, offers no "always", and denying sends nothing."""
from __future__ import annotations

import json
import os
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, replies, send, shot
from tests.fakeprovider import script as S
from tests.fakesearch import FakeSearch
from tests.test_protocol_modes import tooled  # noqa: F401 (a fixture)

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium); "
           "CI installs it")

SECRET = "API_KEY=sk-live-" + "7f3a9c41d0"
QUERY = f'<img src=x onerror="window.__pwned=1"> {SECRET}'


def test_the_card_shows_what_would_be_sent_and_offers_allow_once_only(page, tooled):
    setup = tooled
    (setup.workspace / "secret.env").write_text(SECRET + "\n")
    searxng = FakeSearch("searxng")
    try:
        r = setup.api.patch("/api/settings", {"web_search": {"backend": "searxng", "url": searxng.url}})
        assert r.status == 200, r
        chat = setup.chat(title="E2E outbound", workspace=str(setup.workspace))
        setup.fake.enqueue([S.tool_call(0, "c1", "read_file", json.dumps({"path": "secret.env"}))],
                           [S.tool_call(0, "c2", "web_search", json.dumps({"query": QUERY}))],
                           S.reply("Not sent."))
        open_chat(page, setup.server, chat, "E2E outbound")
        send(page, "Set it up")

        card = page.get_by_role("group", name="Approval needed for web_search")
        expect(card).to_be_visible()
        note = card.locator(".approval-outbound")
        expect(note).to_contain_text("This would send text out.")
        expect(note).to_contain_text("This conversation has read your workspace files")
        expect(note.locator(".approval-sends")).to_have_text(QUERY)  # the markup is shown, never made
        assert card.locator("img").count() == 0 and page.evaluate("window.__pwned") is None
        always = card.get_by_role("button", name="Always allow")
        expect(always).to_be_disabled()
        expect(always).to_have_attribute("title", re.compile("read private content"))
        shot(page, "outbound-01-card")

        card.get_by_role("button", name="Deny…").click()
        card.get_by_role("button", name="Deny", exact=True).click()
        expect(card).to_be_hidden()
        expect(replies(page).last.locator(".msg-body")).to_have_text("Not sent.")
        assert searxng.seen == []
    finally:
        searxng.close()
