"""Accessibility of the window, in a real Chromium against the real server.

No screen reader runs here, so these tests read what one would read: Chromium's
accessibility tree, through the DevTools protocol (`Accessibility.getFullAXTree`).
Names, roles, landmarks, live regions and modality are Chromium's own computation,
not a re-implementation of the accessible-name rules in a test.

States covered: the first-run screen, an empty new chat, a chat while a reply
streams (reasoning, a tool call row, an approval card) and after it, settings,
the shortcuts sheet and the chat settings dialog; a keyboard-only walk; 200 %
zoom; colour contrast in both themes.

Waits are on DOM states (Playwright's auto-waiting `expect`) or on the fake
provider's own events (a response parked in a `hang` step): no sleeps.
"""
from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.ui import CHROMIUM, open_chat, send, sign_in, wait_chat_ready
from tests.fakeprovider import script as S

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"browser tests need Chromium at {CHROMIUM} (apt-get install -y --no-install-recommends chromium)")

# What a person can operate: the task's list of interactive elements.
INTERACTIVE = "button, a[href], input:not([type=hidden]), select, textarea, summary, [tabindex]"
# Containers a screen reader can jump to (landmarks, and a modal dialog). Live regions
# are accepted too: a toast's Undo lives in the polite status region at the page's end.
LANDMARKS = {"main", "navigation", "complementary", "banner", "contentinfo", "region", "form", "search",
             "dialog", "alertdialog", "status", "alert", "log"}
# Roles that say nothing about what a control is: a control with one is not announced as one.
NO_ROLE = {"generic", "none", "presentation", "StaticText", "LineBreak", "Ignored", ""}


# --- the accessibility tree ---------------------------------------------------------

class AXTree:
    """One snapshot of Chromium's accessibility tree (the nodes of `Accessibility.getFullAXTree`)."""

    def __init__(self, nodes: list[dict]):
        self.nodes = nodes
        self.by_id = {n["nodeId"]: n for n in nodes}
        self.by_dom: dict[int, dict] = {}
        for n in nodes:
            # Some DOM nodes have two AX nodes (a <select> and its popup): keep the exposed one.
            bid = n.get("backendDOMNodeId")
            if bid is not None and (bid not in self.by_dom or self.by_dom[bid].get("ignored")):
                self.by_dom[bid] = n

    @staticmethod
    def role(n: dict) -> str:
        return (n.get("role") or {}).get("value", "")

    @staticmethod
    def name(n: dict) -> str:
        return str((n.get("name") or {}).get("value", "")).strip()

    @staticmethod
    def prop(n: dict, key: str):
        for p in n.get("properties", []):
            if p["name"] == key:
                value = p["value"].get("value")
                # Chromium sends some booleans (aria-busy) as 0/1.
                return bool(value) if p["value"].get("type") == "boolean" else value
        return None

    def exposed(self) -> list[dict]:
        return [n for n in self.nodes if not n.get("ignored")]

    def ancestors(self, n: dict) -> list[dict]:
        out = []
        while (n := self.by_id.get(n.get("parentId"))) is not None:
            out.append(n)
        return out

    def text(self, n: dict) -> str:
        """The text a screen reader reads inside `n` (its exposed StaticText nodes)."""
        parts = []

        def walk(node):
            # An ignored node (a wrapper) can still hold exposed text: go through it.
            if self.role(node) == "StaticText" and not node.get("ignored"):
                parts.append(self.name(node))
            for cid in node.get("childIds", []):
                if cid in self.by_id:
                    walk(self.by_id[cid])
        walk(n)
        return "".join(parts)


