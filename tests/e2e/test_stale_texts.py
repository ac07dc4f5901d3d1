"""Small texts that pointed nowhere, in a real Chromium: each names a place that exists."""
from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, send, sign_in
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")


def test_the_workspace_sheet_names_the_settings_section_of_the_network_switch(page, setup, tmp_path):
    if not setup.api.get("/api/settings").body["shell_sandbox"]["available"]:
        pytest.skip("no sandbox can start on this machine: the sheet says so instead")
    folder = tmp_path / "project"
    folder.mkdir()
    chat = setup.chat(title="E2E sheet texts", workspace=str(folder))
    open_chat(page, setup.server, chat, "E2E sheet texts")
    page.get_by_role("button", name=re.compile("^Chat settings")).click()
    line = page.get_by_role("dialog", name="Chat settings").locator(".shell-sandbox")
    expect(line).to_contain_text("has no network")
    named = re.search(r"Settings → ([^)]+)\)", line.text_content()).group(1)
    link = line.get_by_role("link", name=f"Settings → {named}")
    link.click()
    # The section it names is one of Settings' own, and the link opens it with the switch in view.
    nav = page.get_by_role("navigation", name="Settings sections")
    expect(nav.get_by_role("link", name=named, exact=True)).to_be_visible()
    expect(page.get_by_role("checkbox", name="Shell commands may use the network")).to_be_in_viewport()


def test_a_stopped_reply_with_no_token_count_adds_no_zero_token_total(page, setup):
    assert setup.api.patch("/api/settings", {"default_model_id": setup.model["id"]}).status == 200
    sign_in(page, setup.server)
    page.get_by_role("button", name="Temporary chat").click()
    setup.fake.enqueue([S.text("Partly written"), S.hang(), S.text(" and never finished.")])
    send(page, "A question stopped halfway")
    setup.fake.wait_hanging()
    expect(page.locator("article.msg.assistant .msg-body")).to_contain_text("Partly written")
    reads = []
    page.on("response", lambda r: reads.append(r) if r.url.endswith("/usage") else None)
    page.get_by_role("button", name="Stop the reply (Esc)").click()
    # The header's total is read again once the stopped turn has ended: wait for the read that
    # counts the stopped reply (its usage all zeros), then the header must not show it.
    for _ in range(100):  # Playwright delivers responses only while it is called: wait in its own calls
        if any(r.json()["replies"] == 1 for r in reads):
            break
        page.wait_for_timeout(100)
    usage = next(r.json() for r in reads if r.json()["replies"] == 1)
    assert usage["input_tokens"] + usage["output_tokens"] == 0, usage
    # The page applies that read once its body is in, as Playwright has it here; a frame later it has.
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => setTimeout(r)))")
    expect(page.locator(".temp-banner")).to_be_visible()
    expect(page.locator(".chat-usage")).to_be_hidden()
    assert "0 tokens" not in page.locator(".chat-header").inner_text()


def test_first_run_note_and_field_errors_go_once_they_no_longer_hold(page, start_server, fake):
    server = start_server({"NUMI_PROBE_PORTS": ""})
    sign_in(page, server)
    expect(page.locator(".local-list")).to_contain_text("None found")
    page.get_by_role("button", name="New chat (Ctrl+N)").click()
    note = page.locator(".firstrun-note")
    expect(note).to_contain_text("A chat needs a model first")
    form = page.locator("form.provider-form")
    form.get_by_label("Kind").select_option("openai_compatible")
    address = form.get_by_label("API address")
    address.fill("ftp://not-an-api")
    form.get_by_role("button", name="Connect").click()
    error = form.locator(".field-error").filter(has_text=re.compile(".+"))
    expect(error).to_have_count(1)
    expect(address).to_have_attribute("aria-invalid", "true")
    # Corrected: the complaint about the old value goes as the field changes, before any new submit.
    address.fill(fake.base_url)
    expect(error).to_have_count(0)
    expect(address).not_to_have_attribute("aria-invalid", "true")
    expect(form.locator(".form-status")).to_have_text("")
    form.get_by_role("button", name="Connect").click()
    expect(page.get_by_role("heading", name=re.compile("is connected$"))).to_be_visible()
    # Connected: the note asking for a model no longer stands beside it.
    expect(note).to_be_hidden()


LINES = """(el) => {
  const cs = getComputedStyle(el);
  const inner = el.scrollHeight - parseFloat(cs.paddingTop) - parseFloat(cs.paddingBottom);
  return [Math.round(inner / parseFloat(cs.lineHeight)), el.placeholder, el.clientWidth];
}"""
FRAMES = "() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"


def test_the_empty_composers_hint_is_one_line_at_any_width(page, setup):
    chat = setup.chat(title="E2E hint")
    page.set_viewport_size({"width": 1100, "height": 760})
    open_chat(page, setup.server, chat, "E2E hint")
    box = page.get_by_role("textbox", name="Message")
    page.evaluate(FRAMES)
    lines, hint, _ = box.evaluate(LINES)
    assert (lines, hint) == (1, "Message Numi…  (Enter to send, Shift+Enter for a new line)")
    seen = []
    for width in range(1000, 399, -20):  # down to the narrow window of the issue (420 px)
        page.set_viewport_size({"width": width, "height": 760})
        page.evaluate(FRAMES)  # the resize observer has run, and the box was fitted again
        lines, hint, box_width = box.evaluate(LINES)
        seen.append((width, box_width, lines, hint))
        assert lines == 1, seen
    assert seen[-1][3] == "Message Numi…", seen
    assert box.get_attribute("aria-keyshortcuts").startswith("Enter")  # the keys are still said
