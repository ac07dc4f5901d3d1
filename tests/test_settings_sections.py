"""Sections of /api/settings declared once (backend/store/settings.py): a feature's section is
shown, checked and saved by the settings routes without them naming it, merging what is sent
into the stored value or replacing it, as the section says."""
from __future__ import annotations

import pytest

from backend.store import settings
from backend.store.models import Setting
from tests.test_api_catalog import assert_invalid

BUILT_IN = {"default_model_id", "shell_network", "compaction", "questions", "web_search", "research",
            "web_fetch", "ui", "knowledge", "personal", "memory", "images", "voice"}
READ_ONLY = {"keyring", "catalog", "shell_sandbox"}


@pytest.fixture
def api(start_server):
    return start_server({"NUMI_TOOL_PLUGINS": "tests.settings_plugin"}).api()


def test_a_registered_section_is_shown_with_its_defaults(api):
    body = api.get("/api/settings").body
    assert set(body) == BUILT_IN | READ_ONLY | {"example", "example_plain"}
    assert body["example"] == {"level": 1, "tags": []} and body["example_plain"] == "off"


def test_a_merging_section_keeps_what_was_not_sent_and_a_plain_one_is_replaced(api):
    r = api.patch("/api/settings", {"example": {"level": 3}, "example_plain": "on"})
    assert r.status == 200, r
    assert r.body["example"] == {"level": 3, "tags": []} and r.body["example_plain"] == "on"
    r = api.patch("/api/settings", {"example": {"tags": ["a"]}})
    assert r.body["example"] == {"level": 3, "tags": ["a"]} and r.body["example_plain"] == "on"
    assert api.get("/api/settings").body["example"] == {"level": 3, "tags": ["a"]}


def test_every_problem_of_every_section_is_listed_and_nothing_is_saved(api):
    r = api.patch("/api/settings", {"example": {"level": 9, "tags": "a"}, "example_plain": "maybe",
                                    "compaction": {"threshold": 2}, "ui": {"theme": "dark"}, "nope": 1,
                                    "keyring": {}})
    fields = assert_invalid(r, "example.level", "example.tags", "example_plain", "compaction.threshold",
                            "nope", "keyring")
    assert fields["example_plain"] == "Must be one of: off, on."
    assert fields["example.tags"] == "Must be a list of strings."
    assert "example" in fields["nope"] and "ui" in fields["nope"]  # "Allowed here: …" names every section
    assert fields["keyring"] == "This field is read-only and cannot be changed."
    r = api.patch("/api/settings", {"example": "high"})
    assert assert_invalid(r, "example")["example"] == 'Must be an object like {"level": 3, "tags": ["a"]}.'
    body = api.get("/api/settings").body
    assert body["example"] == {"level": 1, "tags": []} and body["ui"]["theme"] == "system"


# -- the store's side ---------------------------------------------------------------------------

def test_rows_are_read_and_written_in_one_place(store):
    assert settings.get("k") is None and settings.get("k", 5) == 5 and settings.get_object("k") == {}
    settings.put("k", [1])
    assert settings.get("k") == [1] and settings.get_object("k") == {}
    settings.put("k", {"a": 1})
    assert settings.get_object("k") == {"a": 1}
    settings.put("k", None)  # unset: no row
    assert Setting.get_or_none(Setting.key == "k") is None
    settings.put("k", False)
    assert settings.get("k", True) is False


def test_a_section_saves_by_its_rule(store):
    merged = settings.Section("m", {"a": 1, "b": 2}, lambda fields: None, merge=True,
                              current=lambda: {"a": 1, "b": 2, **settings.get_object("m")})
    replaced = settings.Section("r", {"a": 1, "b": 2}, lambda fields: None)
    merged.save({"a": 5})
    replaced.save({"a": 5})
    assert (merged.value(), merged.view()) == ({"a": 5, "b": 2}, {"a": 5, "b": 2})
    assert replaced.value() == {"a": 5}
    assert settings.Section("never", "x", lambda fields: None).value() == "x"
    # What GET shows may be worked out from more than the row.
    shown = settings.Section("s", None, lambda fields: None, shown=lambda: "worked out")
    assert shown.view() == "worked out"


def test_the_built_in_sections_are_registered_once_each():
    import backend.api.settings  # noqa: F401 (registers them)

    names = [section.name for section in settings.sections()]
    assert BUILT_IN <= set(names) and len(names) == len(set(names))
    assert settings.find("ui").merge and settings.find("compaction").merge and not settings.find("web_search").merge