class A11y:
    """The page as assistive technology sees it, through a CDP session."""

    def __init__(self, page):
        self.cdp = page.context.new_cdp_session(page)

    def tree(self) -> AXTree:
        return AXTree(self.cdp.send("Accessibility.getFullAXTree")["nodes"])

    def dom_ids(self, expression: str) -> list[tuple[int, str]]:
        """(backendNodeId, short description) of each element in the array `expression` evaluates to."""
        arr = self.cdp.send("Runtime.evaluate", {"expression": expression})["result"]
        try:
            props = self.cdp.send("Runtime.getProperties", {"objectId": arr["objectId"], "ownProperties": True})
            items = sorted((int(p["name"]), p["value"]["objectId"]) for p in props["result"] if p["name"].isdigit())
            out = []
            for _, oid in items:
                node = self.cdp.send("DOM.describeNode", {"objectId": oid})["node"]
                attrs = node.get("attributes", [])
                desc = node["localName"] + "".join(f' {k}="{v[:50]}"' for k, v in zip(attrs[::2], attrs[1::2])
                                                     if k in ("class", "id", "aria-label", "type", "href"))
                out.append((node["backendNodeId"], f"<{desc}>"))
            return out
        finally:
            self.cdp.send("Runtime.releaseObject", {"objectId": arr["objectId"]})

    def node(self, tree: AXTree, selector: str) -> dict:
        """The AX node of the one element `selector` matches (last one when several)."""
        ids = self.dom_ids(f"[...document.querySelectorAll({selector!r})].slice(-1)")
        assert ids, f"nothing matches {selector}"
        n = tree.by_dom.get(ids[0][0])
        assert n is not None, f"{selector} is not in the accessibility tree"
        return n

    def interactive(self, root: str = "document") -> list[tuple[int, str]]:
        """The interactive elements that are rendered (on screen or scrolled to; not display:none,
        not in a closed <details>, not visibility:hidden). Opacity 0 counts as shown: such
        controls (message actions) still take keyboard focus."""
        return self.dom_ids(f"""[...({root}).querySelectorAll({INTERACTIVE!r})]
            .filter((el) => el.checkVisibility({{visibilityProperty: true}}))""")


def controls_and_tree(a11y: A11y, root: str = "document") -> tuple[list[tuple[int, str]], AXTree]:
    """The rendered controls and a tree snapshot that holds them all. The page may redraw
    between the two reads (the chat list is read again when a turn ends): then read again."""
    for _ in range(5):
        controls = a11y.interactive(root)
        tree = a11y.tree()
        if all(bid in tree.by_dom for bid, _ in controls) and controls == a11y.interactive(root):
            return controls, tree
    raise AssertionError("the page kept changing under the accessibility snapshot")


def unnamed_controls(a11y: A11y, root: str = "document") -> tuple[list[str], AXTree]:
    """Every rendered control must be exposed with a real role and a name that has a word in
    it ("✕" or "⋯" alone is not a name), inside a landmark or dialog a screen reader can jump to.
    Returns the problems and the tree they were found in."""
    controls, tree = controls_and_tree(a11y, root)
    problems = []
    for bid, desc in controls:
        n = tree.by_dom[bid]
        if n.get("ignored"):
            problems.append(f"{desc}: hidden from assistive technology but operable")
            continue
        role, name = tree.role(n), tree.name(n)
        if role in NO_ROLE:
            problems.append(f"{desc}: role {role!r} is not a control")
        if not re.search(r"[^\W\d_]", name):
            problems.append(f"{desc}: accessible name {name!r}")
        if not any(tree.role(a) in LANDMARKS for a in tree.ancestors(n)):
            problems.append(f"{desc}: not inside any landmark")
    return problems, tree


def assert_structure(a11y: A11y, navs: tuple[str, ...] = ("Chats",)) -> AXTree:
    """Landmarks, one h1, and names on every control: what a screen reader user navigates by."""
    problems, tree = unnamed_controls(a11y)
    assert problems == []
    exposed = tree.exposed()
    roles = [tree.role(n) for n in exposed]
    assert roles.count("main") == 1, roles
    assert "complementary" in roles  # the sidebar
    assert [tree.name(n) for n in exposed if tree.role(n) == "navigation"] == list(navs)
    h1 = [n for n in exposed if tree.role(n) == "heading" and tree.prop(n, "level") == 1]
    assert len(h1) == 1 and tree.name(h1[0]), [tree.name(n) for n in h1]
    return tree


def assert_modal_dialog(a11y: A11y, name: str) -> None:
    """An open sheet is a named modal dialog, and the page behind it is gone for a screen reader."""
    problems, tree = unnamed_controls(a11y, "document.querySelector('dialog[open]')")
    assert problems == []
    dialogs = [n for n in tree.exposed() if tree.role(n) == "dialog"]
    assert [tree.name(n) for n in dialogs] == [name]
    assert tree.prop(dialogs[0], "modal") is True
    dialog_ids = {dialogs[0]["nodeId"]}
    outside = [n for n in tree.exposed()
               if tree.role(n) in ("button", "textbox", "link", "combobox")
               and not any(a["nodeId"] in dialog_ids for a in tree.ancestors(n))]
    assert outside == [], [f"{tree.role(n)} {tree.name(n)!r}" for n in outside]


