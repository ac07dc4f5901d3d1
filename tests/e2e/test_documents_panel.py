"""The documents panel in a real Chromium against the real server and the fake provider's scripted tool
calls (CONTRACT §9): a streamed doc_create opens the panel and its text grows as it is written; the
person's edit is saved as their version; a stale base offers "Reload theirs" or "Keep both"; versions
and a diff between two; download with the document's extension; save to the workspace; a selection
sent with the next message; an HTML preview in a frame sandboxed to exactly "allow-scripts" whose
error offers "Ask the model to fix this"; a reload mid-stream shows the text written so far.

Every wait is on a DOM state (Playwright's auto-waiting `expect`), on the fake provider's requests or
on the server's saved state.
"""
from __future__ import annotations

import json
import os
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, replies, send, shot
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")

FIB = "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n"


@pytest.fixture
def tooled(setup):
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
    return setup


def streamed(call_id: str, name: str, args: dict, piece: int = 9) -> list[dict]:
    """A call whose argument JSON arrives in pieces of `piece` characters."""
    text = json.dumps(args, ensure_ascii=False)
    return [S.tool_call(0, call_id, name, "")] + [S.tool_args(0, text[i:i + piece]) for i in range(0, len(text), piece)]


def hanging(call_id: str, args: dict, at: int) -> list[dict]:
    """A streamed call that stops after `at` characters of its arguments until the test releases it."""
    steps = streamed(call_id, "doc_create", args, piece=10)
    cut = 1 + at // 10
    return steps[:cut] + [S.hang()] + steps[cut:]


def documents(setup, chat: str) -> list[dict]:
    r = setup.api.get(f"/api/chats/{chat}/documents")
    assert r.status == 200, r
    return r.body["items"]


def document(setup, doc_id: str) -> dict:
    r = setup.api.get(f"/api/documents/{doc_id}")
    assert r.status == 200, r
    return r.body


def editor_text(page) -> str:
    """The editor's text, from its lines (CodeMirror draws the lines in view: these documents are short)."""
    return page.evaluate("() => [...document.querySelectorAll('.doc-editor .cm-line')].map((l) => l.textContent).join('\\n')")


def created(setup, page, chat: str, title: str, language: str, content: str) -> str:
    """A turn whose model creates a document; once its reply is shown, the document's id."""
    setup.fake.enqueue(streamed(f"c_{title}", "doc_create", {"title": title, "language": language, "content": content}),
                       S.reply(f"Made {title}."))
    send(page, f"Write {title}")
    expect(replies(page).last.locator(".msg-body")).to_have_text(f"Made {title}.")
    items = documents(setup, chat)
    return next(d["id"] for d in items if d["title"] == title)


def with_document(setup, page, chat_title: str, title: str, language: str, content: str):
    """A chat opened in the page whose model made one document, saved in the open panel:
    (chat id, document id, the panel)."""
    chat = setup.chat(title=chat_title)
    open_chat(page, setup.server, chat, chat_title)
    doc_id = created(setup, page, chat, title, language, content)
    panel = page.locator("#doc-panel")
    expect(panel.locator(".doc-status")).to_have_text("Version 1 · saved")
    return chat, doc_id, panel


def test_a_streamed_document_opens_the_panel_and_its_text_grows(page, tooled):
    setup = tooled
    chat = setup.chat(title="Docs stream")
    setup.fake.enqueue(hanging("c1", {"title": "fib.py", "language": "python", "content": FIB}, 100), S.reply("Done."))
    open_chat(page, setup.server, chat, "Docs stream")
    expect(page.locator(".doc-toggle")).to_be_hidden()  # no documents yet
    send(page, "Write fib")
    setup.fake.wait_hanging()
    panel = page.locator("#doc-panel")
    expect(panel).to_be_visible()
    tab = panel.get_by_role("tab", name=re.compile("fib.py"))
    expect(tab).to_have_attribute("aria-selected", "true")
    expect(tab).to_have_attribute("data-streaming", "true")
    expect(panel.locator(".doc-status")).to_have_text("The model is writing…")
    expect(panel.locator(".cm-content")).to_contain_text("def fib")
    partial = editor_text(page)
    assert partial and FIB.startswith(partial) and partial != FIB
    expect(panel.locator(".cm-content")).to_have_attribute("contenteditable", "false")  # read-only while written
    setup.fake.release()
    expect(replies(page).last.locator(".msg-body")).to_have_text("Done.")
    expect(panel.locator(".doc-status")).to_have_text("Version 1 · saved")
    assert editor_text(page) == FIB
    expect(tab).to_have_attribute("data-streaming", "false")
    expect(page.locator(".doc-toggle .doc-count")).to_have_text("1")
    # Highlighted as Python: the keyword's colour is not the text's.
    page.wait_for_function("""() => {
      const line = document.querySelector('.doc-editor .cm-line');
      const word = [...line.querySelectorAll('span')].find((s) => s.textContent === 'def');
      return word && getComputedStyle(word).color !== getComputedStyle(line).color;
    }""")
    shot(page, "documents-01-streamed")


