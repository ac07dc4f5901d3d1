"""The `web_fetch` setting and what a turn may fetch on the person's own network.

`settings.web_fetch` is `{"allow_private": [origin, ...]}`: sites on this computer or a
private network the person trusts (an intranet wiki, a local docs server), each an exact
`scheme://host[:port]`. Any other such address is fetched only when the person typed that
exact URL in a message of the chat's active branch, or approved it on a card
(backend/tools/fetch_guard.py does the checking, on every hop).
"""
from __future__ import annotations

import re
from dataclasses import replace
from urllib.parse import urlsplit

from backend.core.tools import ToolRegistry, parse_arguments
from backend.store import history, settings
from backend.tools import fetch_guard
from backend.tools.fetch import NAME, fetch_tool

SETTING = "web_fetch"
# What an approval card says of a fetch into the person's own network.
LOCAL_REASON = ("This address is on this computer or your own network, where a page or a model should "
                "not reach by itself. Allow it only if you meant Numi to read it; a site you trust can "
                "be added in Settings → Web fetch.")
DEFAULTS: dict[str, list[str]] = {"allow_private": []}
MAX_ORIGINS = 100
_URL_IN_TEXT = re.compile(r"https?://[^\s<>\"'`]+", re.I)
_TRAILING = ".,;:!?)]}>*_"  # punctuation around a URL in prose, not part of it


def canonical_origin(value: str) -> str:
    """An origin as stored: scheme://host[:port], lower case, the default port left out; ValueError
    with a sentence when value is not one (a path, query, user name or other scheme)."""
    text = value.strip() if isinstance(value, str) else ""
    example = "such as http://127.0.0.1:8123 or http://wiki.lan"
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise ValueError(f"Not an address: give the site's origin, {example}.") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ValueError(f"Must be an http:// or https:// origin, {example}.")
    if parts.username or parts.password:
        raise ValueError("Put no user name or password in it: settings are saved on disk.")
    if parts.path not in ("", "/") or parts.query or parts.fragment or text.endswith(("?", "#")):
        raise ValueError(f"Give the origin only (scheme, host and port), without a path, {example}: "
                         f"everything on that site is then allowed.")
    written = fetch_guard.exact(text)  # ASCII host, IPv6 in brackets
    scheme, netloc = urlsplit(written)[:2]
    default = 443 if scheme == "https" else 80
    return f"{scheme}://{netloc.rsplit(':', 1)[0] if port == default else netloc}"


def origins() -> frozenset[str]:
    """The trusted origins of Settings → Web fetch, as fetch_guard.origin writes them."""
    out = set()
    for value in stored()["allow_private"]:
        try:
            out.add(fetch_guard.origin(value))
        except ValueError:
            continue  # stored before it was checked: ignored rather than trusted
    return frozenset(out)


def stored() -> dict:
    value = settings.get_object(SETTING).get("allow_private")
    return {"allow_private": [v for v in value if isinstance(v, str)] if isinstance(value, list) else []}


def typed_urls(chat_id: str) -> frozenset[str]:
    """Every http(s) URL the person wrote in a message of the chat's active branch (fetch_guard.exact)."""
    found = set()
    for row in history.branch_of(chat_id):
        if row.role != "user" or not row.content:
            continue
        for match in _URL_IN_TEXT.findall(row.content):
            try:
                found.add(fetch_guard.exact(match.rstrip(_TRAILING)))
            except ValueError:
                continue
    return frozenset(found)


def allowed(chat_id: str) -> frozenset[str]:
    """What a fetch of this chat may read on the person's own network: trusted origins and typed URLs."""
    return origins() | typed_urls(chat_id)


def unvouched(chat_id: str, url, granted: set[str]) -> str | None:
    """url (as fetch_guard.exact writes it) when it leads to the person's own network and neither the
    setting, `granted` nor a URL they typed allows it; a typed one is added to `granted`."""
    needed = fetch_guard.needs_consent(url, origins() | granted)
    if needed is not None and needed in typed_urls(chat_id):
        granted.add(needed)
        return None
    return needed


def bind(tools: ToolRegistry, granted: set[str]) -> None:
    """The turn's web_fetch (when offered) reads the trusted origins and the URLs in `granted`."""
    if tools.get(NAME) is not None:
        tools.add(fetch_tool(allowed=lambda: origins() | granted))


class TurnFetches:
    """What one turn's web_fetch may read on the person's own network: the trusted origins,
    URLs typed on the branch, and URLs approved on a card during the turn."""

    def __init__(self, chat_id: str):
        self.chat_id = chat_id
        self.granted: set[str] = set()

    def bind(self, tools: ToolRegistry) -> None:
        bind(tools, self.granted)

    def unvouched(self, call) -> str | None:
        """A web_fetch call's URL when it leads into the person's own network and nothing allows
        it yet, so the call must ask; else None."""
        if call.name != NAME:
            return None
        try:
            url = parse_arguments(call).get("url")
        except ValueError:
            return None
        return unvouched(self.chat_id, url, self.granted)

    def grant(self, call, edited: str | None, local: str | None) -> None:
        """An allowed web_fetch of a private URL may read that exact URL (the edited one, if edited)."""
        if call.name != NAME:
            return
        if edited is not None and edited != call.arguments:
            local = self.unvouched(replace(call, arguments=edited))
        if local:
            self.granted.add(local)