# --- helpers ------------------------------------------------------------------------

def reply(page):
    return page.locator("article.msg.assistant").last


def start_tool_turn(page, setup, title: str) -> None:
    """Open a chat and send a message whose reply thinks, streams (parked mid-way), then asks to
    run the guarded tool; after Allow it ends with a short text. Returns with the reply parked."""
    chat = setup.chat(title=title)
    setup.fake.enqueue([S.reasoning("Let me think. "), S.text("Checking with "), S.hang(), S.text("a tool."),
                        S.tool_call(0, "call_1", "guarded", '{"text": "hi"}')],
                       S.reply("The tool said hi."))
    open_chat(page, setup.server, chat, title)
    send(page, "Use the guarded tool")
    setup.fake.wait_hanging()
    expect(reply(page).locator(".msg-body")).to_have_text(re.compile("Checking with"))


# --- 1. the first-run screen -----------------------------------------------------------

def test_first_run_is_named_and_its_errors_are_announced(page, start_server, fake):
    server = start_server({"NUMI_PROBE_PORTS": f"Fake={fake.port}"})
    sign_in(page, server)
    expect(page.get_by_role("button", name="Use this")).to_be_visible()
    a11y = A11y(page)
    assert_structure(a11y)

    # A field the server refuses: its message is an alert, tied to the field, which is marked invalid.
    form = page.locator("form.provider-form")
    form.get_by_label("Kind").select_option("openai_compatible")
    form.get_by_label("Name").fill("Somewhere")
    form.get_by_role("button", name="Connect").click()
    message = "An OpenAI-compatible server needs its API root"
    expect(form.get_by_role("alert").filter(has_text=message)).to_be_visible()
    tree = a11y.tree()
    field = a11y.node(tree, "form.provider-form input[type=url]")
    assert message in str((field.get("description") or {}).get("value", ""))
    assert tree.prop(field, "invalid") == "true"
    # The form's own summary is a polite status, not a second alert.
    expect(form.get_by_role("status")).to_have_text("Check the fields above.")
    assert_structure(a11y)

    # At 200 % zoom the screen reflows into one column (layout depends on the CSS width
    # only; the zoom test below also emulates the pixel ratio).
    page.set_viewport_size({"width": 640, "height": 400})
    expect(page.get_by_role("navigation", name="Chats")).to_be_hidden()
    assert_fits(page, composer=False)
    expect(form.get_by_role("button", name="Connect")).to_be_visible()


# --- 2. a streamed reply: live region, reasoning, tool row, approval card ---------------

def test_streaming_reply_is_announced_once_and_everything_is_named(page, setup):
    start_tool_turn(page, setup, "A11y stream")
    a11y = A11y(page)
    tree = assert_structure(a11y)
    body = a11y.node(tree, "article.msg.assistant .msg-body")
    # Polite, and busy while tokens arrive: read once when done, not token by token.
    assert tree.prop(body, "live") == "polite"
    assert tree.prop(body, "busy") is True
    # Nothing around it is live as well (that would read every token anyway), and the
    # blinking cursor drawn after the text is decoration, not text.
    assert [tree.prop(a, "live") for a in tree.ancestors(body) if tree.prop(a, "live")] == []
    assert tree.text(body) == "Checking with"

    setup.fake.release()
    card = page.get_by_role("group", name="Approval needed for guarded")
    expect(card).to_be_visible()
    expect(page.locator("details.tool-call")).to_have_attribute("data-state", "wait")
    tree = assert_structure(a11y)
    # The turn now waits for the person: that is announced, it does not just appear.
    title = a11y.node(tree, ".approval .approval-title")
    assert any(tree.prop(n, "live") in ("assertive", "polite") for n in [title, *tree.ancestors(title)])
    row = a11y.node(tree, "details.tool-call summary")
    assert re.search(r"guarded.*waiting for you", tree.name(row))
    reasoning = a11y.node(tree, "details.reasoning summary")
    assert tree.name(reasoning)

    card.get_by_role("button", name="Allow once").click()
    expect(reply(page)).to_have_attribute("data-status", "complete")
    expect(reply(page).locator(".msg-body")).to_have_text("The tool said hi.")
    expect(page.get_by_role("button", name="Regenerate this reply").last).to_be_visible()
    tree = assert_structure(a11y)
    for body_id, _ in a11y.dom_ids("[...document.querySelectorAll('article.msg.assistant .msg-body')]"):
        node = tree.by_dom[body_id]
        assert tree.prop(node, "live") == "polite" and not tree.prop(node, "busy")

    # Short notes (and the errors of actions, such as a failed save) are toasts: a polite status.
    reply(page).get_by_role("button", name="Copy reply").click()
    expect(page.get_by_role("status").filter(has_text="Copied.")).to_be_visible()
    problems, tree = unnamed_controls(a11y)
    assert problems == []
    region = a11y.node(tree, ".toasts")
    assert tree.role(region) == "status" and tree.prop(region, "live") == "polite"


