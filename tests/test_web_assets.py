"""Serving web/: a versioned, immutable copy of every file, and a page that names it."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

from flask import Flask

from backend.web_assets import IMMUTABLE, WebAssets, init_app

WEB = Path(__file__).resolve().parent.parent / "web"


def test_page_names_the_versioned_prefix_and_preloads_the_module_graph(api):
    r = api.get("/", headers={"Authorization": ""})
    assert r.status == 200
    html = r.body.decode()
    assert r.headers["Cache-Control"] == "no-cache"
    assert "{{" not in html
    prefix = re.search(r'src="(/v/[0-9a-f]{12})/app/main\.js"', html).group(1)
    preloads = re.findall(r'<link rel="modulepreload" href="([^"]+)">', html)
    # The script that asks for the chat in the address runs first, before any module.
    assert html.index(f'<script src="{prefix}/app/early.js"></script>') < html.index('type="module"')
    assert f"{prefix}/app/early.js" not in preloads
    assert f"{prefix}/app/views/chat.js" in preloads
    assert f"{prefix}/js/reducer.js" in preloads
    # Loaded with import() after start, not preloaded: a screen and the Markdown libraries.
    for lazy in ("app/views/settings.js", "js/markdown.js", "vendor/marked/marked.esm.js"):
        assert f"{prefix}/{lazy}" not in preloads, lazy
    # Every preloaded module exists and is cached for good under its version.
    for href in preloads:
        f = api.get(href)
        assert f.status == 200, href
        assert f.headers["Cache-Control"] == IMMUTABLE, href
        assert "javascript" in f.headers["Content-Type"], href
    # The CSP of every answer still holds for the files.
    assert "script-src 'self'" in api.get(f"{prefix}/app/main.js").headers["Content-Security-Policy"]


def test_unversioned_and_stale_paths_are_served_but_never_cached_for_good(api):
    plain = api.get("/app/main.js")
    assert plain.status == 200 and plain.headers["Cache-Control"] == "no-cache"
    stale = api.get("/v/000000000000/app/main.js")
    assert stale.status == 200 and stale.headers["Cache-Control"] == "no-cache"
    assert stale.body == plain.body


def test_missing_files_and_escapes_are_404(api):
    prefix = re.search(r'(/v/[0-9a-f]{12})/', api.get("/").body.decode()).group(1)
    assert api.get(f"{prefix}/app/nope.js").status == 404
    assert api.get(f"{prefix}/../backend/app.py").status == 404
    assert api.get(f"{prefix}/%2e%2e/pyproject.toml").status == 404


def test_the_version_changes_with_any_file(tmp_path):
    web = tmp_path / "web"
    shutil.copytree(WEB, web)
    before = WebAssets(web)
    assert before.version == WebAssets(web).version  # stable for the same files
    (web / "app" / "dom.js").write_text((web / "app" / "dom.js").read_text() + "\n// changed\n")
    after = WebAssets(web)
    assert after.version != before.version
    assert f"/v/{after.version}/app/main.js" in after.index_html


def test_index_html_is_only_served_with_its_marks_filled(tmp_path):
    app = Flask(__name__)
    init_app(app, WEB)
    client = app.test_client()
    for path in ("/", "/index.html", "/v/x/index.html"):
        body = client.get(path).get_data(as_text=True)
        assert "{{" not in body and "modulepreload" in body, path


def test_the_picked_theme_is_written_into_the_page(api):
    assert 'data-theme' not in api.get("/").body.decode()
    dark = api.get("/", headers={"Cookie": "numi_theme=dark"}).body.decode()
    assert '<html data-theme="dark" lang="en">' in dark
    # Only the two themes: anything else in the cookie is ignored, never echoed.
    odd = api.get("/", headers={"Cookie": 'numi_theme="><script>'}).body.decode()
    assert "data-theme" not in odd and '"><script>' not in odd


def test_preloads_are_the_static_import_graph_of_the_entry_scripts(tmp_path):
    web = tmp_path / "web"
    (web / "app" / "views").mkdir(parents=True)
    (web / "js").mkdir()
    (web / "index.html").write_text('<head><!--{{PRELOAD}}--></head>')
    (web / "app" / "main.js").write_text(
        'import {\n  a,\n  b,\n} from "./views/a.js";\n'
        'const later = () => import("./views/later.js");\n'
        '// import { no } from "./commented.js" is not at the start of a line\n')
    (web / "app" / "views" / "a.js").write_text('export { b } from "../../js/b.js";\nexport const a = 1;\n')
    (web / "js" / "b.js").write_text('import { a } from "../app/views/a.js";\nexport const b = a;\n')  # a cycle
    (web / "app" / "views" / "later.js").write_text('import { zz } from "./only-later.js";\n')
    (web / "app" / "commented.js").write_text("")
    html = WebAssets(web).index_html
    preloads = re.findall(r'<link rel="modulepreload" href="/v/[0-9a-f]{12}/([^"]+)">', html)
    assert preloads == ["app/views/a.js", "js/b.js"]
