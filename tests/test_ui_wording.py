"""The UI recognises what the server says: the sentence of a denied tool call."""
from __future__ import annotations

import re
from pathlib import Path

from backend.core import agent

ROOT = Path(__file__).resolve().parents[1]


def test_the_ui_matches_the_servers_denied_sentence():
    js = (ROOT / "web/app/views/tool-call.js").read_text(encoding="utf-8")
    prefix = re.search(r'DENIED_PREFIX = "([^"]+)"', js).group(1)
    source = Path(agent.__file__).read_text(encoding="utf-8")
    assert f'f"{prefix}{{why}}"' in source, "the server's denial sentence changed: update DENIED_PREFIX"