# --- 3. a new chat, dialogs, settings ------------------------------------------------

def test_new_chat_dialogs_and_settings_are_named(page, setup):
    setup.chat(title="A11y dialogs")
    sign_in(page, setup.server)
    expect(page.get_by_role("heading", name="What's on your mind?")).to_be_visible()
    expect(page.get_by_role("textbox", name="Message")).to_be_focused()
    a11y = A11y(page)
    assert_structure(a11y)

    page.evaluate("document.activeElement.blur()")  # "?" types in a text field; outside one it opens the sheet
    page.keyboard.press("?")
    expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_visible()
    assert_modal_dialog(a11y, "Keyboard shortcuts")
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)

    page.get_by_role("link", name="A11y dialogs").click()
    wait_chat_ready(page, "A11y dialogs")
    page.get_by_role("button", name=re.compile("^Chat settings")).click()
    expect(page.get_by_role("dialog", name="Chat settings")).to_be_visible()
    assert_modal_dialog(a11y, "Chat settings")
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)

    page.keyboard.press("Control+,")
    expect(page.get_by_role("heading", name="Settings", level=1)).to_be_visible()
    page.locator("details.card summary", has_text="Add a provider").click()
    expect(page.get_by_label("API address")).to_be_visible()
    assert_structure(a11y, navs=("Chats", "Settings sections"))


# --- 4. keyboard only ---------------------------------------------------------------

