"""A drawn Mermaid diagram follows the theme (picked in the app or the system's) without a reload."""
from __future__ import annotations

import os
import urllib.parse

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, replies, send
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"browser tests need Chromium at {CHROMIUM}")

FLOW = """```mermaid
graph TD
  A[Start] --> B{Choice}
```
"""


def svg(figure) -> str:
    src = figure.locator(".mermaid-diagram img").get_attribute("src")
    return urllib.parse.unquote(src.split(",", 1)[1])


def test_a_diagram_is_drawn_again_when_the_theme_changes(page, setup):
    chat = setup.chat(title="E2E mermaid theme")
    setup.fake.enqueue([S.text(FLOW)])
    open_chat(page, setup.server, chat, "E2E mermaid theme")
    send(page, "draw")
    figure = replies(page).last.locator("figure.mermaid-figure")
    expect(figure).to_have_attribute("data-state", "drawn")
    light = svg(figure)

    # Picked in the app (the sidebar's switch): the same diagram, in Mermaid's dark theme.
    page.get_by_role("button", name="Switch light or dark theme").click()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    expect(figure).to_have_attribute("data-theme", "dark")
    expect(figure).to_have_attribute("data-state", "drawn")
    dark = svg(figure)
    assert dark != light and "Start" in dark

    # Back to light: the light drawing again (from the cache: the same picture).
    page.get_by_role("button", name="Switch light or dark theme").click()
    expect(figure).to_have_attribute("data-theme", "default")
    expect(figure).to_have_attribute("data-state", "drawn")
    assert svg(figure) == light

    # Following the system: the system turning dark redraws it too.
    page.evaluate("localStorage.removeItem('numi.theme'); delete document.documentElement.dataset.theme")
    expect(figure).to_have_attribute("data-theme", "default")
    page.emulate_media(color_scheme="dark")
    expect(figure).to_have_attribute("data-theme", "dark")
    expect(figure).to_have_attribute("data-state", "drawn")
    assert svg(figure) == dark
