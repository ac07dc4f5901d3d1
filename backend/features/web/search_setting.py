"""The `web_search` setting (CONTRACT §8): which search backend the model may use, and its key.

Stored as `{"backend", "url"}` in the settings table; a backend's key lives in the
keyring as `search:<backend>`, never on disk. Shown as `{"backend", "url"?, "has_key",
"needs_key", "problem"}`: `problem` is the sentence saying why no web_search is
offered although a backend is chosen (a key-based one without its key).
"""
from __future__ import annotations

from backend.keys import KeyStore
from backend.store import settings
from backend.tools.web_search import SearchBackend, make_backend

SETTING = "web_search"
DEFAULT = {"backend": None}
BACKENDS = ("searxng", "brave", "tavily")
KEYED = {"brave": "Brave Search", "tavily": "Tavily"}  # the backends that need an API key
KEY_KIND = "search"  # keyring username search:<backend>


def stored() -> dict:
    """The chosen backend as saved: {"backend": None} or {"backend", "url"?}."""
    value = settings.get_object(SETTING)
    backend = value.get("backend")
    if backend not in BACKENDS:
        return dict(DEFAULT)
    if backend == "searxng":
        url = value.get("url")
        return {"backend": backend, "url": url if isinstance(url, str) else None}
    return {"backend": backend}


def as_json(keys: KeyStore) -> dict:
    config = stored()
    backend = config["backend"]
    has_key = backend in KEYED and keys.has(backend, KEY_KIND)
    problem = None
    if backend in KEYED and not has_key:
        problem = (f"{KEYED[backend]} needs an API key: add it in Settings → Web search. Until then "
                   f"the model is offered no web search.")
    return {**config, "has_key": has_key, "needs_key": backend in KEYED, "problem": problem}


def backend(keys: KeyStore) -> SearchBackend | None:
    """The backend web_search runs on, or None when none is chosen or it cannot run yet."""
    config = stored()
    name = config["backend"]
    return make_backend(config, keys.get(name, KEY_KIND) if name in KEYED else None)
