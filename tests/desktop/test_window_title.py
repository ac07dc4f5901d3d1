"""The real window under Xvfb takes the page's title (the open chat's name), and its icon is Numi's logo."""
from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageChops, ImageStat

from tests.desktop.harness import Numi, find_window, mapped_window, wait_x, window_title
from tests.numi_client import Api


def titled(display: str, title: str):
    """The mapped window titled exactly `title`, or None."""
    found = mapped_window(display, lambda d, win: window_title(d, win) == title)
    return found["id"] if found else None


ROOT = Path(__file__).resolve().parents[2]


def window_icon(display: str, window_id: int) -> Image.Image:
    """The largest picture in the window's _NET_WM_ICON (what a panel or switcher shows)."""
    from Xlib import Xatom
    from Xlib import display as xdisplay

    d = xdisplay.Display(display)
    try:
        prop = d.create_resource_object("window", window_id).get_full_property(
            d.intern_atom("_NET_WM_ICON"), Xatom.CARDINAL)
        assert prop is not None, "the window has no icon"
        data, pictures, at = list(prop.value), [], 0
        while at + 2 <= len(data):
            w, h = data[at], data[at + 1]
            pictures.append((w, h, data[at + 2:at + 2 + w * h]))
            at += 2 + w * h
    finally:
        d.close()
    w, h, argb = max(pictures, key=lambda p: p[0] * p[1])
    img = Image.new("RGBA", (w, h))
    img.putdata([((v >> 16) & 255, (v >> 8) & 255, v & 255, (v >> 24) & 255) for v in argb])
    return img


def test_the_window_title_follows_the_open_chat(session, tmp_path):
    numi = Numi(session, tmp_path / "data")
    try:
        numi.wait_line(r"UI ready", 60)
        display = session.env["DISPLAY"]
        window = wait_x(lambda: titled(display, "Numi"), "no window titled Numi")
        # Its icon is the logo the page shows (desktop/assets, drawn from web/icons/numi.svg).
        icon = window_icon(display, window)
        logo = Image.open(ROOT / "desktop" / "assets" / "numi-256.png").convert("RGBA").resize(icon.size)
        diff = ImageStat.Stat(ImageChops.difference(icon, logo)).mean
        assert max(diff) < 8, diff
        # The logo's blue-to-green gradient beside and above the "N" (green ≥ 140 all along it).
        for x, y in ((40, 128), (128, 40), (216, 128)):
            assert icon.resize((256, 256)).getpixel((x, y))[1] >= 130, (x, y, icon.resize((256, 256)).getpixel((x, y)))
        info = numi.info
        api = Api(info["port"], info["token"])
        chat = api.post("/api/chats", {"title": "Trip to Lisbon"}).body["id"]
        # What a second launch (or a notification) does: show the window at this chat.
        assert api.post("/api/desktop/show", {"chat_id": chat}).status == 200
        wait_x(lambda: titled(display, "Trip to Lisbon — Numi"), "the window did not take the chat's name")
        # Another chat opened: the title follows again.
        other = api.post("/api/chats", {"title": "Tax return"}).body["id"]
        assert api.post("/api/desktop/show", {"chat_id": other}).status == 200
        wait_x(lambda: titled(display, "Tax return — Numi"), "the window did not follow the next chat")
        assert find_window(display) is not None  # the harness still finds it by the app's name
    finally:
        numi.kill()
