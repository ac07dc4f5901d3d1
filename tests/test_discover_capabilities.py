"""Discovered models get the capabilities and context window their server states: a fake of each
server kind on loopback (real HTTP, each server's own wire shapes) behind the real Numi server."""
from __future__ import annotations

from tests.test_catalog_api import discover, provider


def added_by_name(api, p) -> dict:
    r = discover(api, p["id"])
    assert r.status == 200, r
    return {m["api_model"]: m for m in r.body["added"]}


def caps(tools, vision, reasoning) -> dict:
    return {"tools": tools, "vision": vision, "reasoning": reasoning}


OLLAMA_SHOW = {  # POST /api/show answers, by model (trimmed to the fields Numi reads)
    "llama3.2-vision:11b": {"capabilities": ["completion", "vision"],
                            "model_info": {"general.architecture": "mllama", "mllama.context_length": 131072}},
    "qwen3:8b": {"capabilities": ["completion", "tools", "thinking"],
                 "model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960}},
    "my-tune:latest": {"capabilities": ["completion"],
                       "model_info": {"general.architecture": "llama", "llama.context_length": 4096}},
    "bge-m3:latest": {"capabilities": ["embedding"],
                      "model_info": {"general.architecture": "bert", "bert.context_length": 8192}},
}


def test_ollama_models_get_what_api_show_says(api, fake):
    fake.models = list(OLLAMA_SHOW)

    def show(body):
        found = OLLAMA_SHOW.get((body or {}).get("model"))
        return (200, {"details": {"format": "gguf"}, **found}) if found else (404, {"error": "model not found"})

    fake.routes[("POST", "/api/show")] = show
    p = provider(api, kind="openai_compatible", name="Ollama", base_url=fake.base_url)
    added = added_by_name(api, p)
    assert set(added) == {"llama3.2-vision:11b", "qwen3:8b", "my-tune:latest"}  # bge-m3 only embeds
    # Ollama's word beats the family table (which guesses tools for Llama 3.2 Vision).
    assert added["llama3.2-vision:11b"]["supports"] == caps(False, True, False)
    assert added["qwen3:8b"]["supports"] == caps(True, False, True)
    assert added["my-tune:latest"]["supports"] == caps(False, False, False)
    # No num_ctx and nothing loaded: the window Ollama gives by default (test_discover_windows.py).
    assert {m["context_window"] for m in added.values()} == {4096}
    shown = sorted(r.body["model"] for r in fake.requests if r.path == "/api/show")
    assert shown == sorted(OLLAMA_SHOW)


def test_lm_studio_models_get_type_capabilities_and_max_context(api, fake):
    fake.models = ["qwen2-vl-7b-instruct", "acme-coder-14b", "old-chat-7b", "nomic-text-v1.5"]
    fake.routes[("GET", "/api/v0/models")] = {"object": "list", "data": [
        {"id": "qwen2-vl-7b-instruct", "object": "model", "type": "vlm", "publisher": "qwen", "arch": "qwen2_vl",
         "state": "not-loaded", "max_context_length": 32768, "capabilities": []},
        {"id": "acme-coder-14b", "object": "model", "type": "llm", "publisher": "acme", "arch": "llama",
         "state": "loaded", "max_context_length": 65536, "capabilities": ["tool_use"]},
        {"id": "old-chat-7b", "object": "model", "type": "llm", "state": "not-loaded",
         "max_context_length": 8192},  # an LM Studio that lists no capabilities: tools not ruled out
        {"id": "nomic-text-v1.5", "object": "model", "type": "embeddings", "max_context_length": 2048},
    ]}
    p = provider(api, kind="openai_compatible", name="LM Studio", base_url=fake.base_url)
    added = added_by_name(api, p)
    assert set(added) == {"qwen2-vl-7b-instruct", "acme-coder-14b", "old-chat-7b"}
    assert added["qwen2-vl-7b-instruct"]["supports"] == caps(False, True, False)
    assert added["qwen2-vl-7b-instruct"]["context_window"] == 32768
    assert added["acme-coder-14b"]["supports"] == caps(True, False, False)
    assert added["acme-coder-14b"]["context_window"] == 65536
    assert added["old-chat-7b"]["supports"] == caps(True, False, False)
    assert added["old-chat-7b"]["context_window"] == 8192


def test_openrouter_models_get_supported_parameters_and_modalities(api, fake):
    fake.routes[("GET", "/api/v1/models")] = {"data": [
        {"id": "openai/gpt-4o", "name": "OpenAI: GPT-4o", "context_length": 128000,
         "architecture": {"input_modalities": ["text", "image", "file"], "output_modalities": ["text"],
                          "tokenizer": "GPT"},
         "top_provider": {"context_length": 128000, "max_completion_tokens": 16384, "is_moderated": True},
         "supported_parameters": ["max_tokens", "temperature", "tools", "tool_choice", "response_format"]},
        {"id": "deepseek/deepseek-r1", "name": "DeepSeek: R1", "context_length": 163840,
         "architecture": {"input_modalities": ["text"], "output_modalities": ["text"]},
         "top_provider": {"context_length": 163840, "max_completion_tokens": None},
         "supported_parameters": ["max_tokens", "reasoning", "include_reasoning", "temperature"]},
        {"id": "acme/tiny-chat", "name": "Acme tiny", "context_length": 4096,
         "architecture": {"input_modalities": ["text"], "output_modalities": ["text"]},
         "supported_parameters": ["max_tokens", "temperature"]},
        {"id": "acme/painter", "name": "Acme painter", "context_length": 4096,
         "architecture": {"input_modalities": ["text"], "output_modalities": ["image"]},
         "supported_parameters": []},
    ]}
    p = provider(api, kind="openai_compatible", name="OpenRouter", base_url=fake.url + "/api/v1")
    added = added_by_name(api, p)
    assert set(added) == {"openai/gpt-4o", "deepseek/deepseek-r1", "acme/tiny-chat"}  # no image generator
    assert added["openai/gpt-4o"]["supports"] == caps(True, True, False)
    assert (added["openai/gpt-4o"]["context_window"], added["openai/gpt-4o"]["max_output_tokens"]) == (128000, 16384)
    assert added["deepseek/deepseek-r1"]["supports"] == caps(False, False, True)
    assert added["deepseek/deepseek-r1"]["context_window"] == 163840
    assert added["acme/tiny-chat"]["supports"] == caps(False, False, False)  # it says: no tools
    # The list said it all: no native API was asked.
    assert [r.path for r in fake.requests] == ["/api/v1/models"]


def test_llama_cpp_model_gets_props(api, fake):
    fake.routes[("GET", "/v1/models")] = {"object": "list", "data": [
        {"id": "gemma-3-4b-it", "object": "model", "created": 0, "owned_by": "llamacpp",
         "meta": {"vocab_type": 1, "n_vocab": 262144, "n_ctx_train": 131072, "n_embd": 2560}}]}
    fake.routes[("GET", "/props")] = {
        "default_generation_settings": {"n_ctx": 16384, "params": {"temperature": 0.8}},
        "total_slots": 1, "model_alias": "gemma-3-4b-it", "model_path": "/models/gemma-3-4b-it.gguf",
        "modalities": {"vision": True, "audio": False},
        "chat_template": "{%- if tools %}{{ tools | tojson }}{%- endif %}{% for m in messages %}…{% endfor %}",
        "build_info": "b6000"}
    p = provider(api, kind="openai_compatible", name="llama.cpp", base_url=fake.base_url)
    added = added_by_name(api, p)
    # The served window (n_ctx) is what it takes, not the training window in /v1/models' meta.
    assert added["gemma-3-4b-it"]["context_window"] == 16384
    assert added["gemma-3-4b-it"]["supports"] == caps(True, True, False)


def test_llama_cpp_template_without_tools_means_no_tools(api, fake):
    fake.models = ["phi-mini"]
    fake.routes[("GET", "/props")] = {"default_generation_settings": {"n_ctx": 4096},
                                      "modalities": {"vision": False},
                                      "chat_template": "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"}
    p = provider(api, kind="openai_compatible", name="llama.cpp", base_url=fake.base_url)
    added = added_by_name(api, p)
    assert added["phi-mini"]["supports"] == caps(False, False, False)
    assert added["phi-mini"]["context_window"] == 4096


def test_a_server_that_says_nothing_gets_family_values_and_tools_by_default(api, fake):
    fake.models = ["llava:7b", "mystery-model"]
    p = provider(api, kind="openai_compatible", name="Plain", base_url=fake.base_url)
    added = added_by_name(api, p)
    assert added["llava:7b"]["supports"] == caps(False, True, False)  # the family table knows llava
    assert added["mystery-model"]["supports"] == caps(True, False, False)  # a chat model: tools until refused
    assert added["mystery-model"]["context_window"] is None
