"""Serving web/: the page and its files, cached so that a reload costs no requests.

The UI is a graph of some thirty ES modules. Served plainly, every reload walks
that graph again, one round trip per level of imports, to revalidate files that
never change while the app runs. So every file is also served under
`/v/<version>/…`, where the version is a hash of the whole web/ folder: those
answers are cacheable forever (`immutable`), relative imports stay inside the
versioned prefix, and a new build gets a new prefix. index.html itself is never
cached; it names the current prefix and preloads the modules the page imports at
start (the static import graph of its entry scripts), so even a first load fetches
them in parallel instead of level by level. Modules loaded with `import()` (screens
a chat's first paint does not need, the Markdown libraries) are left to load later.

When web/.app-bundle holds a bundle of web/app made from exactly these files (its
manifest names their hash; build/web_bundle.py writes it), `app/…` is served from
there first: main.js and a few chunks instead of thirty modules. A bundle made from
other files is ignored, so an edited web/ is served as it is, never a stale copy.
"""
from __future__ import annotations

import hashlib
import json
import logging
import posixpath
import re
from pathlib import Path
from typing import Callable

from flask import Flask, Response, request, send_from_directory

log = logging.getLogger(__name__)

# Where index.html says these, the current `/v/<version>` prefix and the
# modulepreload links go.
ASSETS_MARK = "{{ASSETS}}"
PRELOAD_MARK = "<!--{{PRELOAD}}-->"
# The theme a person picked: written into the page, so it applies before the first paint
# without a blocking script. A signed-in request gets the stored choice (settings.ui.theme:
# the desktop window keeps no cookies across starts); otherwise this cookie, which
# web/app/theme.js writes too, is all there is.
THEME_COOKIE = "numi_theme"
THEMES = ("light", "dark")
# The module index.html loads; what it imports statically is preloaded. (app/early.js,
# which runs before it, is a classic script that imports nothing.)
ENTRY_MODULES = ("app/main.js",)
# `import … from "./x.js"` / `export … from "./x.js"` at the start of a line (the UI's
# modules write every static import that way; `import("…")` is dynamic and left out).
STATIC_IMPORT = re.compile(r'^(?:import|export)\b[^;"\']*?\bfrom\s*"(\.{1,2}/[^"]+)"', re.M)
IMMUTABLE = "public, max-age=31536000, immutable"
# web/app bundled (build/web_bundle.py): served under app/ when its manifest's source
# hash is that of the files beside it.
BUNDLE_DIR = ".app-bundle"
BUNDLE_MANIFEST = "manifest.json"
BUNDLED = "app/"


def _sources(web_dir: Path) -> list[Path]:
    """web/'s own files: everything but the bundle (and a bundle being written)."""
    return sorted(p for p in web_dir.rglob("*")
                  if p.is_file() and not p.relative_to(web_dir).parts[0].startswith(BUNDLE_DIR))


# Digests and pages already made in this process, keyed on the files' sizes and change times:
# what a process forked from one that served web/ (the test suite's fork server) starts with.
_digests: dict[tuple, str] = {}
_pages: dict[tuple, str] = {}


def _digest(root: Path, files: list[Path]) -> str:
    stats = ((p, p.stat()) for p in files)
    key = (root.as_posix(), tuple((p.as_posix(), st.st_mtime_ns, st.st_size) for p, st in stats))
    if key not in _digests:
        digest = hashlib.sha256()
        for path in files:
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
        _digests[key] = digest.hexdigest()[:12]
    return _digests[key]


def source_hash(web_dir: Path) -> str:
    return _digest(web_dir, _sources(web_dir))


