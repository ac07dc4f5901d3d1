"""Knowledge bases in a real Chromium against the real server (CONTRACT §8, issue 35): Settings → Knowledge
makes a base from a folder of real files (a PDF with page labels, an encrypted PDF, Markdown, code), shows it
indexing then ready with its counts and the file it could not read (which still opens in its app), searches it,
opens a result in the viewer, renames and deletes it, and sets the embeddings model; a chat and its folder name bases; a saved reply's knowledge citations open the in-app
viewer at their place — the PDF page drawn beside its text, a heading highlighted, lines marked — and "Open
file" runs the system's opener (a real stub `xdg-open` on the server's PATH that records its argument).

Every wait is on a DOM state (Playwright's auto-waiting `expect`) or on the server's saved state.
"""
from __future__ import annotations

import os
import re
import stat

import pytest
from playwright.sync_api import expect

from tests import knowledge_files as kf
from tests.e2e.test_a11y import low_contrast
from tests.e2e.test_citations_ui import save_sources
from tests.e2e.ui import CHROMIUM, open_chat, replies, shot, sign_in, wait_until
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium); "
           "CI installs it")

HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'
NOTES = f"""# Field notes

Intro to the notes.

## Owls

The tawny owl hoots at midnight near the old barn. {HOSTILE} Nobody saw it fly.

## Bats

Bats hunt moths above the river at dusk.
"""
CODE = "\n".join([f"def helper_{i}():\n    return {i}\n" for i in range(40)]) + "\ndef frobnicate_widget():\n    return 42\n"
ANSWER = "Moths are counted on page one [1]. The owl hoots at midnight [2]. The widget is made in code [3]."


