"""The desktop window's microphone (desktop/media.py): what a user-media request is answered, and that a
real WebKitGTK view gets media streams turned on. Not tested here: WebKit asking with a real
UserMediaPermissionRequest and then recording (Xvfb has no sound device, and such a request cannot be
made outside WebKit)."""
import subprocess
import sys
from pathlib import Path

import pytest

from desktop import media

PORT = 8123
ROOT = Path(__file__).resolve().parents[2]


def own(url: str) -> bool:
    return url.startswith((f"http://127.0.0.1:{PORT}/", f"http://localhost:{PORT}/"))


@pytest.mark.parametrize(("url", "audio", "video", "granted"), [
    (f"http://127.0.0.1:{PORT}/#/c/abc", True, False, True),
    (f"http://localhost:{PORT}/", True, False, True),
    (f"http://127.0.0.1:{PORT}/", True, True, False),     # a camera with it
    (f"http://127.0.0.1:{PORT}/", False, True, False),    # a camera alone
    (f"http://127.0.0.1:{PORT}/", False, False, False),   # neither: nothing to grant
    ("http://127.0.0.1:9999/", True, False, False),       # another port on this computer
    ("https://example.com/", True, False, False),         # a page followed into the window
    ("", True, False, False),
    (None, True, False, False),
])
def test_only_sound_for_numis_own_page_is_granted(url, audio, video, granted):
    assert media.allowed(url, audio, video, own) is granted


# Run in a process of its own on the session's Xvfb: GTK keeps its display for the process's life.
VIEW_CHECK = r"""
import gi
gi.require_version("Gtk", "3.0")
gi.require_version("WebKit2", "4.1")
from gi.repository import Gtk, WebKit2
from desktop import media
assert Gtk.init_check([])[0], "no display"
view = WebKit2.WebView()
media.enable(view, lambda url: url.startswith("http://127.0.0.1:8123/"))
s = view.get_settings()
print("media-stream", s.get_enable_media_stream(), "mediasource", s.get_enable_mediasource())
"""


def test_a_real_webkit_view_gets_media_streams(session):
    out = subprocess.run([sys.executable, "-c", VIEW_CHECK], env=session.env, cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "media-stream True mediasource True" in out.stdout
