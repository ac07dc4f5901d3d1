"""A folder's settings as a file in a real Chromium: exported from its ⋯ menu (a real download),
imported from the New folder sheet (the name made free, what did not carry over said), and a file
that is not a folder file refused in the sheet with nothing made.

Waits are on DOM states and browser events (Playwright's auto-waiting), never sleeps.
"""
from __future__ import annotations

import json
import os

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, sign_in

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")

IMPORT = "Or import a folder file (.numi-folder.json)"


def test_a_folder_goes_out_as_a_file_and_comes_back_in(page, setup, tmp_path):
    api = setup.api
    assert api.post("/api/folders", {"name": "Support", "system_prompt": "Answer as the support desk.",
                                     "mode": "plan"}).status == 201
    sign_in(page, setup.server)

    page.get_by_role("button", name="Options for folder Support").click()
    with page.expect_download() as info:
        page.get_by_role("menuitem", name="Export settings…").click()
    download = info.value
    assert download.suggested_filename == "Support.numi-folder.json"
    path = tmp_path / download.suggested_filename
    download.save_as(path)
    doc = json.loads(path.read_text())
    assert (doc["format"], doc["folder"]["system_prompt"], doc["folder"]["mode"]) == \
        ("numi-folder", "Answer as the support desk.", "plan")

    # Shared with a model this machine does not have: imported all the same, and said.
    doc["folder"]["model"] = {"api_model": "someone-elses-model", "label": "Theirs"}
    path.write_text(json.dumps(doc))
    page.get_by_role("button", name="New folder").click()
    dialog = page.get_by_role("dialog", name="New folder")
    dialog.get_by_label(IMPORT).set_input_files(str(path))
    expect(dialog).to_have_count(0)
    toast = page.locator(".toast", has_text="imported")
    expect(toast).to_contain_text("Folder “Support (2)” imported.")
    expect(toast).to_contain_text("“Theirs” (someone-elses-model) is not in your catalog")
    expect(page.get_by_role("button", name="Support (2)", exact=True)).to_be_visible()
    made = next(f for f in api.get("/api/folders").body["items"] if f["name"] == "Support (2)")
    assert (made["system_prompt"], made["mode"], made["model_id"]) == ("Answer as the support desk.", "plan", None)

    # Not JSON, then JSON that is not a folder file: the sheet says so and stays; nothing is made.
    bad = tmp_path / "notes.json"
    bad.write_text("meeting notes, not JSON")
    page.get_by_role("button", name="New folder").click()
    dialog.get_by_label(IMPORT).set_input_files(str(bad))
    expect(dialog.get_by_role("alert")).to_contain_text("“notes.json” is not a folder file: it is not JSON.")
    bad.write_text(json.dumps({"format": "numi-export", "chats": []}))
    dialog.get_by_label(IMPORT).set_input_files(str(bad))
    expect(dialog.get_by_role("alert")).to_contain_text("is not a Numi folder file")
    expect(dialog).to_be_visible()
    assert len(api.get("/api/folders").body["items"]) == 2
