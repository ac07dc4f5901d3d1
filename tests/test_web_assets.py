"""Serving web/: a versioned, immutable copy of every file, and a page that names it."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from flask import Flask

from backend.web_assets import BUNDLE_DIR, BUNDLE_MANIFEST, IMMUTABLE, WebAssets, init_app, source_hash

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
    # The start graph is preloaded (web/app's modules, or the bundle's chunks when the
    # server found an up-to-date web/.app-bundle); never what loads with import().
    assert preloads
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


def test_web_apps_own_start_graph_is_preloaded_without_a_bundle():
    html = WebAssets(WEB, bundle=False).index_html
    preloads = re.findall(r'<link rel="modulepreload" href="/v/[0-9a-f]{12}/([^"]+)">', html)
    for module in ("app/views/chat.js", "js/reducer.js", "app/stream-render.js"):
        assert module in preloads, module
    for lazy in ("app/views/settings.js", "js/markdown.js", "vendor/marked/marked.esm.js", "app/early.js"):
        assert lazy not in preloads, lazy


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
    # An edit that keeps the size is seen too (what a process made before is kept by size and time).
    css = web / "styles" / "app.css"
    css.write_text(css.read_text().replace("}", "]", 1))
    assert WebAssets(web).version not in (before.version, after.version)


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


# --- the start bundle (build/web_bundle.py writes it; these write a small one by hand) ---

def small_web(tmp_path) -> Path:
    """A web/ with an entry importing one module, a worker and a vendored file."""
    web = tmp_path / "web"
    (web / "app" / "views").mkdir(parents=True)
    (web / "vendor").mkdir()
    (web / "index.html").write_text('<head><script type="module" src="{{ASSETS}}/app/main.js"></script><!--{{PRELOAD}}--></head>')
    (web / "app" / "main.js").write_text('import { a } from "./views/a.js";\nconsole.log("modules", a);\n')
    (web / "app" / "views" / "a.js").write_text("export const a = 1;\n")
    (web / "app" / "worker.js").write_text("// the worker, never bundled\n")
    (web / "vendor" / "lib.js").write_text("export default 2;\n")
    return web


def write_bundle(web: Path, source: str) -> None:
    bundle = web / BUNDLE_DIR
    bundle.mkdir()
    (bundle / "main.js").write_text('import { a } from "./chunk-A1.js";\nconsole.log("bundle", a);\n')
    (bundle / "chunk-A1.js").write_text("export const a = 1;\n")
    (bundle / BUNDLE_MANIFEST).write_text(json.dumps({"source": source}))


def client(web: Path, bundle: bool = True):
    app = Flask(__name__)
    init_app(app, web, bundle)
    return app.test_client(), app.extensions["numi_assets"]


def test_a_bundle_made_from_these_files_is_served_in_place_of_app(tmp_path):
    web = small_web(tmp_path)
    unbundled = WebAssets(web).version
    write_bundle(web, source_hash(web))
    http, assets = client(web)
    assert assets.bundle == web / BUNDLE_DIR
    # The bundle is not part of the sources' hash, but it is part of the version served.
    assert source_hash(web) == unbundled and assets.version != unbundled
    p = assets.prefix
    assert re.findall(r'rel="modulepreload" href="([^"]+)"', assets.index_html) == [f"{p}/app/chunk-A1.js"]
    main = http.get(f"{p}/app/main.js")
    assert main.status_code == 200 and b"bundle" in main.data and main.headers["Cache-Control"] == IMMUTABLE
    assert http.get(f"{p}/app/chunk-A1.js").status_code == 200
    # What the bundle does not hold is web/'s own file.
    assert http.get(f"{p}/app/worker.js").data == b"// the worker, never bundled\n"
    assert http.get(f"{p}/vendor/lib.js").status_code == 200
    assert http.get(f"{p}/app/views/a.js").status_code == 200
    # No way out of either folder.
    assert http.get(f"{p}/app/../../pyproject.toml").status_code == 404
    assert http.get(f"{p}/app/%2e%2e/%2e%2e/pyproject.toml").status_code == 404
    # NUMI_WEB_BUNDLE=0: the modules as they are.
    http0, off = client(web, bundle=False)
    assert off.bundle is None and off.version == unbundled
    assert b"modules" in http0.get(f"{off.prefix}/app/main.js").data


def test_a_bundle_made_from_other_files_is_never_served(tmp_path):
    web = small_web(tmp_path)
    write_bundle(web, source_hash(web))
    (web / "app" / "views" / "a.js").write_text("export const a = 3; // edited after the bundle\n")
    http, assets = client(web)
    assert assets.bundle is None
    assert b"modules" in http.get(f"{assets.prefix}/app/main.js").data
    assert re.findall(r'rel="modulepreload" href="[^"]+/(app/[^"]+)"', assets.index_html) == ["app/views/a.js"]
    # A manifest that cannot be read counts as no bundle.
    for manifest in ("not json", "[]", '{"esbuild": "0"}'):
        (web / BUNDLE_DIR / BUNDLE_MANIFEST).write_text(manifest)
        assert WebAssets(web).bundle is None, manifest

