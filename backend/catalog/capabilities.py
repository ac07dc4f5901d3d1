"""What a server says its models can do: tools, vision, reasoning and context window.

OpenAI-compatible servers answer the same /models list, but most say more
elsewhere: OpenRouter and vLLM in the list items themselves, Ollama in
POST /api/show and GET /api/ps, LM Studio in GET /api/v0/models, llama.cpp in
GET /props (the three native APIs sit at the base URL without /v1). Each answer
becomes a `Facts` per model; a value the server did not state stays None, so the
family table or a default fills it (discover.py). A server that answers none of
these costs a few quick 404s.

The context window is the one the server runs the model with, which a local
server often sets below the model's own length (Ollama's num_ctx, the context
LM Studio loaded it with, llama-server's --ctx-size): a longer request is cut
there without a word, so that is the window Numi plans for.
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
# The window Ollama gives a model whose Modelfile sets no num_ctx while it is not loaded (so /api/ps
# cannot say): current Ollama's default on a machine with < 24 GiB of VRAM (older ones used 2048; more
# VRAM, or OLLAMA_CONTEXT_LENGTH, gives more). Planning for less than the server takes costs only an
# earlier summary; planning for more loses the start of the conversation without a word.
OLLAMA_DEFAULT_CTX = 4096

_direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback never via a proxy
_default = urllib.request.build_opener()


@dataclass(frozen=True)
class Facts:
    """What one server stated about one model; None = it did not say."""
    tools: bool | None = None
    vision: bool | None = None
    reasoning: bool | None = None
    context_window: int | None = None  # the window the server runs the model with
    max_output_tokens: int | None = None
    chat: bool = True  # False: an embedding (or other non-chat) model, never added
    model_window: int | None = None  # the model's own length, where the server tells it apart
    server: str | None = None  # the local server whose own API said so (names the advice in a note)
    draws: bool = False  # its listing says it makes images and no text (an image model, CONTRACT §13)

    def complete(self) -> bool:
        """The list said what a native API would add: whether tools work, and the window served."""
        return self.tools is not None and self.context_window is not None

    def over(self, other: Facts) -> Facts:
        """These facts, with `other`'s where these say nothing."""
        pick = lambda a, b: a if a is not None else b  # noqa: E731
        return Facts(pick(self.tools, other.tools), pick(self.vision, other.vision),
                     pick(self.reasoning, other.reasoning), pick(self.context_window, other.context_window),
                     pick(self.max_output_tokens, other.max_output_tokens), self.chat and other.chat,
                     pick(self.model_window, other.model_window), pick(self.server, other.server),
                     self.draws or other.draws)

    def window(self) -> Window:
        """The window stated (the served one, else the model's own length) beside the model's length."""
        return Window(self.context_window or self.model_window, self.model_window, self.server)


# -- the window a local server runs a model with -------------------------------------

WINDOW_NOTE_PREFIX = "Context window: "
# How to give a model a bigger window on each server, in the note that says it runs a smaller one.
RAISE_WINDOW = {
    "Ollama": "set OLLAMA_CONTEXT_LENGTH on the Ollama server or PARAMETER num_ctx in a Modelfile "
              "and run the model once",
    "LM Studio": "load it in LM Studio with a larger context length",
    "llama.cpp": "start llama-server with a larger --ctx-size (or fewer --parallel slots)",
}


@dataclass(frozen=True)
class Window:
    """The window a server stated for a model (None: it did not say), beside the model's own length."""
    served: int | None
    supports: int | None
    server: str | None

    def note(self) -> str | None:
        """The model card's sentence when the server runs the model below its own length, else None."""
        return self.note_for(self.served)

    def note_for(self, served: int | None) -> str | None:
        """The note for the model run with `served` tokens."""
        if self.server not in RAISE_WINDOW or not (served and self.supports and served < self.supports):
            return None
        return (f"{WINDOW_NOTE_PREFIX}{self.server} runs this model with a {served:,}-token window "
                f"(it supports {self.supports:,}). To use more, {RAISE_WINDOW[self.server]}, "
                f"then use Find models again (Settings → Providers).")


