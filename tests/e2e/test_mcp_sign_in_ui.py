"""Settings → MCP servers for a server that needs an OAuth sign-in (CONTRACT §15), in a real Chromium
against the real Numi server and the real OAuth-protected MCP server (tests/mcp_oauth_server.py):
"Needs sign-in", Sign in opening the server's page in a new window while the card waits for the
browser, "Signed in as …" once the redirect came back, a forged callback's sentence, Sign out, and
the line that says tokens last only this run without a keyring (tests run without one).

The page the app opens is kept from loading (its address is routed to an abort), so the test plays
the browser itself, when it chooses: the card's waiting state is seen every run. No sleeps.
"""
from __future__ import annotations

import os
import re
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, shot, sign_in
from tests.test_mcp_sign_in import ACCOUNT, OAuthServer, browse

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")


@pytest.fixture
def oauth_setup(setup):
    server = OAuthServer()
    r = setup.api.post("/api/mcp/servers", {"id": "o", "transport": "http", "url": server.url, "call_timeout": 20})
    assert r.status == 201, r
    # Listing its tools meets the 401: the server now needs a sign-in.
    assert setup.api.post("/api/mcp/servers/o/tools").status == 502
    setup.oauth = server
    yield setup
    setup.api.request("DELETE", "/api/mcp/servers/o")
    server.close()


def card(page):
    return page.locator(".mcp-server[data-id='o']")


def start_sign_in(page) -> str:
    """Press Sign in; the authorization URL the app opened (its page kept from loading)."""
    with page.expect_response(lambda r: r.url.endswith("/api/mcp/servers/o/sign-in")
                              and r.request.method == "POST") as answer, page.expect_popup() as popup:
        card(page).get_by_role("button", name="Sign in to o").click()
    url = answer.value.json()["authorize_url"]
    assert popup.value.url in (url, "chrome-error://chromewebdata/")  # its page kept from loading
    # A new window without an opener: the server's page cannot reach back into Numi.
    assert page.evaluate("window.__opened.at(-1)") == [url, "_blank", "noopener"]
    return url


# What the page asked window.open for (it still opens the window).
OPENED_SCRIPT = """
window.__opened = [];
const open = window.open;
window.open = (...args) => { window.__opened.push(args); return open.apply(window, args); };
"""


def test_needs_sign_in_then_signed_in_then_signed_out(page, context, oauth_setup):
    setup = oauth_setup
    page.add_init_script(OPENED_SCRIPT)
    context.route(re.compile(re.escape(setup.oauth.base) + r"/authorize.*"), lambda route: route.abort())
    sign_in(page, setup.server, "/settings/mcp")
    auth = card(page).locator(".mcp-auth")
    expect(auth.locator(".mcp-auth-state")).to_have_text("Needs sign-in")
    expect(auth.locator(".mcp-auth-storage")).to_have_text(
        "No keyring on this computer: tokens are kept only until Numi quits.")
    shot(page, "mcp-needs-sign-in")

    # A forged redirect while it waits: the sign-in ends with the server's sentence.
    url = start_sign_in(page)
    expect(auth.locator(".mcp-auth-state")).to_have_text("Waiting for the browser…")
    expect(card(page).get_by_role("button", name="Sign in again to o")).to_be_visible()
    port = urlsplit(parse_qs(urlsplit(url).query)["redirect_uri"][0]).port
    forged = httpx2.get(f"http://127.0.0.1:{port}/callback?code=stolen&state=forged", timeout=10)
    assert forged.status_code == 400
    error = setup.api.get("/api/mcp/servers/o").body["status"]["auth_error"]
    expect(auth.locator(".mcp-auth-error")).to_have_text(error)
    expect(auth.locator(".mcp-auth-state")).to_have_text("Needs sign-in")
    expect(page.locator(".mcp-status")).to_have_text(f"o: {error}")

    # The real redirect: the card follows without a reload. The page reads the status once while
    # the browser is away first: the failure the new sign-in cleared is no change to stop at.
    url = start_sign_in(page)
    expect(auth.locator(".mcp-auth-state")).to_have_text("Waiting for the browser…")
    with page.expect_response(lambda r: r.url.endswith("/api/mcp/servers/o") and r.request.method == "GET"):
        pass
    expect(auth.locator(".mcp-auth-state")).to_have_text("Waiting for the browser…")
    assert browse(url).status_code == 200
    expect(auth.locator(".mcp-auth-state")).to_have_text(f"Signed in as {ACCOUNT}")
    expect(auth.locator(".mcp-auth-error")).to_have_count(0)
    expect(page.locator(".mcp-status")).to_have_text(f"Signed in to o as {ACCOUNT}.")
    shot(page, "mcp-signed-in")

    with page.expect_request(lambda r: r.url.endswith("/api/mcp/servers/o/sign-in") and r.method == "DELETE"):
        card(page).get_by_role("button", name="Sign out of o").click()
    expect(auth.locator(".mcp-auth-state")).to_have_text("Needs sign-in")
    expect(page.locator(".mcp-status")).to_have_text("Signed out of o; its tokens are forgotten.")
    assert setup.api.get("/api/mcp/servers/o").body["status"]["auth"] == "needs_sign_in"


def test_a_sign_in_the_server_refuses_says_why(page, oauth_setup):
    setup = oauth_setup
    setup.oauth.knobs(metadata="missing")
    sign_in(page, setup.server, "/settings/mcp")
    card(page).get_by_role("button", name="Sign in to o").click()
    expect(page.locator(".mcp-status")).to_have_text(re.compile(r"^o: .*publishes no sign-in details"))
    expect(card(page).locator(".mcp-auth-state")).to_have_text("Needs sign-in")


def test_a_call_refused_for_want_of_a_sign_in_links_to_settings(page, oauth_setup):
    from tests.test_mcp_sign_in import REVOKE, run_turn
    from tests.test_mcp_sign_in import sign_in as sign_in_over_api

    setup = oauth_setup
    assert setup.api.patch(f"/api/models/{setup.model['id']}", {"supports": {"tools": True}}).status == 200
    sign_in_over_api(setup)
    chat = setup.chat(title="Revoked")
    # The first call revokes the sign-in at the server; the second is refused: sign in again.
    ends, end = run_turn(setup, chat, (REVOKE, {}), ("mcp__o__echo", {"text": "after"}))
    assert end["status"] == "completed" and not ends[1]["ok"], ends
    sign_in(page, setup.server, f"/c/{chat}")
    cards = page.locator("details.tool-call")
    expect(cards).to_have_count(2)
    refused, fine = cards.nth(1), cards.nth(0)
    refused.locator("summary").click()
    link = refused.get_by_role("link", name="Open Settings → MCP servers")
    expect(link).to_be_visible()
    fine.locator("summary").click()
    expect(fine.get_by_role("link", name="Open Settings → MCP servers")).to_be_hidden()  # it ran: no link
    link.click()
    expect(card(page).locator(".mcp-auth-state")).to_have_text("Needs sign-in")
