"""Which addresses a fetch may reach: the public internet, and the person's own network only where
they allowed it.

A page, a search result or a model can name any address, and a GET can have side effects
(a router's admin page, a cloud server's metadata service), so a fetch refuses every
address that is not public — loopback, private, link-local, CGNAT, unique-local,
unspecified, reserved, multicast, and IPv4 wrapped in IPv6 — unless the exact URL, or its
origin, is in the set the person allowed (typed, approved, or listed in Settings → Web
fetch). Hosts are judged by what they resolve to (getaddrinfo), never by how they are
spelled, so `127.1`, `2130706433` and a DNS name pointing at 10.0.0.5 are all caught.
"""
from __future__ import annotations

import ipaddress
import socket
import threading
from typing import Collection
from urllib.parse import quote, urlsplit, urlunsplit

__all__ = ["PrivateAddress", "exact", "origin", "allows", "is_public", "is_loopback", "local_name", "resolve",
           "needs_consent", "refusal", "SETTINGS_HINT"]

_SAFE_URL_CHARS = "!#$%&'()*+,/:;=?@[]~"  # kept as written; spaces and non-ASCII are escaped
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
# Special-purpose blocks older Pythons still count as global (IANA's special-purpose registries).
_SPECIAL = tuple(ipaddress.ip_network(n) for n in ("192.0.0.0/24", "192.88.99.0/24", "3fff::/20", "5f00::/16"))
SETTINGS_HINT = "Settings → Web fetch"


class PrivateAddress(ValueError):
    """A fetch refused: its address is this computer or a private network, and nobody allowed it."""


# -- addresses as text -------------------------------------------------------------------------

def exact(url: str) -> str:
    """An http(s) url with an ASCII host and escaped path, without its #fragment; ValueError if it has no host."""
    parts = urlsplit(url)
    if not parts.hostname:
        raise ValueError(f"The address {url} has no host name. "
                         f"Give a full address like https://example.com/page.")
    try:
        port = parts.port
        host = parts.hostname.encode("idna").decode("ascii") if not parts.hostname.isascii() \
            else parts.hostname
    except (ValueError, UnicodeError):
        raise ValueError(f"The address {url} has an invalid host name or port.") from None
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    return urlunsplit((parts.scheme.lower(), netloc, quote(parts.path or "/", safe=_SAFE_URL_CHARS),
                       quote(parts.query, safe=_SAFE_URL_CHARS), ""))


def origin(url: str) -> str:
    """scheme://host:port of an http(s) url, the port always written (so :80 and none are one origin)."""
    parts = urlsplit(exact(url))
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = parts.hostname
    return f"{parts.scheme}://{f'[{host}]' if ':' in host else host}:{port}"


def allows(allowed: Collection[str], url: str) -> bool:
    """Whether `allowed` (exact urls and origins, as exact() and origin() write them) covers url."""
    if not allowed:
        return False
    try:
        return exact(url) in allowed or origin(url) in allowed
    except ValueError:
        return False


# -- what an address is --------------------------------------------------------------------------

def _unwrapped(addr: ipaddress.IPv4Address | ipaddress.IPv6Address):
    """The IPv4 address an IPv6 one carries (mapped, NAT64, 6to4), else the address itself."""
    if addr.version == 6:
        if addr.ipv4_mapped is not None:
            return addr.ipv4_mapped
        if addr in _NAT64:
            return ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
        if addr.sixtofour is not None:
            return addr.sixtofour
    return addr


def is_public(ip: str) -> bool:
    """Whether an IP address is on the public internet (not loopback, private, CGNAT, link-local…)."""
    try:
        addr = _unwrapped(ipaddress.ip_address(ip.split("%")[0]))
    except ValueError:
        return False
    if (addr.version == 6 and addr.is_site_local) or any(addr in net for net in _SPECIAL):
        return False
    # is_global leaves out private, loopback, link-local, unspecified and 100.64.0.0/10 (CGNAT).
    return addr.is_global and not addr.is_multicast and not addr.is_reserved