def stub_opener(tmp_path):
    """An `xdg-open` that appends its arguments to a file: (its folder, the record)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "opened.txt"
    opener = bin_dir / "xdg-open"
    opener.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" >> \"{record}\"\n")
    opener.chmod(opener.stat().st_mode | stat.S_IXUSR)
    return bin_dir, record


def folder_of_files(root):
    root.mkdir()
    kf.write_pdf(root / "survey.pdf")
    kf.write_pdf(root / "locked.pdf", password="secret")
    (root / "notes.md").write_text(NOTES)
    (root / "widgets.py").write_text(CODE)
    return root


@pytest.fixture
def kb_setup(setup_with, tmp_path):
    bin_dir, record = stub_opener(tmp_path)
    s = setup_with({"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    s.opened = record
    return s


def section(page):
    return page.locator("section.s-panel[data-section='knowledge']")


def test_settings_make_a_base_watch_it_read_search_it_rename_and_delete(page, kb_setup, tmp_path):
    setup = kb_setup
    folder = folder_of_files(tmp_path / "field")
    sign_in(page, setup.server, "/settings/knowledge")
    s = section(page)
    expect(s.get_by_role("heading", name="Knowledge", exact=True)).to_be_visible()
    expect(s.locator(".kb-empty")).to_be_visible()

    # Made from one path per line; a relative path is refused here, one the server refuses is said by the field.
    s.get_by_text("Make a knowledge base").click()
    name, paths = s.get_by_label("Name", exact=True), s.get_by_label("Folders and files")
    name.fill("Field work")
    paths.fill("field")
    s.get_by_role("button", name="Create knowledge base").click()
    expect(paths).to_have_attribute("aria-invalid", "true")
    expect(s.locator(".kb-create .field-error").last).to_contain_text("“field” is not a full path")
    paths.fill(str(tmp_path / "nowhere"))
    s.get_by_role("button", name="Create knowledge base").click()
    expect(s.locator(".kb-create .field-error").last).not_to_be_empty()
    assert setup.api.get("/api/knowledge").body["items"] == []
    paths.fill(f"{folder}\n\n{folder}\n")
    s.get_by_role("button", name="Create knowledge base").click()
    expect(s.locator(".kb-create .form-status")).to_have_text("Made “Field work”: its files are being read.")

    # Indexing, then ready (the section reads the base again until it is), with its counts and its problem.
    card = s.locator(".kb-base")
    expect(card).to_have_count(1)
    expect(card.locator(".kb-name")).to_have_text("Field work")
    expect(card).to_have_attribute("data-status", "ready", timeout=30_000)
    expect(card.locator(".kb-state")).to_have_text("ready")
    base = setup.api.get("/api/knowledge").body["items"][0]
    assert base["paths"] == [str(folder)] and base["documents"] == 3, base
    expect(card.locator(".kb-status")).to_have_text(f"Ready · 3 documents · {base['chunks']} chunks")
    expect(card.locator(".kb-paths li")).to_have_text([str(folder)])
    problems = card.locator(".kb-problems")
    expect(problems.locator("summary")).to_have_text("1 file could not be read")
    problems.locator("summary").click()
    expect(problems.locator(".kb-problem-path")).to_have_text([str(folder / "locked.pdf")])
    expect(problems.locator(".kb-problem-reason")).to_contain_text("password-protected")
    # Its documents, each (read) opening in the viewer.
    card.locator(".kb-documents summary").click()
    expect(card.locator(".kb-doc")).to_have_count(4)
    locked = card.locator(".kb-doc[data-status='unreadable']")
    expect(locked).to_contain_text("password-protected")
    # One Numi could not read still opens in the system's own app (which may ask for its password).
    open_locked = locked.locator("button.kb-doc-file")
    expect(open_locked).to_have_accessible_name(re.compile(r"^Open .*locked\.pdf in its app$"))
    open_locked.click()
    expect(locked.locator(".kb-doc-said")).to_have_text(" Opened in its app.")
    wait_until(lambda: setup.opened.exists() and setup.opened.read_text() == f"{folder / 'locked.pdf'}\n",
               "the opener to get the file")

    # The search box runs a query: title, place and snippet, all as text (the file's markup never live).
    search = card.get_by_role("searchbox", name="Search Field work")
    search.fill("owl hoots midnight")
    search.press("Enter")
    expect(card.locator(".kb-result-status")).to_contain_text("found")
    first = card.locator(".kb-result").first
    expect(first.locator(".kb-result-title")).to_have_text("Field notes")
    expect(first.locator(".kb-result-place")).to_have_text(" · Field notes > Owls")
    expect(first.locator(".kb-result-file")).to_have_text(str(folder / "notes.md"))
    expect(first.locator(".kb-result-snippet")).to_contain_text("owl hoots at midnight")
    search.fill("zzzqqq")
    card.get_by_role("button", name="Search").click()
    expect(card.locator(".kb-result-status")).to_have_text("Nothing found. Try other words.")
    expect(card.locator(".kb-result")).to_have_count(0)
    search.fill("owl hoots midnight")
    search.press("Enter")

    # A result opens the viewer at its heading: that section highlighted, the hostile text only text.
    card.locator(".kb-result-title").first.click()
    viewer = page.get_by_role("dialog", name="Field notes")
    expect(viewer.locator(".kv-place")).to_have_text("Field notes > Owls")
    hit = viewer.locator(".kv-block.kv-hit")
    expect(hit).to_have_count(1)
    expect(hit.locator(".kv-heading")).to_have_text("Field notes > Owls")
    expect(hit.locator(".kv-body")).to_contain_text(f"The tawny owl hoots at midnight near the old barn. {HOSTILE}")
    expect(hit.locator("mark.kv-snippet").first).to_contain_text("owl hoots at midnight")
    expect(hit).to_be_in_viewport()
    expect(viewer.locator(".kv-block")).to_have_count(3)  # before the first heading, Owls, Bats: each once
    assert viewer.locator(".kv-text img, .kv-text script").count() == 0
    assert page.evaluate("window.__pwned") is None
    expect(viewer.locator(".kv-text")).to_be_focused()
    for theme in ("light", "dark"):
        page.emulate_media(color_scheme=theme)
        assert low_contrast(page, [".kv-place", ".kv-heading", ".kv-body", ".kv-path", "mark.kv-snippet"]) == [], theme
    page.emulate_media(color_scheme="light")
    shot(page, "knowledge-01-viewer-heading")
    page.keyboard.press("Escape")
    expect(viewer).to_have_count(0)
    for theme in ("light", "dark"):
        page.emulate_media(color_scheme=theme)
        assert low_contrast(page, [".kb-status", ".kb-state", ".kb-result-place", ".kb-result-snippet",
                                   ".kb-problem-reason", ".kb-paths"]) == [], theme
    page.emulate_media(color_scheme="light")
    shot(page, "knowledge-02-settings")

    # Renamed and given another path in place; then deleted, after asking.
    card.get_by_role("button", name="Edit").click()
    editor = card.locator(".kb-edit")
    editor.get_by_label("Name").fill("Fieldwork 2026")
    editor.get_by_label("Folders and files (one full path per line)").fill(f"{folder}\n{folder / 'notes.md'}")
    editor.get_by_role("button", name="Save").click()
    expect(card.locator(".kb-name")).to_have_text("Fieldwork 2026")
    expect(card.locator(".kb-paths li")).to_have_text([str(folder), str(folder / "notes.md")])
    assert setup.api.get(f"/api/knowledge/{base['id']}").body["name"] == "Fieldwork 2026"
    card.get_by_role("button", name="Delete").click()
    confirm = page.get_by_role("dialog", name="Delete “Fieldwork 2026”?")
    expect(confirm.get_by_role("button", name="Cancel")).to_be_focused()
    confirm.get_by_role("button", name="Delete knowledge base").click()
    expect(s.locator(".kb-base")).to_have_count(0)
    expect(s.locator(".kb-empty")).to_be_visible()
    assert setup.api.get("/api/knowledge").body["items"] == []
    assert folder.exists() and (folder / "notes.md").exists()  # the files themselves are untouched

    # Search by meaning: an OpenAI-compatible provider's embeddings model, saved in settings; then off again.
    s.get_by_text("Search by meaning (embeddings)").click()
    meaning = s.locator(".kb-meaning")
    expect(meaning.locator(".kb-emb-state")).to_have_text("Off: bases are searched by words alone.")
    meaning.get_by_label("Embeddings provider").select_option(label="Fake Local")
    meaning.get_by_role("button", name="Save").click()
    expect(meaning.locator(".field-error")).to_have_text("Name the embeddings model, as the provider knows it.")
    meaning.get_by_label("Embeddings model").fill("fake-embed")
    meaning.get_by_role("button", name="Save").click()
    expect(meaning.locator(".kb-emb-state")).to_have_text("Bases are searched by meaning with fake-embed (Fake Local).")
    assert setup.api.get("/api/settings").body["knowledge"] == {
        "embeddings": {"provider_id": setup.provider["id"], "model": "fake-embed"}}
    meaning.get_by_label("Embeddings provider").select_option("")
    meaning.get_by_role("button", name="Save").click()
    expect(meaning.locator(".kb-emb-state")).to_have_text("Off: bases are searched by words alone.")
    assert setup.api.get("/api/settings").body["knowledge"] == {"embeddings": None}


def ready_base(api, folder) -> dict:
    r = api.post("/api/knowledge", {"name": "Moths", "paths": [str(folder)]})
    assert r.status == 201, r
    wait_until(lambda: api.get(f"/api/knowledge/{r.body['id']}").body["status"] == "ready", "the base to be read", 30)
    return r.body


def hit(api, base_id, q) -> dict:
    r = api.post(f"/api/knowledge/{base_id}/query", {"q": q, "limit": 1})
    assert r.status == 200 and r.body["items"], r
    return r.body["items"][0]


def source(n, base_id, found) -> dict:
    """A query's hit as a turn saves it: a `sources` item of kind knowledge."""
    return {"n": n, "kind": "knowledge", "title": found["title"], "snippet": found["snippet"],
            "locator": found["locator"], "knowledge_id": base_id, "document_id": found["document_id"],
            "path": found["file"]}


