"""The desktop window's microphone, for dictation (CONTRACT §14).

WebKitGTK gives a page no getUserMedia unless media streams are on in the view's settings, and it
asks the application for each user-media request (`permission-request`), which is denied unless
answered. Numi's own page may have the microphone; a camera or the screen, or any other page
(a link followed into the window), may not. Other kinds of request keep WebKit's default.
"""
from __future__ import annotations

import logging
from typing import Callable

log = logging.getLogger(__name__)


def allowed(page_url: str | None, audio: bool, video: bool, is_own_url: Callable[[str], bool]) -> bool:
    """Whether a user-media request is granted: sound alone, asked by Numi's own page."""
    return bool(audio) and not video and bool(page_url) and is_own_url(page_url or "")


def enable(view, is_own_url: Callable[[str], bool]) -> None:
    """Turn media streams on in the WebKit2.WebView `view` and answer its user-media requests."""
    settings = view.get_settings()
    settings.set_enable_media_stream(True)
    settings.set_enable_mediasource(True)
    view.connect("permission-request", lambda v, request: decide(v, request, is_own_url))


def decide(view, request, is_own_url: Callable[[str], bool]) -> bool:
    """The `permission-request` handler: True when it answered `request` (a user-media one)."""
    import gi
    gi.require_version("WebKit2", "4.1")
    from gi.repository import WebKit2

    if not isinstance(request, WebKit2.UserMediaPermissionRequest):
        return False  # not ours to answer: WebKit's default
    props = request.props
    audio, video = props.is_for_audio_device, props.is_for_video_device
    url = view.get_uri()
    if allowed(url, audio, video, is_own_url):
        request.allow()
    else:
        log.info("desktop: refused a media request (audio %s, video %s) from %s", audio, video, url)
        request.deny()
    return True
