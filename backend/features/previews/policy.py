"""The headers every answer of the preview origin carries: a CSP that lets a document run its own
inline scripts and styles but reach no network, and nothing for a browser to keep or pass on."""
from __future__ import annotations


def app_origins(app_port: int | None) -> list[str]:
    """The app's two origins (CONTRACT §2 lets the page be opened at either), or none."""
    return [f"http://127.0.0.1:{app_port}", f"http://localhost:{app_port}"] if app_port else []


def csp(lib_url: str, app_port: int | None) -> str:
    """The preview pages' Content-Security-Policy (docs/PROTOCOL.md, "Document previews").

    Scripts: the document's inline ones and the vendored libraries under `lib_url` (a path
    source, not hashes: a hash would switch 'unsafe-inline' off). No fetch, socket, frame,
    remote image, font or style sheet, no form target, no <base>. `sandbox allow-scripts`
    gives the page an opaque origin even where it is opened without the iframe's sandbox.
    Only the app's pages may frame it."""
    ancestors = " ".join(app_origins(app_port)) or "'none'"
    return (f"default-src 'none'; script-src 'unsafe-inline' {lib_url}; style-src 'unsafe-inline'; "
            f"img-src data: blob:; font-src data:; connect-src 'none'; form-action 'none'; base-uri 'none'; "
            f"frame-ancestors {ancestors}; sandbox allow-scripts")


def headers(policy: str) -> list[tuple[str, str]]:
    return [
        ("Content-Security-Policy", policy),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Cache-Control", "no-store"),
        # A document's <link rel=dns-prefetch> would otherwise still ask a name server.
        ("X-DNS-Prefetch-Control", "off"),
    ]