def test_a_reply_cites_knowledge_that_opens_in_the_viewer_and_chats_name_bases(page, kb_setup, tmp_path):
    setup, api = kb_setup, kb_setup.api
    folder = folder_of_files(tmp_path / "field")
    base = ready_base(api, folder)
    page_hit = hit(api, base["id"], "Page marker 12")  # the third page, printed "1"
    assert page_hit["locator"] == {"page": "1", "page_index": 2}, page_hit
    owl_hit = hit(api, base["id"], "tawny owl")
    code_hit = hit(api, base["id"], "frobnicate_widget")
    first_line, last_line = code_hit["locator"]["lines"]
    papers = api.post("/api/folders", {"name": "Papers"}).body
    chat = setup.chat(title="E2E knowledge", folder_id=papers["id"])
    setup.fake.enqueue(S.reply(ANSWER))
    sock = setup.socket(chat)
    try:
        sock.send(type="send", request_id="r1", content="What do my notes say?")
        sock.until("turn_end")
    finally:
        sock.close()
    reply = [m for m in setup.messages(chat) if m["role"] == "assistant"][-1]
    save_sources(setup, reply["id"], [source(1, base["id"], page_hit), source(2, base["id"], owl_hit),
                                      source(3, base["id"], code_hit)])
    open_chat(page, setup.server, chat, "E2E knowledge")

    # Markers are buttons opening the viewer (no link out); the list names each by title and place.
    last = replies(page).last
    markers = last.locator("sup.cite button.cite-knowledge")
    expect(markers).to_have_text(["1", "2", "3"])
    expect(last.locator("sup.cite a")).to_have_count(0)
    expect(markers.first).to_have_accessible_name(f"Source 1: {kf.PDF_TITLE} · p. 1")
    listed = last.locator(".msg-sources li")
    # (A text or code file's title is its path: it names none of its own.)
    expect(listed.locator(".source-title")).to_have_text([kf.PDF_TITLE, "Field notes", "widgets.py"])
    expect(listed.locator(".source-place")).to_have_text(["p. 1", "Field notes > Owls", f"lines {first_line}–{last_line}"])
    for theme in ("light", "dark"):
        page.emulate_media(color_scheme=theme)
        assert low_contrast(page, [".cite-knowledge", ".source-knowledge", ".source-place"]) == [], theme
    page.emulate_media(color_scheme="light")

    # [1]: the PDF's cited page drawn beside its text, the snippet marked; the other pages a click away.
    markers.first.click()
    viewer = page.get_by_role("dialog", name=kf.PDF_TITLE)
    expect(viewer.locator(".kv-place")).to_have_text("p. 1")
    expect(viewer.locator(".kv-path")).to_have_text(str(folder / "survey.pdf"))
    img = viewer.locator("img.kv-page-img")
    expect(img).to_have_attribute("src", re.compile(rf"/documents/{page_hit['document_id']}/pages/2$"))
    expect(img).to_have_attribute("alt", f"Page 1 of {kf.PDF_TITLE}, as printed")
    page.wait_for_function("() => { const i = document.querySelector('img.kv-page-img'); "
                           "return i && i.complete && i.naturalWidth > 600; }")
    expect(viewer.locator(".kv-page-label")).to_have_text("p. 1 (3 of 5 with text)")
    text = viewer.locator(".kv-text")
    expect(text).to_have_attribute("data-hit", "true")
    expect(text).to_contain_text("Page marker 12 begins here.")
    expect(text).not_to_contain_text("Page marker II1")
    expect(text.locator("mark.kv-snippet").first).to_contain_text("Page marker 12")
    shot(page, "knowledge-03-viewer-pdf")
    viewer.get_by_role("button", name="Next page with text").click()
    expect(viewer.locator(".kv-page-label")).to_have_text("p. 2 (4 of 5 with text)")
    expect(img).to_have_attribute("src", re.compile(r"/pages/3$"))
    expect(text).to_have_attribute("data-hit", "false")
    expect(text).to_contain_text("Page marker 23 begins here.")
    expect(text.locator("mark")).to_have_count(0)
    # Open file: the system's opener gets the file's path.
    viewer.get_by_role("button", name="Open survey.pdf in its app").click()
    expect(viewer.locator(".kv-status")).to_have_text("Opened in its app.")
    wait_until(lambda: setup.opened.exists() and setup.opened.read_text() == f"{folder / 'survey.pdf'}\n",
               "the opener to get the file")
    page.keyboard.press("Escape")
    expect(viewer).to_have_count(0)
    expect(markers.first).to_be_focused()

    # [3] by keyboard: the code's lines, the cited ones marked and in view, numbered as in the file.
    markers.nth(2).focus()
    page.keyboard.press("Enter")
    viewer = page.get_by_role("dialog", name="widgets.py")
    expect(viewer.locator(".kv-place")).to_have_text(f"lines {first_line}–{last_line}")
    marked = viewer.locator("mark.kv-lines-hit")
    expect(marked.locator(".kv-line")).to_have_count(last_line - first_line + 1)
    expect(marked.locator(".kv-ln").first).to_have_text(str(first_line))
    expect(marked).to_contain_text("def frobnicate_widget():")
    expect(marked).to_be_in_viewport()
    expect(viewer.locator(".kv-line")).to_have_count(len(CODE.rstrip("\n").split("\n")))
    page.keyboard.press("Escape")

    # [2] from the list under the reply: the heading's section, highlighted.
    listed.nth(1).locator(".source-title").click()
    viewer = page.get_by_role("dialog", name="Field notes")
    expect(viewer.locator(".kv-block.kv-hit .kv-heading")).to_have_text("Field notes > Owls")
    page.keyboard.press("Escape")

    # The chat names the base from the composer's Knowledge popover (saved at once)…
    button = page.get_by_role("button", name="Knowledge bases for this chat")
    button.click()
    popup = page.get_by_role("dialog", name="Knowledge bases for this chat")
    expect(popup.locator(".kb-follows")).to_have_text(
        "Following folder “Papers”. Changing a box gives this chat its own list.")
    box = popup.get_by_role("checkbox", name="Moths")
    expect(box).not_to_be_checked()
    box.check()
    expect(popup.locator(".kb-follows")).to_contain_text("This chat has its own list.")
    wait_until(lambda: api.get(f"/api/chats/{chat}").body.get("knowledge_ids") == [base["id"]],
               "the chat to name the base")
    expect(button).to_have_accessible_name("Knowledge bases for this chat (1 searched)")
    page.keyboard.press("Escape")
    expect(popup).to_be_hidden()
    expect(button).to_be_focused()

    # …and its folder from the folder's sheet (saved with the sheet).
    page.get_by_role("button", name="Options for folder Papers").click()
    page.get_by_role("menuitem", name="Rename and defaults…").click()
    sheet = page.get_by_role("dialog", name="Folder “Papers”")
    boxes = sheet.get_by_role("group", name="Knowledge bases its chats search")
    boxes.get_by_role("checkbox", name="Moths").check()
    assert not api.get(f"/api/folders/{papers['id']}").body.get("knowledge_ids")
    sheet.get_by_role("button", name="Save").click()
    expect(sheet).to_have_count(0)
    wait_until(lambda: api.get(f"/api/folders/{papers['id']}").body.get("knowledge_ids") == [base["id"]],
               "the folder to name the base")
    # The chat gives its own list up and follows the folder's again (null).
    button.click()
    popup.get_by_role("button", name="Use folder “Papers”’s").click()
    wait_until(lambda: api.get(f"/api/chats/{chat}").body.get("knowledge_ids", "unset") is None,
               "the chat to follow its folder")
    expect(popup.locator(".kb-follows")).to_contain_text("Following folder “Papers”.")
    expect(popup.get_by_role("checkbox", name="Moths")).to_be_checked()  # the folder's base
    expect(button).to_have_accessible_name("Knowledge bases for this chat (1 searched)")
