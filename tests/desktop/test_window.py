"""The real desktop app under Xvfb: window, sign-in, geometry, tray, single instance, quit."""
import json
import time

from PIL import Image

from tests.desktop.harness import Numi, close_until_closing, find_window, tray_click, tray_menu, wait_x
from tests.test_private_files import not_private


def test_window_loads_signed_in_ui_with_tray_and_one_instance(session, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    # Geometry remembered from an earlier run.
    (data / "desktop.json").write_text(json.dumps({"width": 900, "height": 640, "x": 40, "y": 30}))
    numi = Numi(session, data)
    try:
        # The window loads Numi's page signed in (the session cookie is in its store)...
        numi.wait_line(r"window loaded / .*\(signed in: yes\)", 60)
        # ...and the UI replaced its "Loading" placeholder.
        numi.wait_line(r"UI ready", 60)
        # The page's "ready" comes from its own DOM; WebKit's web process puts the frame on the X
        # screen a moment later (seconds, on a loaded machine), so the screen is read until it shows.
        deadline = time.monotonic() + 30
        while True:
            img = Image.open(session.screenshot("window.png")).convert("L")
            if len(img.getcolors(1 << 16) or []) > 8 or time.monotonic() > deadline:
                break
        assert len(img.getcolors(1 << 16) or []) > 8, "the screenshot is (nearly) one colour: nothing was drawn"

        win = find_window(session.env["DISPLAY"])
        assert win is not None, "no mapped window titled Numi"
        assert (win["width"], win["height"], win["x"], win["y"]) == (900, 640, 40, 30)

        # The launch token never shows up in what the app prints or logs.
        token = numi.info["token"]
        assert token not in numi.output()
        assert token not in (data / "logs" / "numi.log").read_text()

        # The tray icon exists, with its menu, as a tray host sees it over D-Bus.
        bus, items = tray_menu(session.env, numi.proc.pid)
        assert {"Open Numi", "New chat", "No replies running", "Quit Numi"} <= set(items)

        # A second launch on the same data dir shows the first one's window and exits 0.
        second = Numi(session, data)
        assert second.proc.wait(30) == 0
        assert "brought to the front" in second.output()
        numi.wait_line("another launch asked for the window")

        # "Keep in tray": closing the window with nothing running keeps Numi alive...
        mark = len(numi.lines)
        tray_click(session.env, bus, items["Keep Numi in the tray when the window closes"])
        numi.wait_line("keep in tray on", after=mark)
        # The click changed the menu in place: a rebuilt menu (new item ids) makes GTK drop the
        # window's delete events, and the close below would never arrive.
        assert tray_menu(session.env, numi.proc.pid)[1] == items
        close_until_closing(numi, session.env["DISPLAY"], after=mark)
        numi.wait_line(r"window closed to the tray \(0 replies running\)", after=mark)
        assert numi.proc.poll() is None
        wait_x(lambda: find_window(session.env["DISPLAY"]) is None, "the window did not go")
        # ...and the tray's Open brings it back.
        bus, items = tray_menu(session.env, numi.proc.pid)  # item ids change when the menu is rebuilt
        tray_click(session.env, bus, items["Open Numi"])
        numi.wait_line("window shown", after=mark)

        # Quit from the tray: clean exit well within 10 s, server.json removed, state kept.
        mark = len(numi.lines)
        bus, items = tray_menu(session.env, numi.proc.pid)
        tray_click(session.env, bus, items["Quit Numi"])
        assert numi.proc.wait(10) == 0
        assert not (data / "server.json").exists()
        saved = json.loads((data / "desktop.json").read_text())
        assert saved["keep_in_tray"] is True
        assert (saved["width"], saved["height"]) == (900, 640)
        # The data dir made readable before the start (desktop.json above) is private, and so is all it made.
        assert not_private(data) == []
    finally:
        numi.kill()


def test_no_display_falls_back_to_headless(session, tmp_path):
    """Without a display `numi` says why and runs as `numi --headless --open-browser`."""
    env = {k: v for k, v in session.env.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    session.env = {**env, "BROWSER": "true"}  # `true` stands in for the browser: it opens nothing
    numi = Numi(session, tmp_path / "data")
    try:
        numi.wait_line(r"No desktop window: no display .* Running headless")
        numi.wait_line(r"Numi is running at http://127\.0\.0\.1:\d+/")
        assert numi.terminate() < 10
        assert numi.proc.returncode == 0
    finally:
        numi.kill()
