"""Real-size files through a real Chromium: attached by the file chooser, dropped and pasted, and an
export zip imported from Settings. Binary bytes (photos, random data) have line breaks only where
chance puts them, and the upload must stream them whole whatever their size, up to the limit.

Waits are on DOM states (Playwright's auto-waiting `expect`); no sleeps.
"""
from __future__ import annotations

import hashlib
import os

import pytest
from playwright.sync_api import expect

from tests.e2e.test_attachments import chips, choose_files, dispatch_with_file, vision_chat
from tests.e2e.ui import CHROMIUM, import_in_settings, open_chat
from tests.sample_files import noise_png
from tests.test_api_import import _zip_with_files

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")


def stored(server, data: bytes) -> bytes:
    """The blob the server keeps for these bytes (content-addressed)."""
    sha = hashlib.sha256(data).hexdigest()
    return (server.data_dir / "files" / sha[:2] / sha).read_bytes()


def test_real_size_pictures_attach_by_chooser_drop_and_paste(page, setup):
    chat = vision_chat(setup, "E2E big files")
    open_chat(page, setup.server, chat, "E2E big files")
    photo = noise_png(200 * 1024, seed=1)[0]
    pasted = noise_png(150 * 1024, seed=2)[0]
    dropped = noise_png(1 << 20, seed=3)[0]
    chosen = noise_png(3 << 20, seed=4)[0]
    choose_files(page, {"name": "photo.png", "mimeType": "image/png", "buffer": photo},
                 {"name": "big.png", "mimeType": "image/png", "buffer": chosen})
    dispatch_with_file(page, ".scroller", "drop", "dropped.png", "image/png", dropped)
    dispatch_with_file(page, ".composer-input", "paste", "pasted.png", "image/png", pasted)
    expect(chips(page)).to_have_count(4)
    for name in ("photo.png", "big.png", "dropped.png", "pasted.png"):
        expect(chips(page).filter(has_text=name)).to_have_attribute("data-state", "ready")
    for data in (photo, chosen, dropped, pasted):
        assert stored(setup.server, data) == data


def test_a_picture_over_the_limit_is_refused_naming_it(page, start_server, fake):
    from tests.conftest import Setup

    setup = Setup(start_server({"NUMI_MAX_FILE_MB": "2"}), fake)
    chat = vision_chat(setup, "E2E over")
    open_chat(page, setup.server, chat, "E2E over")
    fits = noise_png((2 << 20) - 4096, seed=5)[0]
    over = noise_png((2 << 20) + 4096, seed=6)[0]
    choose_files(page, {"name": "fits.png", "mimeType": "image/png", "buffer": fits},
                 {"name": "over.png", "mimeType": "image/png", "buffer": over})
    expect(chips(page).filter(has_text="fits.png")).to_have_attribute("data-state", "ready")
    expect(chips(page).filter(has_text="over.png")).to_have_attribute("data-state", "error")
    expect(page.locator(".composer .attach-error")).to_contain_text(
        "over.png was not attached. The file is larger than 2 MB")
    assert stored(setup.server, fits) == fits


@pytest.mark.parametrize("sizes", [[1 << 20], [4 << 20] * 3], ids=["1MiB", "12MiB"])
def test_an_export_zip_of_real_size_imports_from_settings(page, setup, tmp_path, sizes):
    data, blobs = _zip_with_files(sizes, seed=len(sizes))
    path = tmp_path / "numi-export.zip"
    path.write_bytes(data)
    import_in_settings(page, setup.server, path)
    expect(page.locator(".data-status")).to_have_text("Imported 1 chat from numi-export.zip.")
    expect(page.locator(".chat-list .chat-item", has_text="With files")).to_be_visible()
    for blob in blobs.values():
        assert stored(setup.server, blob) == blob