def is_window_note(note: str | None) -> bool:
    return bool(note and note.startswith(WINDOW_NOTE_PREFIX))


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
            # Embeddings, image or audio generators; an image generator is listed apart (discover.py).
            facts = replace(facts, chat=False, draws="image" in _strings(outputs))
    top = item.get("top_provider") if isinstance(item.get("top_provider"), dict) else {}
    meta = item.get("meta") if isinstance(item.get("meta"), dict) else {}
    # OpenRouter routes a request to an endpoint that takes its length, so the model's context_length
    # holds (its top endpoint's when the model states none); vLLM serves max_model_len; a llama.cpp
    # router lists a loaded model's n_ctx and each model's --ctx-size. llama.cpp's n_ctx_train is only
    # what the model was trained for: what a single llama-server serves, /props says.
    window = (_count(item.get("context_length")) or _count(top.get("context_length"))
              or _count(item.get("max_model_len")) or _count(meta.get("n_ctx")) or _ctx_size(item.get("status")))
    return replace(facts, context_window=window, max_output_tokens=_count(top.get("max_completion_tokens")),
                   model_window=_count(meta.get("n_ctx_train")),
                   server="llama.cpp" if item.get("owned_by") == "llamacpp" else None)


def _ctx_size(status) -> int | None:
    """--ctx-size from the command line a llama.cpp router starts (or started) a model with."""
    args = status.get("args") if isinstance(status, dict) else None
    if not isinstance(args, list):
        return None
    for i, arg in enumerate(args):
        name, eq, value = str(arg).partition("=")
        if name in ("-c", "--ctx-size", "-ctx"):
            value = value if eq else (str(args[i + 1]) if i + 1 < len(args) else "")
            return _count(int(value)) if value.isdigit() else None
    return None


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
        loaded = _count(item.get("loaded_context_length"))  # only a loaded model has one
        if not loaded and item["id"] in out:
            continue  # LM Studio may list a model twice, loaded and not: the loaded row says more
        longest = _count(item.get("max_context_length"))
        out[item["id"]] = Facts(
            # Older LM Studio lists no capabilities: then it did not say.
            tools=("tool_use" in _strings(caps)) if isinstance(caps, list) else None,
            vision=(kind == "vlm") if kind in ("llm", "vlm") else None,
            context_window=loaded or longest, model_window=longest, server="LM Studio",
            chat=kind in ("llm", "vlm", None))
    return out


def _num_ctx(parameters) -> int | None:
    """num_ctx from /api/show's `parameters`, the Modelfile's PARAMETER lines ("num_ctx 8192\n…")."""
    if not isinstance(parameters, str):
        return None
    for line in parameters.splitlines():
        key, _, value = line.strip().partition(" ")
        if key == "num_ctx" and value.strip().isdigit():
            return _count(int(value.strip()))
    return None


def _ollama_show(native: _Native, name: str) -> Facts | None:
    """What /api/show says; context_window is the Modelfile's num_ctx (None: it sets none)."""
    data = native.call("/api/show", {"model": name})
    if not isinstance(data, dict) or not ("capabilities" in data or "model_info" in data):
        return None
    info = data.get("model_info") if isinstance(data.get("model_info"), dict) else {}
    longest = next((_count(v) for k, v in info.items() if k.endswith(".context_length") and _count(v)), None)
    num_ctx = _num_ctx(data.get("parameters"))
    if num_ctx is None and data.get("remote_host"):
        num_ctx = longest  # a cloud model runs with its full length
    facts = Facts(context_window=num_ctx, model_window=longest, server="Ollama")
    caps = data.get("capabilities")
    if not isinstance(caps, list):  # an Ollama older than capabilities: only the window is known
        return facts
    caps = _strings(caps)
    return replace(facts, tools="tools" in caps, vision="vision" in caps, reasoning="thinking" in caps,
                   chat="completion" in caps or "embedding" not in caps)


def _tagged(name: str) -> str:
    return name if ":" in name else name + ":latest"  # Ollama's names for the same model


def _ollama_running(native: _Native) -> dict[str, int]:
    """The window each loaded model runs with now, from /api/ps (recent Ollama says context_length)."""
    data = native.call("/api/ps")
    items = data.get("models") if isinstance(data, dict) else None
    out = {}
    for item in items if isinstance(items, list) else []:
        window = _count(item.get("context_length")) if isinstance(item, dict) else None
        for key in ("name", "model"):
            if window and isinstance(item.get(key), str):
                out[_tagged(item[key])] = window
    return out


def _ollama_window(facts: Facts, running: int | None) -> Facts:
    # A request through /v1 takes the Modelfile's num_ctx, else the server's default, which a loaded
    # model shows in /api/ps; Ollama never runs a model past its own length.
    window = facts.context_window or running or OLLAMA_DEFAULT_CTX
    return replace(facts, context_window=min(window, facts.model_window or window))


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
    running = _ollama_running(native)
    return {name: _ollama_window(facts, running.get(_tagged(name))) for name, facts in out.items()}


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
        # One slot's window (--ctx-size, shared among --parallel slots unless the cache is unified):
        # what one request gets.
        context_window=_count(settings.get("n_ctx")) if isinstance(settings, dict) else None,
        server="llama.cpp")
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
