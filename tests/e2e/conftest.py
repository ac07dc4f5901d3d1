"""End-to-end tests in a real Chromium (Debian's /usr/bin/chromium) driven by Playwright.

One browser for the whole session, a fresh context (cookies, storage) per
test. The page talks to a real server subprocess, which talks to the
in-process FakeProvider (fixtures from tests/conftest.py). Nothing is
downloaded: Playwright only drives the system Chromium.
"""
from __future__ import annotations

import pytest

from tests.e2e.ui import CHROMIUM, CHROMIUM_ARGS

# Auto-waiting `expect(...)` timeout: generous for a loaded CI machine, never hit when things work.
EXPECT_TIMEOUT_MS = 15_000


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def context(browser):
    ctx = browser.new_context(viewport={"width": 1100, "height": 760}, color_scheme="light")
    ctx.set_default_timeout(EXPECT_TIMEOUT_MS)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context):
    p = context.new_page()
    errors: list[str] = []
    p.on("pageerror", lambda exc: errors.append(str(exc)))
    p.page_errors = errors  # type: ignore[attr-defined]
    yield p
    # An uncaught exception in the UI is a bug even when the test's assertions passed.
    assert not errors, f"uncaught errors in the page: {errors}"


