"""Previews of documents that cannot reach the app (CONTRACT §9; docs/PROTOCOL.md, "Document previews").

HTML, SVG, Mermaid and Markdown documents are shown from a second loopback origin: a listener
of its own (listener.py) on its own port, serving only previews under a per-run secret, with a
CSP that lets a document run its own inline scripts and styles but reach no network
(policy.py), and pages that draw Markdown and Mermaid there with the vendored libraries
(pages.py). `GET /api/documents/{id}/preview` gives a version's address (routes.py); the app's
CSP gains `frame-src` for that origin and no other (service.py). The documents themselves are
another feature's: whatever provides "documents" (`AppContext.provided`).
"""
from __future__ import annotations

from backend.features.previews import routes
from backend.features.previews.service import PreviewService
from backend.turns.features import Feature

FEATURE = Feature(
    name="previews",
    service=PreviewService,
    routes=routes.register,
)