def open_document(page, title: str) -> None:
    """Show the panel on document `title`, its text saved and loaded."""
    panel = page.locator("#doc-panel")
    if not panel.is_visible():
        page.locator(".doc-toggle").click()
    panel.get_by_role("tab", name=re.compile(re.escape(title))).click()
    expect(panel.locator(".doc-status")).to_have_text(re.compile(r"^Version \d+ · saved$"))


def type_at_end(page, text: str) -> None:
    page.locator(".doc-editor .cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type(text)


def test_the_persons_edit_is_a_version_and_a_stale_base_offers_reload_theirs_or_keep_both(page, tooled):
    setup = tooled
    chat, doc_id, panel = with_document(setup, page, "Docs edit", "fib.py", "python", FIB)

    # Typed, then Ctrl+S: version 2, the person's.
    type_at_end(page, "# mine\n")
    expect(panel.locator(".doc-status")).to_have_text("Unsaved changes")
    page.keyboard.press("Control+s")
    expect(panel.locator(".doc-status")).to_have_text("Version 2 · saved")
    saved = document(setup, doc_id)
    assert saved["content"] == FIB + "# mine\n"
    assert [(v["version"], v["author"]) for v in saved["versions"]] == [(1, "model"), (2, "person")]

    # Another window saves a version while this one's save is on its way (held by the route until it
    # has): this one's base is stale, and its save is a 409.
    others: list[str] = []

    def other_window_first(route):
        if route.request.method == "PATCH" and others:
            r = setup.api.patch(f"/api/documents/{doc_id}", {"content": others.pop(),
                                                             "base_version": document(setup, doc_id)["version"]})
            assert r.status == 200, r
        route.continue_()

    page.route(re.compile(r"/api/documents/[^/?]+$"), other_window_first)
    others.append(FIB + "# theirs\n")
    type_at_end(page, "# keep me\n")
    page.keyboard.press("Control+s")
    bar = panel.locator(".doc-conflict")
    expect(bar).to_contain_text("fib.py changed while you edited it: version 3 is the newest.")
    expect(panel.locator(".doc-status")).to_have_text("Unsaved changes")
    bar.get_by_role("button", name="Keep both").click()
    expect(panel.locator(".doc-status")).to_have_text("Version 4 · saved")
    expect(bar).to_be_hidden()
    kept = document(setup, doc_id)
    assert kept["content"] == FIB + "# mine\n# keep me\n"
    assert [(v["version"], v["author"]) for v in kept["versions"]][2:] == [(3, "person"), (4, "person")]
    assert setup.api.get(f"/api/documents/{doc_id}?version=3").body["content"] == FIB + "# theirs\n"

    # Again, and this time the other window's text is taken.
    others.append(FIB + "# theirs again\n")
    type_at_end(page, "# dropped\n")
    page.keyboard.press("Control+s")
    expect(bar).to_contain_text("version 5 is the newest")
    shot(page, "documents-02-conflict")
    bar.get_by_role("button", name="Reload theirs").click()
    expect(panel.locator(".doc-status")).to_have_text("Version 5 · saved")
    assert editor_text(page) == FIB + "# theirs again\n"
    assert document(setup, doc_id)["version"] == 5
    page.unroute(re.compile(r"/api/documents/[^/?]+$"))


def test_versions_list_and_a_diff_between_any_two(page, tooled):
    setup = tooled
    chat = setup.chat(title="Docs versions")
    open_chat(page, setup.server, chat, "Docs versions")
    doc_id = created(setup, page, chat, "notes.md", "markdown", "# Notes\n\none\n")
    for text in ("# Notes\n\none\ntwo\n", "# Notes\n\nONE\ntwo\nthree\n"):
        r = setup.api.patch(f"/api/documents/{doc_id}", {"content": text, "base_version": document(setup, doc_id)["version"]})
        assert r.status == 200, r
    panel = page.locator("#doc-panel")
    expect(panel.locator(".doc-status")).to_have_text("Version 3 · saved")  # followed the other window
    panel.get_by_role("button", name="Versions").click()
    rows = panel.locator(".doc-version")
    expect(rows).to_have_count(3)
    expect(rows.first).to_contain_text("Version 3 · you ·")
    expect(rows.last).to_contain_text("Version 1 · the model ·")
    diff = panel.locator(".doc-diff")
    expect(diff.locator(".diff-line.add .diff-text")).to_have_text(["ONE", "three"])  # 2 → 3 by default
    expect(diff.locator(".diff-line.del .diff-text")).to_have_text(["one"])
    panel.get_by_label("Compare from version").select_option("1")
    expect(diff.locator(".diff-line.add .diff-text")).to_have_text(["ONE", "two", "three"])
    rows.nth(1).get_by_role("button", name="Changes in version 2").click()
    expect(diff.locator(".diff-line.add .diff-text")).to_have_text(["two"])
    expect(diff.locator(".diff-line.del")).to_have_count(0)
    panel.get_by_label("Compare from version").select_option("2")
    panel.get_by_label("Compare to version").select_option("2")
    expect(diff.locator(".diff-note")).to_have_text("Version 2 and version 2 have the same text.")
    shot(page, "documents-03-versions")


def test_copy_and_download_take_the_documents_text_and_extension(page, context, tooled):
    setup = tooled
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    chat = setup.chat(title="Docs download")
    open_chat(page, setup.server, chat, "Docs download")
    created(setup, page, chat, "Rates report", "markdown", "# Rates\n\n- 3 %\n")
    panel = page.locator("#doc-panel")
    expect(panel.locator(".doc-status")).to_have_text("Version 1 · saved")
    panel.get_by_role("button", name="Copy").click()
    expect(page.locator(".toast")).to_contain_text("Copied Rates report.")
    assert page.evaluate("() => navigator.clipboard.readText()") == "# Rates\n\n- 3 %\n"
    with page.expect_download() as info:
        panel.get_by_role("button", name="Download").click()
    download = info.value
    assert download.suggested_filename == "Rates report.md"
    assert open(download.path(), encoding="utf-8").read() == "# Rates\n\n- 3 %\n"
    created(setup, page, chat, "fib.py", "python", FIB)
    open_document(page, "fib.py")
    with page.expect_download() as info:
        panel.get_by_role("button", name="Download").click()
    assert info.value.suggested_filename == "fib.py"  # the title already ends with it


def test_save_to_workspace_writes_the_file_and_asks_before_replacing_it(page, tooled, tmp_path):
    setup = tooled
    workspace = tmp_path / "ws"
    workspace.mkdir()
    chat = setup.chat(title="Docs workspace")
    assert setup.api.patch(f"/api/chats/{chat}", {"workspace": str(workspace)}).status == 200
    open_chat(page, setup.server, chat, "Docs workspace")
    created(setup, page, chat, "fib.py", "python", FIB)
    panel = page.locator("#doc-panel")
    expect(panel.locator(".doc-status")).to_have_text("Version 1 · saved")
    panel.get_by_role("button", name="Save to workspace").click()
    name = panel.get_by_label("File name in the workspace")
    expect(name).to_have_value("fib.py")
    name.fill("src/fib.py")
    panel.locator(".doc-save-form").get_by_role("button", name="Save").click()
    expect(page.locator(".toast")).to_contain_text("Saved src/fib.py in the workspace.")
    assert (workspace / "src" / "fib.py").read_text() == FIB

    type_at_end(page, "# v2\n")
    panel.get_by_role("button", name="Save to workspace").click()
    name.fill("src/fib.py")
    panel.locator(".doc-save-form").get_by_role("button", name="Save").click()
    expect(panel.locator(".doc-save-form .doc-error")).to_have_text(
        "src/fib.py already exists in the workspace. Replace it, or save under another name.")
    assert (workspace / "src" / "fib.py").read_text() == FIB
    panel.get_by_role("button", name="Replace it").click()
    expect(panel.locator(".doc-save-form")).to_be_hidden()
    assert (workspace / "src" / "fib.py").read_text() == FIB + "# v2\n"

    panel.get_by_role("button", name="Save to workspace").click()
    name.fill("../outside.py")
    panel.locator(".doc-save-form").get_by_role("button", name="Save").click()
    expect(panel.locator(".doc-save-form .doc-error")).to_contain_text("contains '..'")
    assert not (tmp_path / "outside.py").exists()


def last_user_text(setup) -> str:
    body = setup.fake.requests[-1].body
    return body["messages"][-1]["content"]


def test_a_selection_goes_with_the_next_message(page, tooled):
    setup = tooled
    chat, doc_id, panel = with_document(setup, page, "Docs ask", "fib.py", "python", FIB)
    panel.get_by_role("button", name="Ask about selection").click()
    expect(page.locator(".toast")).to_contain_text("Select part of the document first")

    panel.locator(".cm-content").click()
    page.keyboard.press("Control+Home")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Shift+ArrowDown")
    page.keyboard.press("Shift+End")
    panel.get_by_role("button", name="Ask about selection").click()
    chip = page.locator(".quote-chip")
    expect(chip).to_have_count(1)
    expect(chip.locator(".quote-label")).to_have_text("fib.py, lines 2–3")
    setup.fake.enqueue(S.reply("Here it is iterative."))
    send(page, "Make this part iterative")
    expect(replies(page).last.locator(".msg-body")).to_have_text("Here it is iterative.")
    expect(chip).to_have_count(0)
    assert last_user_text(setup) == (f"In “fib.py” ({doc_id}, version 1), lines 2–3:\n```python\n    if n < 2:\n"
                                     "        return n\n```\n\nMake this part iterative")


PAGE = """<!doctype html>
<html><body><h1 id="t">Hello preview</h1>
<script>document.getElementById('t').dataset.ran = 'yes'; notDefinedAnywhere();</script>
</body></html>
"""


def test_an_html_preview_runs_in_a_frame_sandboxed_to_scripts_and_its_error_can_be_sent(page, tooled):
    setup = tooled
    chat, doc_id, panel = with_document(setup, page, "Docs preview", "page.html", "html", PAGE)
    panel.get_by_role("button", name="Preview").click()
    frame = panel.locator("iframe.doc-preview-iframe")
    expect(frame).to_have_attribute("sandbox", "allow-scripts")
    assert frame.get_attribute("src").startswith("http://127.0.0.1:")
    heading = panel.frame_locator("iframe.doc-preview-iframe").locator("h1")
    expect(heading).to_have_text("Hello preview")
    expect(heading).to_have_attribute("data-ran", "yes")  # its own inline script ran
    error = panel.locator(".doc-preview-error")
    expect(error).to_have_count(1)
    expect(error).to_contain_text("notDefinedAnywhere is not defined")
    expect(error).to_contain_text("(line 3,")
    shot(page, "documents-04-preview-error")
    error.get_by_role("button", name="Ask the model to fix this").click()
    expect(page.locator(".quote-chip.error .quote-label")).to_have_text("Error in page.html")
    setup.fake.enqueue(S.reply("Fixed."))
    send(page, "")  # the quote alone is the message
    expect(replies(page).last.locator(".msg-body")).to_have_text("Fixed.")
    sent = last_user_text(setup)
    assert sent.startswith(f"The preview of “page.html” ({doc_id}, version 1) reported this error (line 3, column ")
    assert "```text\nUncaught ReferenceError: notDefinedAnywhere is not defined\n```" in sent

    # A message posted by another frame of the page is not the preview's.
    page.evaluate("""() => {
      const other = document.createElement('iframe');
      other.srcdoc = "<script>parent.postMessage({type: 'numi-preview-error', message: 'forged', line: 1, column: 1}, '*')<\\/script>";
      document.body.append(other);
    }""")
    page.wait_for_function("() => document.querySelectorAll('iframe').length === 2")
    expect(error).to_have_count(1)
    expect(page.locator(".doc-preview-error", has_text="forged")).to_have_count(0)
    # The preview's own error is the document's, not the app's.
    page.page_errors[:] = [e for e in page.page_errors if "notDefinedAnywhere" not in e]


def test_a_reload_mid_stream_shows_the_text_written_so_far_and_then_the_rest(page, tooled):
    setup = tooled
    chat = setup.chat(title="Docs reload")
    setup.fake.enqueue(hanging("c1", {"title": "fib.py", "language": "python", "content": FIB}, 100), S.reply("Done."))
    open_chat(page, setup.server, chat, "Docs reload")
    send(page, "Write fib")
    setup.fake.wait_hanging()
    panel = page.locator("#doc-panel")
    expect(panel.locator(".cm-content")).to_contain_text("def fib")
    before = editor_text(page)
    page.reload()
    expect(panel.get_by_role("tab", name=re.compile("fib.py"))).to_have_attribute("data-streaming", "true")
    expect(panel.locator(".doc-status")).to_have_text("The model is writing…")
    assert editor_text(page) == before
    setup.fake.release()
    expect(panel.locator(".doc-status")).to_have_text("Version 1 · saved")
    assert editor_text(page) == FIB


def test_the_panel_closes_reopens_is_resized_and_is_a_sheet_on_a_narrow_window(page, tooled):
    setup = tooled
    chat = setup.chat(title="Docs layout")
    open_chat(page, setup.server, chat, "Docs layout")
    created(setup, page, chat, "fib.py", "python", FIB)
    panel = page.locator("#doc-panel")
    toggle = page.locator(".doc-toggle")
    expect(panel).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    panel.get_by_role("button", name="Close the documents panel").click()
    expect(panel).to_be_hidden()
    expect(toggle).to_have_attribute("aria-label", "1 document — show the documents panel")
    toggle.click()
    expect(panel).to_be_visible()

    dock = page.locator(".doc-dock")
    handle = page.locator(".doc-handle")
    box = handle.bounding_box()
    page.mouse.move(box["x"] + 2, box["y"] + 200)
    page.mouse.down()
    page.mouse.move(box["x"] - 120, box["y"] + 200, steps=4)
    page.mouse.up()
    width = dock.bounding_box()["width"]
    assert width > 400
    page.reload()  # open it stays, at the width dragged
    expect(panel).to_be_visible()
    assert abs(dock.bounding_box()["width"] - width) <= 1
    panel.get_by_role("button", name="Close the documents panel").click()
    page.reload()  # closed it stays, though the turn's events (its doc_open) come again
    expect(page.locator(".chat-header .conn")).to_have_text("")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(toggle.locator(".doc-count")).to_have_text("1")
    # Neither the panel nor CodeMirror was loaded for the chat's page.
    loaded = page.evaluate("() => performance.getEntriesByType('resource').map((e) => e.name)")
    assert not [u for u in loaded if "codemirror" in u or "doc-panel" in u], loaded
    toggle.click()
    expect(panel).to_be_visible()

    page.set_viewport_size({"width": 800, "height": 700})
    expect(dock).to_have_css("position", "fixed")
    sheet = dock.bounding_box()
    assert sheet["x"] == 0 and sheet["y"] == 0 and sheet["width"] == 800 and sheet["height"] == 700
    shot(page, "documents-05-narrow")
    panel.get_by_role("button", name="Close the documents panel").click()
    expect(dock).to_be_hidden()
    toggle.click()
    expect(dock).to_be_visible()
    panel.get_by_role("tab", name="fib.py").press("Escape")  # the sheet closes with Esc
    expect(dock).to_be_hidden()
    expect(toggle).to_be_focused()


def test_a_failed_whole_text_edit_shows_the_saved_text_again(page, tooled):
    setup = tooled
    chat, doc_id, panel = with_document(setup, page, "Docs failed edit", "fib.py", "python", FIB)
    # Whole text and find together: it streams as written, and is refused when it runs.
    steps = streamed("c_bad", "doc_edit", {"doc_id": doc_id, "content": "print('replaced')\n" * 3, "find": "n",
                                           "replace": "m"}, piece=12)
    setup.fake.enqueue(steps[:6] + [S.hang()] + steps[6:], S.reply("That did not work."))
    send(page, "Replace it")
    setup.fake.wait_hanging()
    expect(panel.locator(".doc-status")).to_have_text("The model is writing…")
    expect(panel.locator(".cm-content")).to_contain_text("print(")
    setup.fake.release()
    expect(replies(page).last.locator(".msg-body")).to_have_text("That did not work.")
    expect(panel.locator(".doc-status")).to_have_text("Version 1 · saved")
    assert editor_text(page) == FIB
    assert document(setup, doc_id)["version"] == 1
