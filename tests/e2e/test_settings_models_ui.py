"""Settings → Models (issue 32 items 4 and 5), in a real Chromium against the real server:
every model is listed in the page's own flow (the picker's scrolling box is the picker's
alone), and a model's context window is set there, beside what discovery found."""
from __future__ import annotations

import json
import os
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, sign_in

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")


def models_panel(page):
    return page.get_by_role("region", name="Models", exact=True)


def add_local_models(setup, n: int) -> list[dict]:
    made = []
    for i in range(n):
        r = setup.api.post("/api/models", {"provider_id": setup.provider["id"], "api_model": f"local-{i:02d}",
                                           "label": f"Local {i:02d}"})
        assert r.status == 201, r
        made.append(r.body)
    return made


def own_scroll_box(locator) -> dict:
    return locator.evaluate("""el => { const s = getComputedStyle(el);
        return {overflowY: s.overflowY, maxHeight: s.maxHeight, clipped: el.scrollHeight > el.clientHeight + 1}; }""")


def test_settings_lists_all_twenty_models_in_the_page_and_the_picker_stays_capped(page, setup):
    add_local_models(setup, 19)  # with the setup's own: 20
    sign_in(page, setup.server, "/settings/models")
    panel = models_panel(page)
    cards = panel.locator(".card.model")
    expect(cards).to_have_count(20)
    box = own_scroll_box(panel.locator(".model-list"))
    assert box["maxHeight"] == "none" and box["overflowY"] == "visible" and not box["clipped"], box
    # Each one can be reached by scrolling the page itself, the last one included.
    last = cards.last
    last.scroll_into_view_if_needed()
    expect(last).to_be_in_viewport()
    expect(last.get_by_text("Local 18", exact=True)).to_be_visible()

    # The composer's picker keeps its capped, scrolling list.
    chat = setup.chat(title="Picking")
    open_chat(page, setup.server, chat, "Picking")
    page.locator(".composer .model-picker-btn").click()
    listbox = page.locator(".composer .model-popup .model-list")
    expect(listbox.get_by_role("option")).to_have_count(20)
    box = own_scroll_box(listbox)
    assert box["maxHeight"] == "256px" and box["overflowY"] == "auto" and box["clipped"], box


def test_a_models_window_is_set_in_settings_and_the_meter_uses_it(page, setup):
    assert setup.model["context_window"] is None  # a server that says nothing about it
    sign_in(page, setup.server, "/settings/models")
    card = models_panel(page).locator(".card.model").first
    field = card.get_by_label("Context window:")
    expect(field).to_have_value("")
    expect(card.locator(".model-window")).to_contain_text("Not known: assumed 128 000 tokens")
    # A value out of range is said under the field and not sent.
    field.fill("0")
    field.press("Tab")
    expect(card.get_by_role("alert")).to_have_text(re.compile("from 1 to 100 000 000"))
    with page.expect_response(lambda r: r.url.endswith(f"/api/models/{setup.model['id']}")
                              and r.request.method == "PATCH") as patched:
        field.fill("8000")
        field.press("Tab")
    assert patched.value.status == 200 and json.loads(patched.value.request.post_data) == {"context_window": 8000}
    card = models_panel(page).locator(".card.model").first
    expect(card.get_by_label("Context window:")).to_have_value("8000")
    expect(card.locator(".model-window")).to_contain_text("Set by you; discovery found none")
    expect(card.locator(".model-window .field-error")).to_be_empty()

    chat = setup.chat(title="Windowed")
    open_chat(page, setup.server, chat, "Windowed")
    expect(page.locator(".context-meter .meter-label")).to_have_text(re.compile(r" / 8k$"))
    page.locator(".context-meter").hover()
    expect(page.locator(".meter-notes")).not_to_contain_text("assumed")
