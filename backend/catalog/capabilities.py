"""What a server says its models can do: tools, vision, reasoning and context window.

OpenAI-compatible servers answer the same /models list, but most say more
elsewhere: OpenRouter and vLLM in the list items themselves, Ollama in
POST /api/show, LM Studio in GET /api/v0/models, llama.cpp in GET /props (the
three native APIs sit at the base URL without /v1). Each answer becomes a
`Facts` per model; a value the server did not state stays None, so the family
table or a default fills it (discover.py). A server that answers none of these
costs a few quick 404s.
"""
from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from urllib.parse import urlsplit

NATIVE_TIMEOUT_S = 5.0  # per request; the whole look-around stops at the listing's own timeout
MAX_SHOW = 200  # Ollama needs one request per model: a huge library is left to the family table
MAX_BODY = 8 << 20

_direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback never via a proxy
_default = urllib.request.build_opener()


@dataclass(frozen=True)
class Facts:
    """What one server stated about one model; None = it did not say."""
    tools: bool | None = None
    vision: bool | None = None
    reasoning: bool | None = None
    context_window: int | None = None
    max_output_tokens: int | None = None
    chat: bool = True  # False: an embedding (or other non-chat) model, never added

    def stated(self) -> bool:
        return any(v is not None for v in (self.tools, self.vision, self.reasoning))

    def over(self, other: Facts) -> Facts:
        """These facts, with `other`'s where these say nothing."""
        pick = lambda a, b: a if a is not None else b  # noqa: E731
        return Facts(pick(self.tools, other.tools), pick(self.vision, other.vision),
                     pick(self.reasoning, other.reasoning), pick(self.context_window, other.context_window),
                     pick(self.max_output_tokens, other.max_output_tokens), self.chat and other.chat)


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _strings(value) -> list[str]:
    return [v.lower() for v in value if isinstance(v, str)] if isinstance(value, list) else []


# -- what the /models list items carry ----------------------------------------------

def from_listing(item: dict) -> Facts:
    """Facts in one /models item: OpenRouter's fields, vLLM's max_model_len, llama.cpp's meta."""
    facts = Facts()
    params = item.get("supported_parameters")
    if isinstance(params, list):  # OpenRouter: the parameters its endpoints accept for this model
        names = _strings(params)
        facts = replace(facts, tools="tools" in names,
                        reasoning="reasoning" in names or "include_reasoning" in names)
    arch = item.get("architecture")
    if isinstance(arch, dict):
        inputs, outputs = arch.get("input_modalities"), arch.get("output_modalities")
        if isinstance(inputs, list):
            facts = replace(facts, vision="image" in _strings(inputs))
        if isinstance(outputs, list) and "text" not in _strings(outputs):
            facts = replace(facts, chat=False)  # embeddings, image or audio generators
    top = item.get("top_provider") if isinstance(item.get("top_provider"), dict) else {}
    meta = item.get("meta") if isinstance(item.get("meta"), dict) else {}
    window = (_count(item.get("context_length")) or _count(item.get("max_model_len"))
              or _count(meta.get("n_ctx_train")))
    return replace(facts, context_window=window, max_output_tokens=_count(top.get("max_completion_tokens")))


# -- the servers' own APIs ---------------------------------------------------------

class _Native:
    """Requests to the native API root (base URL without /v1), all within one deadline."""

    def __init__(self, base_url: str, api_key: str | None, budget: float):
        root = base_url.rstrip("/")
        self.root = root[: -len("/v1")] if root.endswith("/v1") else root
        self.headers = {"Accept": "application/json"}
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
        host = urlsplit(self.root).hostname or ""
        self.opener = _direct if host in ("127.0.0.1", "localhost", "::1") else _default
        self.deadline = time.monotonic() + budget

    def call(self, path: str, body: dict | None = None):
        """The JSON answer, or None for anything else (404, refused, timeout, not JSON)."""
        left = self.deadline - time.monotonic()
        if left <= 0.05:
            return None
        data = json.dumps(body).encode() if body is not None else None
        headers = dict(self.headers, **({"Content-Type": "application/json"} if data else {}))
        request = urllib.request.Request(self.root + path, data=data, headers=headers)
        try:
            with self.opener.open(request, timeout=min(NATIVE_TIMEOUT_S, left)) as resp:
                return json.loads(resp.read(MAX_BODY) or b"null")
        except (urllib.error.URLError, OSError, ValueError):
            return None


