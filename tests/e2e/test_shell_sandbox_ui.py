"""How the shell runs, in a real Chromium: the chat's workspace section and Settings say whether
commands are sandboxed (and plainly when they are not), and Settings switches their network."""
from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, shot

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium); "
           "CI installs it")


def open_workspace_section(page, setup, tmp_path, title):
    folder = tmp_path / "project"
    folder.mkdir()
    chat = setup.chat(title=title, workspace=str(folder))
    open_chat(page, setup.server, chat, title)
    page.get_by_role("button", name=re.compile("^Chat settings")).click()
    return page.get_by_role("dialog", name="Chat settings").get_by_role("region", name="Workspace")


def test_without_a_sandbox_the_workspace_and_settings_say_so(page, setup_with, tmp_path):
    setup = setup_with({"NUMI_BWRAP": str(tmp_path / "not-installed" / "bwrap")})
    reason = setup.api.get("/api/settings").body["shell_sandbox"]["reason"]
    region = open_workspace_section(page, setup, tmp_path, "E2E no sandbox")
    note = region.get_by_role("note")
    expect(note).to_contain_text("No sandbox for the shell.")
    expect(note).to_contain_text(reason)
    expect(note).to_contain_text("asks before every command")
    shot(page, "shell-01-no-sandbox")
    page.keyboard.press("Escape")
    page.keyboard.press("Control+,")
    expect(page.locator(".settings .shell-sandbox")).to_contain_text("No sandbox for the shell.")


def test_the_sandbox_and_its_network_switch(page, setup, tmp_path):
    if not setup.api.get("/api/settings").body["shell_sandbox"]["available"]:
        pytest.skip("no sandbox can start on this machine")
    region = open_workspace_section(page, setup, tmp_path, "E2E sandbox")
    expect(region.locator(".shell-sandbox")).to_contain_text("The shell runs in a sandbox")
    expect(region.locator(".shell-sandbox")).to_contain_text("has no network")
    page.keyboard.press("Escape")
    page.keyboard.press("Control+,")
    page.get_by_role("navigation", name="Settings sections").get_by_role("link", name="Tools & approvals").click()
    switch = page.get_by_role("checkbox", name="Shell commands may use the network")
    expect(switch).not_to_be_checked()
    switch.check()
    expect(page.get_by_role("status").filter(has_text="Shell commands may use the network.")).to_be_visible()
    assert setup.api.get("/api/settings").body["shell_network"] is True
    expect(page.locator(".settings .shell-sandbox")).to_contain_text("can change only the chat's workspace folder")
    shot(page, "shell-02-network-on")
