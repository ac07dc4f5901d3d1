"""The tools popover by the composer and the folder's tools switches (CONTRACT §15), in a real
Chromium against the real server: groups with their token cost, a tool and a whole MCP server
switched off (saved, and the meter's tools part drops), a tool denied by policy, a chat that
follows its folder and goes back to it, the keyboard, and the folder's sheet.

Tools come from tests/tool_plugin.py (`upper`, `guarded`) and tests/mcp_test_server.py, added
as the MCP server `t` and listed once (POST …/tools) so its tools are known without a chat
starting it. Every wait is on a DOM state or on the server's saved state: no sleeps.
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, shot, sign_in, wait_until

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")

MCP_SERVER = str(Path(__file__).resolve().parents[1] / "mcp_test_server.py")
# An MCP server's words are not trusted: `echo`'s description is markup, to be shown as text.
MARKUP = 'Echo <b>it</b> back. <img src="x" alt="injected">'


def format_tokens(n: int) -> str:
    """web/js/context-meter.js formatTokens, for the costs the popover shows."""
    def short(x: float, unit: str) -> str:
        return f"{float(f'{x:.1f}'):g}{unit}" if x < 100 else f"{round(x)}{unit}"
    if n < 1000:
        return str(n)
    return short(n / 1000, "k") if n < 999_500 else short(n / 1_000_000, "M")


def cost(n: int) -> str:
    return f"~{format_tokens(n)} token{'' if n == 1 else 's'}"


@pytest.fixture
def tools_setup(setup):
    """A model that calls tools, and the MCP test server `t` listed once (stopped again when done)."""
    api = setup.api
    assert api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
    r = api.post("/api/mcp/servers", {"id": "t", "transport": "stdio", "command": sys.executable, "args": [MCP_SERVER],
                                      "env": {"NUMI_MCP_TEST_ECHO_DESCRIPTION": MARKUP}})
    assert r.status == 201, r.body
    assert api.post("/api/mcp/servers/t/tools").status == 200
    yield setup
    api.request("DELETE", "/api/mcp/servers/t")


def popover(page):
    return page.get_by_role("dialog", name="Tools for this chat")


def group(page, group_id: str):
    return popover(page).locator(f".tool-group[data-group='{group_id}']")


def tools_part(setup, chat_id: str) -> int:
    return setup.api.post(f"/api/chats/{chat_id}/context", {"draft": "", "file_ids": []}).body["parts"]["tools"]


def meter_tools(page):
    return page.locator(".meter-split tr[data-part=tools] td")


def test_popover_groups_costs_switches_and_the_meter(page, tools_setup):
    setup, api = tools_setup, tools_setup.api
    chat = setup.chat(title="Trip")
    listing = api.get(f"/api/chats/{chat}/tools").body
    ids = [g["id"] for g in listing["groups"]]
    assert ids[0] == "builtin" and "mcp:t" in ids, ids
    open_chat(page, setup.server, chat, "Trip")
    button = page.get_by_role("button", name="Tools for this chat")
    expect(page.locator(".context-meter")).to_be_visible()
    page.locator(".meter-btn").click()
    expect(meter_tools(page)).to_be_visible()
    before_cell = meter_tools(page).inner_text()
    before = tools_part(setup, chat)
    page.locator(".meter-btn").click()

    button.click()
    expect(popover(page)).to_be_visible()
    expect(button).to_have_attribute("aria-expanded", "true")
    # Built-in first, then each server, each with what it costs in every request.
    expect(popover(page).locator(".tool-group-name")).to_have_text([g["label"] for g in listing["groups"]])
    for g in listing["groups"]:
        expect(group(page, g["id"]).locator(".tool-group-head .tool-cost")).to_have_text(cost(g["tokens"]))
    mcp = next(g for g in listing["groups"] if g["id"] == "mcp:t")
    echo = next(t for t in mcp["tools"] if t["name"] == "mcp__t__echo")
    row = group(page, "mcp:t").locator(".tool-row[data-name='mcp__t__echo']")
    expect(row.locator(".tool-name")).to_have_text("echo")
    assert echo["description"] == MARKUP
    expect(row.locator(".tool-about")).to_have_text(MARKUP)
    expect(popover(page).locator("b, img")).to_have_count(0)
    expect(row.locator(".tool-cost")).to_have_text(cost(echo["tokens"]))
    expect(popover(page).get_by_role("switch", name="Built-in")).to_be_focused()  # the first switch that can change
    shot(page, "tools-popover")
    # Every switch named, and its words readable in both themes.
    from tests.e2e.test_a11y import A11y, low_contrast, unnamed_controls
    assert unnamed_controls(A11y(page))[0] == []
    words = [".tools-btn", ".tool-group-name", ".tool-group-head .tool-cost", ".tool-row .tool-name", ".tool-row .tool-about"]
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        assert low_contrast(page, words) == [], scheme
    page.emulate_media(color_scheme="light")

    # One tool off: saved at once, and the meter's tools part drops.
    popover(page).get_by_role("switch", name="upper").uncheck()
    wait_until(lambda: api.get(f"/api/chats/{chat}").body.get("tools_off") == ["upper"], "upper is saved off")
    expect(popover(page).get_by_role("switch", name="upper")).not_to_be_checked()
    expect(popover(page).get_by_role("switch", name="upper")).to_be_focused()
    one_off = tools_part(setup, chat)
    assert one_off < before, (one_off, before)

    # A whole server off: its pattern, and every one of its switches shows off.
    popover(page).get_by_role("switch", name="t", exact=True).uncheck()
    wait_until(lambda: api.get(f"/api/chats/{chat}").body.get("tools_off") == ["upper", "mcp__t__*"],
               "server t is saved off")
    expect(group(page, "mcp:t")).to_have_attribute("data-on", "false")
    for sw in group(page, "mcp:t").locator(".tool-row input").all():
        expect(sw).not_to_be_checked()
    assert tools_part(setup, chat) < one_off
    # One of its tools on again: the server comes back with the others named off.
    popover(page).get_by_role("switch", name="echo").check()
    wait_until(lambda: "mcp__t__*" not in api.get(f"/api/chats/{chat}").body["tools_off"], "server t is back")
    saved = api.get(f"/api/chats/{chat}").body["tools_off"]
    assert "mcp__t__echo" not in saved and "mcp__t__add" in saved and "upper" in saved, saved
    expect(popover(page).get_by_role("switch", name="echo")).to_be_checked()
    expect(popover(page).get_by_role("switch", name="add")).not_to_be_checked()

    # Esc closes it and gives the focus back to the button.
    page.keyboard.press("Escape")
    expect(popover(page)).to_be_hidden()
    expect(button).to_be_focused()
    expect(button).to_have_attribute("aria-expanded", "false")
    page.locator(".meter-btn").click()
    expect(meter_tools(page)).not_to_have_text(before_cell)

    # Saved: a reload shows the same switches.
    page.reload()
    expect(page).to_have_title("Trip — Numi")
    page.get_by_role("button", name="Tools for this chat").click()
    expect(popover(page).get_by_role("switch", name="upper")).not_to_be_checked()
    expect(popover(page).get_by_role("switch", name="echo")).to_be_checked()
    # Leaving it (focus elsewhere) closes it too.
    page.locator(".composer-input").focus()
    expect(popover(page)).to_be_hidden()


def test_denied_tools_plan_mode_and_a_model_without_tools_are_said(page, tools_setup):
    setup, api = tools_setup, tools_setup.api
    assert api.put("/api/approvals/policy", {"tool": "guarded", "policy": "deny"}).status in (200, 204)
    chat = setup.chat(title="Careful")
    open_chat(page, setup.server, chat, "Careful")
    page.get_by_role("button", name="Tools for this chat").click()
    guarded = popover(page).get_by_role("switch", name="guarded")
    expect(guarded).not_to_be_checked()
    expect(guarded).to_be_disabled()
    expect(popover(page).locator(".tool-row[data-name='guarded'] .tool-about")).to_contain_text(
        "Denied in Settings → Tools & approvals")
    expect(popover(page).locator(".tools-on-top")).to_be_hidden()
    page.keyboard.press("Escape")

    page.get_by_label("Mode", exact=True).select_option("plan")
    wait_until(lambda: api.get(f"/api/chats/{chat}").body["mode"] == "plan", "the chat is in plan mode")
    page.get_by_role("button", name="Tools for this chat").click()
    expect(popover(page).locator(".tools-on-top")).to_have_text("Plan mode offers only the tools that change nothing.")
    page.keyboard.press("Escape")

    assert api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": False}}).status == 200
    page.reload()
    expect(page).to_have_title("Careful — Numi")
    page.get_by_role("button", name="Tools for this chat").click()
    expect(popover(page).locator(".tools-on-top")).to_have_text(re.compile(r"has tools off, so none of these reach it\.$"))


def test_a_chat_follows_its_folder_and_goes_back_to_it(page, tools_setup):
    setup, api = tools_setup, tools_setup.api
    folder = api.post("/api/folders", {"name": "Work", "tools_off": ["mcp__t__*"]}).body
    assert folder["tools_off"] == ["mcp__t__*"], folder
    chat = setup.chat(title="Filed", folder_id=folder["id"])
    open_chat(page, setup.server, chat, "Filed")
    page.get_by_role("button", name="Tools for this chat").click()
    expect(popover(page).locator(".tools-source")).to_have_text("Following folder “Work”.")
    expect(popover(page).get_by_role("button", name="Reset to folder")).to_be_hidden()
    expect(group(page, "mcp:t")).to_have_attribute("data-on", "false")
    expect(group(page, "mcp:t").locator(".tool-row[data-name='mcp__t__echo'] .tool-about")).to_contain_text(
        "Off in folder “Work”")

    # A switch here gives the chat its own list, starting from the folder's.
    popover(page).get_by_role("switch", name="upper").uncheck()
    wait_until(lambda: api.get(f"/api/chats/{chat}").body.get("tools_off") == ["mcp__t__*", "upper"],
               "the chat has its own list")
    expect(popover(page).locator(".tools-source")).to_have_text(re.compile(r"own choice"))
    reset = popover(page).get_by_role("button", name="Reset to folder")
    expect(reset).to_be_visible()
    reset.click()
    wait_until(lambda: api.get(f"/api/chats/{chat}").body.get("tools_off") is None, "the chat follows its folder again")
    expect(popover(page).locator(".tools-source")).to_have_text("Following folder “Work”.")
    expect(popover(page).get_by_role("switch", name="upper")).to_be_checked()
    expect(popover(page)).to_be_visible()


def test_the_folders_sheet_switches_its_tools(page, tools_setup):
    setup, api = tools_setup, tools_setup.api
    folder = api.post("/api/folders", {"name": "Home"}).body
    sign_in(page, setup.server)
    page.get_by_role("button", name="Options for folder Home").click()
    page.get_by_role("menuitem", name="Rename and defaults…").click()
    dialog = page.get_by_role("dialog", name="Folder “Home”")
    tools = dialog.get_by_role("group", name="Tools its chats offer")
    expect(tools.get_by_role("switch", name="t", exact=True)).to_be_checked()
    listing = api.get(f"/api/folders/{folder['id']}/tools").body
    mcp = next(g for g in listing["groups"] if g["id"] == "mcp:t")
    expect(tools.locator(".tool-group[data-group='mcp:t'] .tool-group-head .tool-cost")).to_have_text(cost(mcp["tokens"]))
    tools.get_by_role("switch", name="t", exact=True).uncheck()
    tools.get_by_role("switch", name="upper").uncheck()
    assert api.get(f"/api/folders/{folder['id']}").body.get("tools_off") is None  # saved with the sheet, not before
    dialog.get_by_role("button", name="Save").click()
    expect(dialog).to_have_count(0)
    wait_until(lambda: api.get(f"/api/folders/{folder['id']}").body.get("tools_off") == ["mcp__t__*", "upper"],
               "the folder's list is saved")
