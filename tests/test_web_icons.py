"""Icons in the window are SVG: no emoji or pictographic symbols, which render as boxes
on a system without an emoji font (a fresh Linux desktop). Arrows and ⌘ stay: they are
text (a key's name, "Settings → General") in every common font."""
from __future__ import annotations

import re
from pathlib import Path

WEB = Path(__file__).resolve().parents[1] / "web"

# Emoji and symbol blocks a UI font may lack: Misc Technical's pictographs, geometric
# shapes, Misc Symbols, Dingbats, the emoji planes, and the emoji variation selector.
ICONISH = re.compile("[\u2300-\u2317\u2319-\u23ff\u2460-\u24ff\u25a0-\u27bf\u2b00-\u2bff"
                     "\U0001F000-\U0001FAFF\uFE0F]")

# Text, not icons: allowed anywhere.
TEXT = set("⌘")

# Symbols still drawn as text until they get their SVG: none now. A pair here is
# allowed, and the test below fails once it has gone, so the list stays accurate.
PENDING: set[tuple[str, str]] = set()


def strip_comments(text: str, suffix: str) -> str:
    """Code without its comments (a ✕ named in a comment is no icon)."""
    if suffix == ".html":
        return re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return text if suffix == ".css" else re.sub(r"(?m)^\s*//.*$|\s//\s.*$", "", text)


def found() -> set[tuple[str, str, int]]:
    out = set()
    files = [WEB / "index.html", *(WEB / "app").rglob("*.js"), *(WEB / "js").rglob("*.js"), *(WEB / "styles").rglob("*.css")]
    for path in files:
        code = strip_comments(path.read_text(encoding="utf-8"), path.suffix)
        for n, line in enumerate(code.splitlines(), 1):
            for ch in ICONISH.findall(line):
                if ch not in TEXT:
                    out.add((path.relative_to(WEB).as_posix(), ch, n))
    return out


def test_no_emoji_or_symbol_is_used_as_an_icon():
    unexpected = sorted(f"{f}:{n}: {ch!r} (U+{ord(ch):04X})" for f, ch, n in found() if (f, ch) not in PENDING)
    assert not unexpected, "draw these as SVG (<span class=\"i i-NAME\">, web/styles/app.css): " + ", ".join(unexpected)


def test_the_pending_list_only_names_what_is_still_there():
    left = {(f, ch) for f, ch, _ in found()}
    assert PENDING <= left, f"drawn as SVG now, drop from PENDING: {sorted(PENDING - left)}"


def test_the_scan_sees_an_emoji_icon():
    assert ICONISH.findall('h("span", {}, "📌")') == ["📌"] and ICONISH.findall('"✕"') == ["✕"]
    assert not ICONISH.findall("Settings → General · Ctrl/⌘ + ↑")