def is_loopback(ip: str) -> bool:
    """Whether an IP address is this computer (127.0.0.0/8, ::1, or one of them wrapped in IPv6)."""
    try:
        return _unwrapped(ipaddress.ip_address(ip.split("%")[0])).is_loopback
    except ValueError:
        return False


def local_name(host: str) -> bool:
    """Whether a host name means this computer whatever DNS says (RFC 6761: localhost and *.localhost)."""
    name = host.rstrip(".").lower()
    return name == "localhost" or name.endswith(".localhost")


def resolve(host: str, port: int, numeric_only: bool = False) -> list[tuple]:
    """getaddrinfo's (family, type, proto, canonname, sockaddr) for a TCP connection, each address once.

    numeric_only: only an address written as numbers (any form the system accepts) is worked
    out, without asking DNS; a name then raises socket.gaierror."""
    flags = socket.AI_NUMERICHOST if numeric_only else 0
    infos, seen = [], set()
    for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=flags):
        if info[4][0] not in seen:
            seen.add(info[4][0])
            infos.append(info)
    return infos


def _first_private(host: str, port: int, *, numeric_only: bool, timeout: float | None) -> str | None:
    """The first address of host that is not public ("localhost" for a local name); None when all are
    public or the host cannot be looked up (in time)."""
    if local_name(host):
        return host
    found: list = []

    def look() -> None:
        try:
            found.extend(resolve(host, port, numeric_only))
        except (OSError, UnicodeError):
            pass  # unknown here: the fetch looks again and says why it cannot reach it

    if timeout is None:
        look()
    else:
        # A lookup cannot be interrupted, only abandoned.
        worker = threading.Thread(target=look, name="fetch-lookup", daemon=True)
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            return None
    return next((info[4][0] for info in list(found) if not is_public(info[4][0])), None)


def needs_consent(url, allowed: Collection[str] = frozenset(), *, lookup: bool = True,
                  timeout: float = 5.0) -> str | None:
    """url (as exact() writes it) when it leads to this computer or a private network and `allowed`
    does not cover it; else None. Without `lookup` only numeric addresses and local names are judged."""
    if not isinstance(url, str):
        return None
    try:
        written = exact(url.strip())
    except ValueError:
        return None  # the fetch refuses it with its own sentence
    parts = urlsplit(written)
    if parts.scheme not in ("http", "https") or allows(allowed, written):
        return None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    hit = _first_private(parts.hostname, port, numeric_only=not lookup, timeout=timeout if lookup else None)
    return written if hit else None


# -- what a refusal says -------------------------------------------------------------------------

def _where(ip: str) -> str:
    try:
        addr = _unwrapped(ipaddress.ip_address(ip.split("%")[0]))
    except ValueError:
        return "this computer"  # a local name
    if addr.is_loopback or addr.is_unspecified:
        return "this computer"
    if addr.is_link_local:
        return "a link-local address (where cloud servers keep their metadata)"
    if addr.is_private or addr in ipaddress.ip_network("100.64.0.0/10") or \
            (addr.version == 6 and addr.is_site_local):
        return "a private network"
    return "an address that is not on the public internet"


def refusal(url: str, ip: str, redirected_from: str | None = None) -> PrivateAddress:
    """The refusal of a fetch of url, whose host is (or resolves to) ip."""
    try:
        site = origin(url)
    except ValueError:
        site = url
    host = urlsplit(url).hostname or url
    leads = f"{host} is {ip}, on {_where(ip)}" if host != ip else f"{ip} is on {_where(ip)}"
    fix = (f"If you want it read, type the address in your message or approve it, or list {site} "
           f"under {SETTINGS_HINT} as a local address you trust.")
    if redirected_from is not None:
        return PrivateAddress(f"{redirected_from} redirected to {url}, which was not followed: {leads}. "
                              f"Pages from the web may not lead into your own network. {fix}")
    return PrivateAddress(f"Not fetched: {url} leads into your own network ({leads}), and Numi fetches "
                          f"such an address only on your word. {fix}")
