"""File changes, live progress and the loop guard in a real Chromium against the real server and
the fake provider: the approval card shows a write's diff before anything changes, the tool row
shows it after (and after a reload); a new file is all added; binary and huge files say so; a
long diff folds; a running command shows its last line; a loop-guarded reply offers Continue.

Every wait is on a DOM state (Playwright's auto-waiting `expect`) or on the server's saved state.
"""
from __future__ import annotations

import json
import os
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, replies, send, shot, wait_until
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium); "
           "CI installs it")


@pytest.fixture
def ws(setup, tmp_path):
    """The setup with a tool-calling model and a chat on a workspace folder."""
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
    setup.workspace = tmp_path / "ws"
    setup.workspace.mkdir()
    return setup


def chat_on_workspace(setup, title: str) -> str:
    chat = setup.chat(title=title)
    assert setup.api.patch(f"/api/chats/{chat}", {"workspace": str(setup.workspace)}).status == 200
    return chat


def call(call_id: str, name: str, **args) -> list[dict]:
    return [S.tool_call(0, call_id, name, json.dumps(args))]


def test_a_write_shows_its_diff_on_the_card_before_it_runs_and_on_its_row_after(page, ws):
    setup = ws
    chat = chat_on_workspace(setup, "E2E diff")
    target = setup.workspace / "notes.txt"
    setup.fake.enqueue(call("w1", "write_file", path="notes.txt", content="one\ntwo\n"), S.reply("Written."))
    open_chat(page, setup.server, chat, "E2E diff")
    send(page, "Write the notes")

    card = page.get_by_role("group", name="Approval needed for write_file")
    diff = card.get_by_role("group", name="Changes to notes.txt: 2 lines added, 0 removed")
    expect(diff).to_be_visible()
    expect(diff.locator(".diff-new")).to_have_text("new file")
    expect(diff.locator(".diff-line.add .diff-text")).to_have_text(["one", "two"])
    expect(diff.locator(".diff-line.del")).to_have_count(0)
    assert not target.exists()  # what will change, shown before it changes
    shot(page, "diffs-01-approval-new-file")

    card.get_by_role("button", name="Allow once").click()
    expect(replies(page).last.locator(".msg-body")).to_have_text("Written.")
    row = page.locator("details.tool-call")
    expect(row).to_have_attribute("data-state", "ok")
    expect(row.locator(".tool-diffstat")).to_have_text("+2 \u22120")
    row.locator("summary").click()
    expect(row.get_by_role("group", name=re.compile("^Changes to notes.txt")).locator(".diff-line.add")).to_have_count(2)
    assert target.read_text() == "one\ntwo\n"

    # After a reload the row rebuilds from the saved messages, its change with it.
    page.reload()
    row = page.locator("details.tool-call")
    expect(row.locator(".tool-diffstat")).to_have_text("+2 \u22120")
    row.locator("summary").click()
    expect(row.locator(".diff-line.add .diff-text")).to_have_text(["one", "two"])


def test_an_edit_shows_removed_and_added_lines_in_both_themes(page, ws):
    setup = ws
    chat = chat_on_workspace(setup, "E2E edit diff")
    (setup.workspace / "notes.txt").write_text("one\ntwo\nthree\n")
    setup.fake.enqueue(call("e1", "edit_file", path="notes.txt", old_text="two", new_text="TWO"), S.reply("Edited."))
    open_chat(page, setup.server, chat, "E2E edit diff")
    send(page, "Shout the second line")
    card = page.get_by_role("group", name="Approval needed for edit_file")
    lines = card.locator(".diff-line")
    expect(lines).to_have_count(5)  # the hunk header, one, -two, +TWO, three
    expect(card.locator(".diff-line.del .diff-text")).to_have_text("two")
    expect(card.locator(".diff-line.add .diff-text")).to_have_text("TWO")
    expect(card.locator(".diff-line.del .diff-mark")).to_have_text("\u2212")
    # Removed and added lines differ by more than their mark: each has its own colours, readable ones.
    for theme in ("light", "dark"):
        page.emulate_media(color_scheme=theme)
        colours = page.evaluate("""() => ['del', 'add', 'ctx'].map((k) => {
            const s = getComputedStyle(document.querySelector('.approval .diff-line.' + k));
            return [s.color, s.backgroundColor];
        })""")
        assert len({bg for _, bg in colours}) == 3, (theme, colours)
        for colour, background in colours[:2]:
            assert contrast(colour, background) >= 4.5, (theme, colour, background)
    page.emulate_media(color_scheme="light")
    shot(page, "diffs-02-approval-edit")
    card.get_by_role("button", name="Allow once").click()
    row = page.locator("details.tool-call")
    expect(row.locator(".tool-diffstat")).to_have_text("+1 \u22121")


