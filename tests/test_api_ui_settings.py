"""settings.ui over HTTP on a real server: the person's display choices (theme, recent models,
folded folders) are stored server-side, PATCH merges them, bad input is a 422 naming the field,
they outlive a restart, and the page a signed-in request gets carries the stored theme."""
from __future__ import annotations

from tests.numi_client import Api, ServerProcess
from tests.test_api_catalog import assert_invalid

DEFAULT = {"theme": "system", "recent_models": [], "folded_folders": []}


def test_defaults_merge_and_restart(tmp_path):
    data = tmp_path / "data"
    server = ServerProcess(data).start()
    try:
        api = server.api()
        assert api.get("/api/settings").body["ui"] == DEFAULT
        r = api.patch("/api/settings", {"ui": {"theme": "dark"}})
        assert r.status == 200 and r.body["ui"] == {**DEFAULT, "theme": "dark"}
        # A PATCH of one key keeps the others; repeats are dropped, order kept.
        api.patch("/api/settings", {"ui": {"recent_models": ["m2", "m1", "m2"]}})
        r = api.patch("/api/settings", {"ui": {"folded_folders": ["f1"]}})
        assert r.body["ui"] == {"theme": "dark", "recent_models": ["m2", "m1"], "folded_folders": ["f1"]}
    finally:
        server.stop()
    again = ServerProcess(data).start()
    try:
        assert again.api().get("/api/settings").body["ui"] == \
            {"theme": "dark", "recent_models": ["m2", "m1"], "folded_folders": ["f1"]}
    finally:
        again.stop()


def test_bad_input_is_422_and_changes_nothing(api):
    api.patch("/api/settings", {"ui": {"theme": "light"}})
    for body, field in [({"ui": "dark"}, "ui"), ({"ui": {"theme": "blue"}}, "ui.theme"),
                        ({"ui": {"colour": "red"}}, "ui.colour"), ({"ui": {"theme": None}}, "ui.theme"),
                        ({"ui": {"recent_models": "m1"}}, "ui.recent_models"),
                        ({"ui": {"recent_models": [1]}}, "ui.recent_models"),
                        ({"ui": {"recent_models": [""]}}, "ui.recent_models"),
                        ({"ui": {"recent_models": ["x" * 201]}}, "ui.recent_models"),
                        ({"ui": {"recent_models": [f"m{i}" for i in range(21)]}}, "ui.recent_models"),
                        ({"ui": {"folded_folders": [f"f{i}" for i in range(501)]}}, "ui.folded_folders")]:
        assert_invalid(api.patch("/api/settings", body), field)
    assert api.get("/api/settings").body["ui"] == {**DEFAULT, "theme": "light"}


def test_signed_in_page_carries_the_stored_theme(server):
    """The desktop window keeps no cookies across starts: the stored theme is in the page itself."""
    server.api().patch("/api/settings", {"ui": {"theme": "dark"}})
    page = Api(server.port, None)
    signed_in = page.get("/", headers={"Cookie": server.session_cookie()}).body.decode()
    assert '<html data-theme="dark" ' in signed_in
    # Without a sign-in the page holds no data: only the page's own cookie can pick a theme.
    assert "data-theme=" not in page.get("/").body.decode()
    assert '<html data-theme="light" ' in page.get("/", headers={"Cookie": "numi_theme=light"}).body.decode()
    # A stored pick beats a stale cookie (set by another window before the person changed it).
    both = f"{server.session_cookie()}; numi_theme=light"
    assert '<html data-theme="dark" ' in page.get("/", headers={"Cookie": both}).body.decode()
    server.api().patch("/api/settings", {"ui": {"theme": "system"}})
    assert "data-theme=" not in page.get("/", headers={"Cookie": server.session_cookie()}).body.decode()