# Each Tab stop: remember it and compare how it looks focused and not. The indicator may
# be drawn by the element or a wrapper (the message box rings its whole box through
# :focus-within), so two ancestors count too. Stops are remembered by element (to see
# the walk come round) and by tag, label and address, which survive a redraw of the
# chat list (the list is redrawn when a chat's row changes, at times a test cannot see).
WALK_START = """() => {
  window.__seen = new Set();
  window.__seenKeys = new Set();
  window.__key = (el) =>
    [el.tagName, el.getAttribute("aria-label") || el.textContent.trim(), el.getAttribute("href") || ""].join("|");
}"""
TAB_STOP = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const first = !window.__seen.has(el);
  window.__seen.add(el);
  window.__seenKeys.add(window.__key(el));
  const look = () => [el, el.parentElement, el.parentElement?.parentElement].filter(Boolean).map((x) => {
    const s = getComputedStyle(x);
    const ring = s.outlineStyle !== "none" && parseFloat(s.outlineWidth) >= 1;
    return {outline: ring ? `${s.outlineStyle} ${s.outlineWidth} ${s.outlineColor}` : "",
            shadow: s.boxShadow === "none" ? "" : s.boxShadow, border: s.borderColor};
  });
  const focused = look();
  const visible = el.matches(":focus-visible");
  el.blur();
  const plain = look();
  el.focus();
  const r = el.getBoundingClientRect();
  const onScreen = r.width > 0 && r.height > 0 && r.right > 0 && r.bottom > 0
    && r.left < innerWidth && r.top < innerHeight;
  const shown = focused.some((f, i) => (f.outline || f.shadow) && JSON.stringify(f) !== JSON.stringify(plain[i]));
  // A ring drawn outside the element is cut where an ancestor clips its painting for good
  // (overflow hidden, paint containment, content-visibility: auto). Scrolling boxes are
  // left out: scrolling shows what they hide.
  let clippedBy = "";
  const own = getComputedStyle(el);
  if (own.outlineStyle !== "none") {
    const grow = parseFloat(own.outlineOffset) + parseFloat(own.outlineWidth);
    for (let x = el.parentElement; x && !clippedBy; x = x.parentElement) {
      const s = getComputedStyle(x);
      const clips = [s.overflowX, s.overflowY].some((o) => o === "hidden" || o === "clip")
        || /paint|strict|content/.test(s.contain) || s.contentVisibility === "auto";
      if (!clips) continue;
      const b = x.getBoundingClientRect();
      const inside = r.left - grow >= b.left + parseFloat(s.borderLeftWidth) - 0.5
        && r.top - grow >= b.top + parseFloat(s.borderTopWidth) - 0.5
        && r.right + grow <= b.right - parseFloat(s.borderRightWidth) + 0.5
        && r.bottom + grow <= b.bottom - parseFloat(s.borderBottomWidth) + 0.5;
      if (!inside) clippedBy = x.outerHTML.slice(0, 60);
    }
  }
  return {first, visible, shown, onScreen, clippedBy, still: document.activeElement === el,
          html: el.outerHTML.slice(0, 100)};
}"""


def tab_walk(page, limit: int = 80) -> list[dict]:
    """Press Tab until the focus comes round to an element seen before; return each stop."""
    page.evaluate(WALK_START)
    stops = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        stop = page.evaluate(TAB_STOP)
        if stop is None:
            continue  # the browser's own UI, between the page's last control and its first
        if not stop["first"]:
            return stops
        stops.append(stop)
    raise AssertionError(f"Tab did not come round in {limit} presses")


def reached(locator) -> bool:
    """Whether the last walk stopped on this control (or its twin after a redraw)."""
    return locator.evaluate("(el) => window.__seenKeys.has(window.__key(el))")


def assert_focus_shows(stops: list[dict]) -> None:
    for s in stops:
        assert s["still"], s
        assert s["visible"] and s["shown"], f"no visible focus indicator: {s['html']}"
        assert s["onScreen"], f"focused but off screen: {s['html']}"
        assert not s["clippedBy"], f"focus ring cut off by {s['clippedBy']}: {s['html']}"


def tab_to(page, locator, limit: int = 60) -> None:
    for _ in range(limit):
        if locator.evaluate("(el) => el === document.activeElement"):
            return
        page.keyboard.press("Tab")
    raise AssertionError("Tab never reached the control")


def test_keyboard_reaches_everything_with_a_visible_focus(page, setup):
    setup.chat(title="Another chat")
    start_tool_turn(page, setup, "A11y keys")
    setup.fake.release()
    expect(page.get_by_role("group", name="Approval needed for guarded")).to_be_visible()

    stops = tab_walk(page)
    assert_focus_shows(stops)
    for control in [page.get_by_role("textbox", name="Message"),
                    page.get_by_role("link", name="A11y keys"),
                    page.get_by_role("button", name=re.compile("^New chat")),
                    page.get_by_role("button", name=re.compile("^Settings")),
                    page.get_by_role("button", name=re.compile("^Model for this chat")),
                    page.get_by_role("button", name=re.compile("^Chat settings")),
                    page.get_by_role("button", name="Copy message"),
                    page.get_by_role("button", name="Allow once"),
                    page.get_by_role("button", name="Always allow"),
                    page.get_by_role("button", name="Deny…")]:
        assert reached(control), f"Tab never reaches {control}"
    # One row of the chat list is in the Tab order; the arrows reach the others.
    assert not reached(page.get_by_role("link", name="Another chat"))

    # Answer the approval from the keyboard, then walk the finished chat.
    tab_to(page, page.get_by_role("button", name="Allow once"))
    page.keyboard.press("Enter")
    expect(reply(page)).to_have_attribute("data-status", "complete")
    expect(page.get_by_role("button", name="Regenerate this reply").last).to_be_visible()
    stops = tab_walk(page)
    assert_focus_shows(stops)
    for control in [page.get_by_role("button", name="Copy message"),
                    page.get_by_role("button", name="Edit this message"),
                    page.get_by_role("button", name="Copy reply").last,
                    page.get_by_role("button", name="Regenerate this reply").last,
                    page.locator("details.tool-call summary"),
                    page.locator("details.reasoning summary").first]:
        assert reached(control), f"Tab never reaches {control}"


# --- 5. 200 % zoom --------------------------------------------------------------------

def test_readable_at_200_percent_zoom(browser, setup):
    # Browser zoom at 200 % in a 1280×800 window lays the page out in 640×400 CSS pixels
    # with devicePixelRatio 2: that is what this context emulates, so media queries and
    # reflow behave as they do when zoomed. (CDP Emulation.setPageScaleFactor would be
    # pinch-zoom instead: it magnifies without reflowing, so it tests nothing here.)
    ctx = browser.new_context(viewport={"width": 640, "height": 400}, device_scale_factor=2)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        title = "A chat with a title long enough to need more than this narrow window"
        chat = setup.chat(title=title)
        # Long words, a wide table and a long code line: what could push the column wider.
        setup.fake.enqueue([S.text("A long line: " + "word " * 80 + "\n\n| a | b |\n|---|---|\n| " + "cell " * 30
                                   + "| x |\n\n```\n" + "x" * 300 + "\n```\n"), S.hang(), S.text("Done.")])
        open_chat(page, setup.server, chat, title)
        assert page.evaluate("[innerWidth, devicePixelRatio]") == [640, 2]
        send(page, "Hello")
        # While it runs, Stop sits beside Queue and the message box is at its narrowest.
        setup.fake.wait_hanging()
        expect(page.get_by_role("button", name=re.compile("^Stop"))).to_be_in_viewport(ratio=1)
        assert_fits(page)
        setup.fake.release()
        expect(reply(page)).to_have_attribute("data-status", "complete")
        assert_fits(page)
        for control in (page.get_by_role("button", name=re.compile("^Model for this chat")),
                        page.get_by_role("button", name=re.compile("^Chat settings"))):
            expect(control).to_be_in_viewport(ratio=1)

        # The sidebar is a drawer: out of sight and out of the Tab order until its toggle opens it.
        nav = page.get_by_role("navigation", name="Chats")
        expect(nav).to_be_hidden()
        stops = tab_walk(page)
        assert_focus_shows(stops)
        assert not reached(page.get_by_role("button", name=re.compile("^New chat"), include_hidden=True))
        toggle = page.get_by_role("button", name="Show chats")
        assert reached(toggle)
        tab_to(page, toggle)
        page.keyboard.press("Enter")
        expect(nav).to_be_visible()
        assert page.evaluate("document.getElementById('sidebar').contains(document.activeElement)")
        expect(page.locator("#sidebar")).to_be_in_viewport(ratio=1)  # once it has slid in
        # Esc closes it; the focus does not stay behind in the hidden drawer.
        page.keyboard.press("Escape")
        expect(nav).to_be_hidden()
        expect(page.get_by_role("textbox", name="Message")).to_be_focused()

        # Settings reflow too.
        page.keyboard.press("Control+,")
        expect(page.get_by_role("heading", name="Settings", level=1)).to_be_visible()
        assert_fits(page, composer=False)
        expect(page.get_by_role("button", name="Close settings")).to_be_in_viewport()
    finally:
        ctx.close()
    assert not errors, errors


def assert_fits(page, composer: bool = True) -> None:
    """No horizontal scrolling of the page or the main column; the message box and Send in view."""
    widths = page.evaluate("""() => [...document.querySelectorAll("html, body, .scroller")]
        .map((el) => [el.className || el.tagName, el.scrollWidth, el.clientWidth])""")
    assert all(sw <= cw for _, sw, cw in widths), widths
    if composer:
        for control in (page.get_by_role("textbox", name="Message"),
                        page.get_by_role("button", name=re.compile("^(Send|Queue) message"))):
            expect(control).to_be_in_viewport(ratio=1)
        # The hint in the empty box is not cut off either: its height follows the width. (The
        # resize observer that fits it runs in the same frame as the visibility checks above.)
        box = page.get_by_role("textbox", name="Message")
        expect(box).to_have_value("")
        heights = box.evaluate("(el) => [el.scrollHeight, el.clientHeight]")
        assert heights[0] <= heights[1] + 1, f"the placeholder is cut off: {heights}"


# --- 6. contrast ------------------------------------------------------------------------

# The text colour and the colour behind it, composited over the ancestors' backgrounds and
# with the ancestors' opacity applied to the text (the way it is painted).
COLOURS = """([sel, pseudo]) => {
  const el = [...document.querySelectorAll(sel)].pop();
  if (!el) return null;
  const parse = (c) => {
    const m = c.match(/[\\d.]+/g).map(Number);
    return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1];
  };
  const over = (top, below) => [0, 1, 2].map((i) => top[i] * top[3] + below[i] * (1 - top[3])).concat(1);
  const layers = [];
  let opacity = 1;
  for (let x = el; x; x = x.parentElement) {
    const s = getComputedStyle(x);
    opacity *= Number(s.opacity);
    const bg = parse(s.backgroundColor);
    if (bg[3] > 0) layers.push(bg);
  }
  let bg = [255, 255, 255, 1];
  for (const layer of layers.reverse()) bg = over(layer, bg);
  const fg = parse(getComputedStyle(el, pseudo || null).color);
  fg[3] *= opacity;
  return {fg: over(fg, bg), bg, text: (pseudo ? el.placeholder : el.textContent).trim().slice(0, 40)};
}"""


SETTLED = """() => Promise.allSettled(document.getAnimations()
  .filter((a) => a instanceof CSSTransition).map((a) => a.finished))"""


def contrast(fg, bg) -> float:
    def lum(c):
        ch = [v / 255 for v in c[:3]]
        ch = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in ch]
        return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2]
    hi, lo = sorted((lum(fg), lum(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def low_contrast(page, selectors) -> list[str]:
    # Colours are read once transitions end: mid-fade (the message actions' opacity as the last
    # message changes) is not what a person reads.
    page.evaluate(SETTLED)
    out = []
    for sel in selectors:
        pseudo = "::placeholder" if sel.endswith("::placeholder") else ""
        c = page.evaluate(COLOURS, [sel.removesuffix("::placeholder"), pseudo])
        assert c is not None, f"nothing matches {sel}"
        ratio = contrast(c["fg"], c["bg"])
        if ratio < 4.5:
            out.append(f"{sel} ({c['text']!r}): {ratio:.2f}")
    return out


def test_text_contrast_in_light_and_dark(page, setup):
    sign_in(page, setup.server)
    empty = [".empty h2", ".empty .hint", ".composer-input::placeholder", ".sidebar .list-empty",
             ".sidebar-bottom button", ".brand"]
    streaming = [".chat-title", ".msg.user .msg-body", ".msg.assistant .msg-body", ".msg.assistant .msg-meta",
                 ".msg-actions button", ".tool-call .tool-name", ".tool-call .tool-state",
                 ".reasoning summary", ".stop-btn", ".send-btn", ".sidebar .chat-name",
                 ".model-picker-btn .model-name"]
    settings = [".settings-body .hint", ".settings-body h2", ".field label", ".chip.ok", ".card button.ghost"]

    def check(what, selectors):
        bad = []
        for system, other in (("light", "dark"), ("dark", "light")):
            page.emulate_media(color_scheme=system)
            bad += [f"system {system}: {x}" for x in low_contrast(page, selectors)]
            # The other theme picked in the app (Ctrl+Shift+L: stored, [data-theme] on <html>)
            # is a second copy of the colours in app.css: check it too.
            page.keyboard.press("Control+Shift+L")
            expect(page.locator("html")).to_have_attribute("data-theme", other)
            bad += [f"{other} chosen over system {system}: {x}" for x in low_contrast(page, selectors)]
            # Back to following the system, as Settings' "Follow the system" does (theme.js).
            page.evaluate("localStorage.removeItem('numi.theme'); delete document.documentElement.dataset.theme")
        page.emulate_media(color_scheme="light")
        assert bad == [], f"{what}:\n" + "\n".join(bad)

    expect(page.get_by_role("heading", name="What's on your mind?")).to_be_visible()
    check("new chat", empty)

    chat = setup.chat(title="Contrast chat")
    # A tool that ran (its ok badge), then a reply parked mid-stream (Stop shown).
    setup.fake.enqueue([S.reasoning("Hmm. "), S.tool_call(0, "call_1", "upper", '{"text": "hi"}')],
                       [S.text("The tool said HI. "), S.hang(), S.text("Done.")])
    open_chat(page, setup.server, chat, "Contrast chat")
    send(page, "Shout hi")
    setup.fake.wait_hanging()
    expect(page.locator("details.tool-call")).to_have_attribute("data-state", "ok")
    expect(page.locator(".msg.assistant .msg-body").last).to_contain_text("The tool said HI.")
    expect(page.locator(".stop-btn")).to_be_visible()
    check("streaming chat", streaming)
    setup.fake.release()
    expect(reply(page)).to_have_attribute("data-status", "complete")

    page.keyboard.press("Control+,")
    expect(page.locator(".settings-body .hint").first).to_be_visible()
    check("settings", settings)