def fresh_bundle(web_dir: Path, source: str) -> Path | None:
    """web/.app-bundle when its manifest says it was made from files of hash `source`."""
    bundle = web_dir / BUNDLE_DIR
    try:
        made_from = json.loads((bundle / BUNDLE_MANIFEST).read_text(encoding="utf-8"))["source"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return bundle if made_from == source else None


class WebAssets:
    def __init__(self, web_dir: Path, bundle: bool = True, stored_theme: Callable[[], str | None] | None = None):
        self.dir = web_dir
        # "light" / "dark" when a signed-in request's person picked one, else None (then the cookie decides).
        self.stored_theme = stored_theme or (lambda: None)
        source = source_hash(web_dir)
        self.bundle = fresh_bundle(web_dir, source) if bundle else None
        if bundle and not self.bundle and (web_dir / BUNDLE_DIR).is_dir():
            log.info("web/%s was not made from web/'s files; serving web/app as it is", BUNDLE_DIR)
        # A bundle changes what app/ serves, so it changes the version too.
        if self.bundle:
            both = source + _digest(self.bundle, sorted(p for p in self.bundle.rglob("*") if p.is_file()))
            self.version = hashlib.sha256(both.encode()).hexdigest()[:12]
        else:
            self.version = source
        self.prefix = f"/v/{self.version}"
        # The version hashes every file the page is made from (index.html, the modules, the bundle).
        page = (web_dir.as_posix(), self.version, self.bundle)
        if page not in _pages:
            _pages[page] = self._index()
        self.index_html = _pages[page]

    def _locate(self, name: str) -> tuple[Path, str]:
        """The folder and the name within it that serve `name` (a web/-relative path)."""
        if self.bundle and name.startswith(BUNDLED):
            inner = name[len(BUNDLED):]
            if ".." not in inner.split("/") and (self.bundle / inner).is_file():
                return self.bundle, inner
        return self.dir, name

    def _modules(self) -> list[str]:
        """The static import graph of the entry scripts, entries first (web/-relative paths)."""
        seen: list[str] = []
        todo = list(ENTRY_MODULES)
        while todo:
            name = todo.pop(0)
            folder, inner = self._locate(name)
            path = folder / inner
            if name in seen or name.startswith("../") or not path.is_file():
                continue
            seen.append(name)
            for spec in STATIC_IMPORT.findall(path.read_text(encoding="utf-8")):
                todo.append(posixpath.normpath(posixpath.join(posixpath.dirname(name), spec)))
        return seen

    def _index(self) -> str:
        html = (self.dir / "index.html").read_text(encoding="utf-8")
        # The entries have their own <script> tags.
        links = "\n  ".join(f'<link rel="modulepreload" href="{self.prefix}/{m}">'
                            for m in self._modules() if m not in ENTRY_MODULES)
        return html.replace(PRELOAD_MARK, links).replace(ASSETS_MARK, self.prefix)

    def page(self) -> Response:
        html = self.index_html
        theme = self.stored_theme() or request.cookies.get(THEME_COOKIE)
        if theme in THEMES:
            html = html.replace("<html ", f'<html data-theme="{theme}" ', 1)
        response = Response(html, mimetype="text/html")
        response.headers["Cache-Control"] = "no-cache"
        return response

    def versioned(self, version: str, name: str) -> Response:
        response = self.plain(name)
        # An old page asking for an old version gets today's file, which must not be
        # cached under the old name.
        if version == self.version:
            response.headers["Cache-Control"] = IMMUTABLE
        return response

    def plain(self, name: str) -> Response:
        if name == "index.html":
            return self.page()
        folder, inner = self._locate(name)
        response = send_from_directory(folder, inner, max_age=0)
        response.headers["Cache-Control"] = "no-cache"
        return response


def init_app(app: Flask, web_dir: Path, bundle: bool = True,
             stored_theme: Callable[[], str | None] | None = None) -> None:
    assets = WebAssets(web_dir, bundle, stored_theme)
    app.extensions["numi_assets"] = assets

    @app.get("/")
    def index():
        return assets.page()

    @app.get("/v/<version>/<path:name>")
    def versioned_file(version, name):
        return assets.versioned(version, name)

    @app.get("/<path:name>")
    def static_file(name):
        return assets.plain(name)
