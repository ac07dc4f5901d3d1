import importlib.util

import pytest

from tests.desktop.harness import Session, missing_tools


def _gtk_missing() -> str | None:
    if importlib.util.find_spec("gi") is None:
        return "PyGObject (gi) is not installed"
    try:
        import gi
        gi.require_version("Gtk", "3.0")
        gi.require_version("WebKit2", "4.1")
    except ValueError as exc:
        return str(exc)
    return None


@pytest.fixture
def session(tmp_path):
    """Xvfb + a session bus + dunst, torn down after the test."""
    missing = missing_tools()
    if missing:
        pytest.skip(f"desktop tests need {', '.join(missing)} (.ci/run installs them)")
    reason = _gtk_missing()
    if reason:
        pytest.skip(f"desktop tests need WebKitGTK through PyGObject: {reason}")
    s = Session(tmp_path).start()
    yield s
    s.stop()
