"""LazyBuildRule: routes match as werkzeug's own, and build the same URLs once asked to."""
from urllib.parse import unquote

from werkzeug.routing import Map, Rule

from backend.lazy_rules import LazyBuildRule

PATTERNS = ["/", "/api/chats/<chat_id>", "/api/chats/<chat_id>/messages/<int:message_id>",
            "/v/<version>/<path:name>", "/ws/<chat_id>"]


def adapters():
    plain = Map([Rule(p, endpoint=p) for p in PATTERNS]).bind("127.0.0.1")
    lazy = Map([LazyBuildRule(p, endpoint=p) for p in PATTERNS]).bind("127.0.0.1")
    return plain, lazy


def test_nothing_is_compiled_for_building_until_a_url_is_built():
    _, lazy = adapters()
    rule = next(r for r in lazy.map.iter_rules() if r.endpoint == "/api/chats/<chat_id>")
    assert rule._build_unknown.__qualname__.startswith("LazyBuildRule.")
    lazy.build(rule.endpoint, {"chat_id": "a"})  # with append_unknown, werkzeug's default
    assert not rule._build_unknown.__qualname__.startswith("LazyBuildRule.")  # compiled once, then kept
    assert rule._build.__qualname__.startswith("LazyBuildRule.")


def test_urls_built_and_matched_are_werkzeugs_own():
    plain, lazy = adapters()
    values = {"chat_id": "a b-ç", "message_id": 7, "version": "abc", "name": "app/x y.js"}
    for pattern in PATTERNS:
        args = {k: v for k, v in values.items() if f"<{k}>" in pattern or f":{k}>" in pattern}
        for extra in ({}, {"q": "zebra & co"}):  # unknown values go to the query string
            for _ in range(2):  # the first build compiles, the second uses what was compiled
                url = lazy.build(pattern, {**args, **extra})
                assert url == plain.build(pattern, {**args, **extra})
            assert lazy.build(pattern, args, append_unknown=False) == plain.build(pattern, args, append_unknown=False)
            path = unquote(url.split("?")[0])
            assert lazy.match(path) == plain.match(path) == (pattern, args)
