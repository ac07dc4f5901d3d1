"""The window served from its start bundle (web/.app-bundle, made by build/web_bundle.py)
and from web/app's modules as they are (NUMI_WEB_BUNDLE=0): the same window either way."""
from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlparse

import pytest
from playwright.sync_api import expect

from backend.web_assets import WebAssets
from tests.e2e.ui import CHROMIUM, open_chat, replies, send, wait_until
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"{CHROMIUM} not installed")

WEB = Path(__file__).resolve().parents[2] / "web"


@pytest.mark.parametrize("bundled", [True, False], ids=["bundle", "modules"])
def test_the_window_works_from_its_bundle_and_from_its_modules(page, setup_with, bundled):
    if bundled and WebAssets(WEB).bundle is None:
        pytest.skip("web/.app-bundle is missing or was made from other files (make web-bundle)")
    setup = setup_with({"NUMI_WEB_BUNDLE": "1" if bundled else "0"})
    asked: list[str] = []
    page.on("request", lambda r: asked.append(urlparse(r.url).path))
    chat = setup.chat(title="E2E bundle")
    setup.fake.enqueue([S.text("Served "), S.text("**either** way.")])
    open_chat(page, setup.server, chat, "E2E bundle")
    send(page, "Which way?")
    reply = replies(page).last
    expect(reply).to_have_attribute("data-status", "complete")
    # Markdown: the vendored libraries load beside the bundle as they do beside the modules.
    expect(reply.locator(".msg-body strong")).to_have_text("either")
    # A screen loaded with import() on first use (a chunk of its own in the bundle).
    page.keyboard.press("Control+,")
    expect(page.get_by_role("searchbox", name="Search settings")).to_be_visible()
    chunks = [p for p in asked if re.search(r"/app/chunk-\w+\.js$", p)]
    modules = [p for p in asked if re.search(r"/app/(views/chat|chat-session|stream-render)\.js$", p)]
    if bundled:
        assert chunks and not modules, asked
    else:
        assert len(modules) == 3 and not chunks, asked
    # The Markdown worker, a file of its own either way (it starts once the page is idle).
    wait_until(lambda: any(p.endswith("/app/markdown-worker.js") for p in asked), "the Markdown worker is loaded")