def test_binary_and_huge_files_say_so_and_a_long_diff_folds(page, ws):
    setup = ws
    chat = chat_on_workspace(setup, "E2E diff notes")
    (setup.workspace / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    long = "".join(f"row {i}\n" for i in range(200))
    setup.fake.enqueue(call("b1", "write_file", path="logo.png", content="not a picture"), S.reply("a"),
                       call("h1", "write_file", path="huge.txt", content="x\n" * 6000), S.reply("b"),
                       call("l1", "write_file", path="long.txt", content=long), S.reply("c"))
    open_chat(page, setup.server, chat, "E2E diff notes")

    send(page, "Overwrite the logo")
    card = page.get_by_role("group", name="Approval needed for write_file")
    expect(card.locator(".diff-note")).to_have_text(
        "logo.png is a binary file (it holds NUL bytes or is not UTF-8 text), so no diff is shown.")
    card.get_by_role("button", name="Deny…").click()
    card.get_by_role("button", name="Deny", exact=True).click()
    expect(replies(page).last.locator(".msg-body")).to_have_text("a")

    send(page, "Write a huge file")
    card = page.get_by_role("group", name="Approval needed for write_file")
    expect(card.locator(".diff-note")).to_contain_text("huge.txt is too large to show as a diff")
    card.get_by_role("button", name="Allow once").click()
    expect(replies(page).last.locator(".msg-body")).to_have_text("b")

    send(page, "Write a long file")
    card = page.get_by_role("group", name="Approval needed for write_file")
    diff = card.get_by_role("group", name=re.compile("^Changes to long.txt"))
    expect(diff.locator(".diff-line.add")).to_have_count(79)  # the hunk header and 79 lines, then a fold
    more = diff.get_by_role("button", name="Show all 121 more lines")
    expect(more).to_be_visible()
    shot(page, "diffs-03-long-folded")
    more.click()
    expect(diff.locator(".diff-line.add")).to_have_count(200)
    expect(diff.locator(".diff-line.add .diff-text").last).to_have_text("row 199")
    diff.get_by_role("button", name="Show less").click()
    expect(diff.locator(".diff-line.add")).to_have_count(79)
    card.get_by_role("button", name="Allow once").click()
    expect(replies(page).last.locator(".msg-body")).to_have_text("c")
    assert (setup.workspace / "long.txt").read_text() == long


def test_a_running_command_shows_its_last_line_in_its_row(page, setup_with, tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    setup = setup_with({"NUMI_TEST_WORKSPACE": str(workspace)})
    chat = setup.chat(title="E2E progress")
    done = workspace / "finish"
    # The command prints, then waits for the test to let it finish: no sleeps on this side.
    command = f"echo first; echo second; while [ ! -e {done.name} ]; do sleep 0.05; done; echo third"
    setup.fake.enqueue(call("s1", "shell", command=command), S.reply("Ran."))
    open_chat(page, setup.server, chat, "E2E progress")
    send(page, "Run it")
    page.get_by_role("group", name="Approval needed for shell").get_by_role("button", name="Allow once").click()
    row = page.locator("details.tool-call")
    expect(row.locator(".tool-live-line")).to_have_text("second")
    expect(row).to_have_attribute("data-state", "run")
    row.locator("summary").click()
    expect(row.locator(".tool-live-out")).to_have_text("first\nsecond\n")
    shot(page, "diffs-04-running-command")
    done.write_text("")
    expect(row).to_have_attribute("data-state", "ok")
    expect(row.locator(".tool-live")).to_be_hidden()
    expect(row.locator(".tool-out")).to_have_text("first\nsecond\nthird\n")


def test_a_reply_the_loop_guard_stopped_offers_continue(page, setup):
    chat = setup.chat(title="E2E loop")
    same = [S.tool_call(0, "c", "upper", '{"text": "again"}')]
    setup.fake.enqueue(*[[dict(same[0], id=f"c{i}")] for i in (1, 2, 3)], S.reply("Another way."))
    open_chat(page, setup.server, chat, "E2E loop")
    send(page, "Go round")
    stopped = replies(page).last
    expect(stopped.locator(".msg-error")).to_contain_text("called upper with the same arguments")
    stopped.get_by_role("button", name="Continue this reply").click()
    expect(replies(page).last.locator(".msg-body")).to_have_text("Another way.")
    wait_until(lambda: setup.messages(chat)[-1]["content"] == "Another way.", "the continued reply is saved")


def contrast(fg: str, bg: str) -> float:
    """WCAG contrast of two computed `rgb(…)` colours."""
    def lum(rgb: str) -> float:
        r, g, b = (int(x) / 255 for x in re.findall(r"\d+", rgb)[:3])
        return sum(w * (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4)
                   for w, c in zip((0.2126, 0.7152, 0.0722), (r, g, b)))
    hi, lo = sorted((lum(fg), lum(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)