def _lm_studio(native: _Native, ids: list[str]) -> dict[str, Facts] | None:
    data = native.call("/api/v0/models")
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list) or not any(isinstance(i, dict) and "type" in i for i in items):
        return None
    out = {}
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue
        kind = item.get("type")
        caps = item.get("capabilities")
        out[item["id"]] = Facts(
            # Older LM Studio lists no capabilities: then it did not say.
            tools=("tool_use" in _strings(caps)) if isinstance(caps, list) else None,
            vision=(kind == "vlm") if kind in ("llm", "vlm") else None,
            context_window=_count(item.get("max_context_length")),
            chat=kind in ("llm", "vlm", None))
    return out


def _ollama_show(native: _Native, name: str) -> Facts | None:
    data = native.call("/api/show", {"model": name})
    if not isinstance(data, dict) or not ("capabilities" in data or "model_info" in data):
        return None
    info = data.get("model_info") if isinstance(data.get("model_info"), dict) else {}
    window = next((_count(v) for k, v in info.items() if k.endswith(".context_length") and _count(v)), None)
    caps = data.get("capabilities")
    if not isinstance(caps, list):  # an Ollama older than capabilities: only the window is known
        return Facts(context_window=window)
    caps = _strings(caps)
    return Facts(tools="tools" in caps, vision="vision" in caps, reasoning="thinking" in caps,
                 context_window=window, chat="completion" in caps or "embedding" not in caps)


def _ollama(native: _Native, ids: list[str]) -> dict[str, Facts] | None:
    if not ids:
        return None
    first = _ollama_show(native, ids[0])
    if first is None:
        return None
    out = {ids[0]: first}
    rest = ids[1:MAX_SHOW]
    if rest:
        with ThreadPoolExecutor(max_workers=4, thread_name_prefix="ollama-show") as pool:
            for name, facts in zip(rest, pool.map(lambda n: _ollama_show(native, n), rest)):
                if facts is not None:
                    out[name] = facts
    return out


def _llama_cpp(native: _Native, ids: list[str]) -> dict[str, Facts] | None:
    data = native.call("/props")
    if not isinstance(data, dict) or not ("default_generation_settings" in data or "modalities" in data):
        return None
    settings = data.get("default_generation_settings")
    modalities = data.get("modalities")
    template = data.get("chat_template")
    vision = modalities.get("vision") if isinstance(modalities, dict) else None
    facts = Facts(
        # The template decides whether tool definitions reach the model at all.
        tools=("tools" in template) if isinstance(template, str) and template else None,
        vision=vision if isinstance(vision, bool) else None,
        reasoning=True if isinstance(template, str) and ("<think>" in template or "enable_thinking" in template)
        else None,
        context_window=_count(settings.get("n_ctx")) if isinstance(settings, dict) else None)
    # /props describes the model it serves: every listed one when it serves one, else the one it names.
    alias = data.get("model_alias")
    if len(ids) == 1:
        return {ids[0]: facts}
    return {alias: facts} if isinstance(alias, str) and alias in ids else {}


def from_native_api(base_url: str, api_key: str | None, ids: list[str], budget: float) -> dict[str, Facts]:
    """Facts by model id from the first native API that answers: LM Studio, Ollama, llama.cpp."""
    native = _Native(base_url, api_key, budget)
    for ask in (_lm_studio, _ollama, _llama_cpp):
        found = ask(native, ids)
        if found is not None:
            return found
    return {}
