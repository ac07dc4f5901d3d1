"""What discovery found stays beside a window the person set (`discovered_context_window`,
docs/PROTOCOL.md), so Settings → Models can show both; a model it found nothing for says null."""
from __future__ import annotations

from tests.test_catalog_api import discover, provider
from tests.test_discover_windows import OLLAMA_LIBRARY, found, models, speak_ollama


def test_the_found_window_is_kept_beside_the_persons_own(api, fake):
    speak_ollama(fake, OLLAMA_LIBRARY, running={"gemma3:12b": 8192})
    p = provider(api, kind="openai_compatible", name="Ollama", base_url=fake.base_url)
    gemma = found(api, p)["gemma3:12b"]
    assert (gemma["context_window"], gemma["discovered_context_window"]) == (8192, 8192)
    r = api.patch(f"/api/models/{gemma['id']}", {"context_window": 20000})
    assert r.status == 200 and r.body["discovered_context_window"] == 8192, r
    # Loaded with a bigger window and looked for again: the person's stays, what was found moves.
    speak_ollama(fake, OLLAMA_LIBRARY, running={"gemma3:12b": 65536})
    assert discover(api, p["id"]).body == {"added": []}
    now = models(api)["gemma3:12b"]
    assert (now["context_window"], now["discovered_context_window"]) == (20000, 65536)


def test_a_model_added_by_name_has_no_found_window(api, fake):
    p = provider(api, kind="openai_compatible", name="Local", base_url=fake.base_url)
    r = api.post("/api/models", {"provider_id": p["id"], "api_model": "mystery-model"})
    assert r.status == 201 and r.body["discovered_context_window"] is None, r
