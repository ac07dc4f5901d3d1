"""The real window runs in private mode (its storage is gone at every start) and the server's
port changes: the theme picked in the window, the recent models and folded folders are kept
by the server and are there again after a restart on the same data dir."""
from PIL import Image, ImageStat

from tests.desktop.harness import Numi, find_window, press_keys, tray_click, tray_menu, wait_x
from tests.numi_client import Api


def _api(numi) -> Api:
    return Api(numi.info["port"], numi.info["token"])


def _brightness(session, name: str) -> float:
    """The mean grey level (0–255) of the window's screen."""
    return ImageStat.Stat(Image.open(session.screenshot(name)).convert("L")).mean[0]


def _quit(session, numi) -> None:
    bus, items = tray_menu(session.env, numi.proc.pid)
    tray_click(session.env, bus, items["Quit Numi"])
    assert numi.proc.wait(10) == 0


def test_choices_made_in_the_window_survive_a_restart(session, tmp_path):
    data = tmp_path / "data"
    numi = Numi(session, data)
    try:
        numi.wait_line(r"UI ready", 60)
        api = _api(numi)
        assert api.get("/api/settings").body["ui"]["theme"] == "system"
        before = _brightness(session, "choices-before.png")
        # The person switches the theme with the window's own shortcut (Ctrl+Shift+L).
        win = wait_x(lambda: find_window(session.env["DISPLAY"]), "no mapped window titled Numi")
        press_keys(session.env["DISPLAY"], win["id"], "Control_L", "Shift_L", "l")
        picked = wait_x(lambda: api.get("/api/settings").body["ui"]["theme"] != "system" and
                        api.get("/api/settings").body["ui"]["theme"], "the picked theme was not saved")
        # Recent models and folded folders as the page saves them (tests/e2e/test_ui_choices.py clicks them).
        folder = api.post("/api/folders", {"name": "Work"}).body["id"]
        assert api.patch("/api/settings", {"ui": {"folded_folders": [folder], "recent_models": ["m-1"]}}).status == 200
        _quit(session, numi)

        numi = Numi(session, data)
        numi.wait_line(r"UI ready", 60)
        assert _api(numi).get("/api/settings").body["ui"] == \
            {"theme": picked, "recent_models": ["m-1"], "folded_folders": [folder]}
        # The restarted window, with nothing in its storage, draws the picked theme.
        after = _brightness(session, "choices-after.png")
        if picked == "dark":
            assert after < before - 40 and after < 100, (before, after)
        else:
            assert after > before + 40 and after > 150, (before, after)
    finally:
        numi.kill()
