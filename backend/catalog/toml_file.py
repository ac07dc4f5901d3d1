"""catalog.toml: its format, and strict parsing and checking (render.py writes it).

Parsing uses the standard library's tomllib (strict, with line numbers for
syntax errors); the checks after it find the line of the offending table or
key in the text, so an error always says where to look.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from backend.catalog import mcp_file

# ID_RE, SECRET_VALUE and CatalogError are imported from here by the API and the package.
from backend.catalog.checks import ID_RE, SECRET_NAME, SECRET_VALUE, CatalogError, _fail, _Table  # noqa: F401

KINDS = ("openai", "anthropic", "openai_compatible")
WIRE_APIS = ("chat_completions", "responses", "anthropic_messages")
DEFAULT_WIRE_API = {"openai": "responses", "anthropic": "anthropic_messages"}
FORMAT_VERSION = 1
DEFAULT_TIMEOUT = 60.0
MAX_FALLBACKS = 10
MAX_NOTE = 500
CAPABILITIES = ("tools", "vision", "reasoning")

PROVIDER_KEYS = ("id", "kind", "name", "base_url", "enabled", "timeout")
MODEL_KEYS = ("id", "provider", "wire_api", "api_model", "label", "context_window", "max_output_tokens",
              "supports", "fallbacks", "price_input", "price_output", "note")
KEY_ADVICE = ("API keys never go in catalog.toml: set the key in Numi (Settings → Providers), "
              "which keeps it in the OS keyring.")
MCP_KEY_ADVICE = ("Secrets never go in catalog.toml: list the HTTP header's name in `secret_headers` and set "
                  "its value in Numi (Settings → MCP servers), which keeps it in the OS keyring.")
MCP_ENV_ADVICE = ("Secrets never go in catalog.toml, and Numi cannot yet keep a stdio server's environment "
                  "variables in the keyring: let the server read the secret itself (a wrapper script, its own "
                  "config), or use an http server with `secret_headers`.")
SECTIONS = ("providers", "models", "mcp_servers")
# Provider keys and MCP secret headers share the keyring's namespace (backend/keys.py): MCP takes `mcp:…`.
RESERVED_PREFIX = "mcp:"



def default_wire_api(kind: str) -> str:
    return DEFAULT_WIRE_API.get(kind, "chat_completions")


@dataclass
class CatalogData:
    """The checked catalog in canonical form: plain dicts, None for 'not set'."""
    providers: list[dict]
    models: list[dict]
    mcp_servers: list[dict] = field(default_factory=list)  # mcp_file.mcp_server's form


# -- finding lines ------------------------------------------------------------------

class _Lines:
    """Line numbers of tables and keys in the text, for error messages."""

    HEADER_RE = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.\"' -]+?)\s*\]\]?")

    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.headers = [(i + 1, m.group(1).strip("\"' "), self.lines[i].lstrip().startswith("[["))
                        for i, line in enumerate(self.lines) if (m := self.HEADER_RE.match(line))]

    def table(self, section: str, index: int) -> tuple[int | None, int | None]:
        """(first, last) line of the index-th [[section]] table; (None, None) when not found."""
        found = [n for n, name, aot in self.headers if aot and name == section]
        if index >= len(found):
            return None, None
        first = found[index]
        # A sub-table such as [mcp_servers.env] belongs to the table above it.
        later = [n for n, name, aot in self.headers if n > first and (aot or not name.startswith(section + "."))]
        return first, (later[0] - 1 if later else len(self.lines))

    def key(self, span: tuple[int | None, int | None], key: str) -> int | None:
        first, last = span
        if first is None:
            return self.top_key(key)
        pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*[=.]")
        for n in range(first, last + 1):
            if pattern.match(self.lines[n - 1]):
                return n
        return first

    def top_key(self, key: str) -> int | None:
        pattern = re.compile(rf"^\s*(\[\[?\s*)?[\"']?{re.escape(key)}[\"']?\s*([=.\]])")
        end = self.headers[0][0] - 1 if self.headers else len(self.lines)
        for n in range(1, len(self.lines) + 1):
            line = self.lines[n - 1]
            if pattern.match(line) and (n <= end or line.lstrip().startswith("[")):
                return n
        return None


# -- parsing and checking -----------------------------------------------------------

def parse(text: str) -> CatalogData:
    """The checked catalog in `text`; CatalogError naming the first problem and its line."""
    if not text.strip():
        # An editor that truncates before writing shows us an empty file for a moment;
        # treating that as "remove everything" would wipe the catalog.
        raise CatalogError("catalog.toml is empty. Numi keeps the current catalog; to remove every "
                           "provider, keep the file with just the line `version = 1`.", None)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        line = int(found.group(1)) if found else None
        if line is None and "end of document" in str(exc):
            line = max(1, len(text.splitlines()))
        where = f"catalog.toml line {line}" if line else "catalog.toml"
        raise CatalogError(f"{where} is not valid TOML: {exc}. Numi keeps the last good catalog "
                           "until the file is fixed.", line) from None
    lines = _Lines(text)
    _refuse_secrets(doc, lines)
    for key in doc:
        if key not in ("version",) + SECTIONS:
            _fail(f"unknown entry `{key}`. The file holds `version`, [[providers]], [[models]] and "
                  "[[mcp_servers]] tables.", lines.top_key(key))
    if "version" in doc and doc["version"] != FORMAT_VERSION:
        _fail(f"`version` must be {FORMAT_VERSION} (this Numi reads catalog format {FORMAT_VERSION}).",
              lines.top_key("version"))
    providers = [_provider(t, i, lines) for i, t in enumerate(_tables(doc, "providers", lines))]
    kinds = _unique(providers, "providers", lines)
    models = [_model(t, i, lines, kinds) for i, t in enumerate(_tables(doc, "models", lines))]
    _unique(models, "models", lines)
    _check_fallbacks(models, lines)
    servers = [mcp_file.mcp_server(t, i, lines) for i, t in enumerate(_tables(doc, "mcp_servers", lines))]
    mcp_file.unique(servers, lines, _fail)
    return CatalogData(providers, models, servers)


def _refuse_secrets(doc: dict, lines: _Lines) -> None:
    def line_of(section, index, path, key):
        if not section:
            return lines.top_key(key)
        span = lines.table(section, index)
        found = lines.key(span, key)
        if found == span[0] and len(path) > 1:
            # A key inside an inline table (env, headers): its own line is that of the table's key.
            found = lines.key(span, path[1])
        return found

    def walk(value, section, index, path):
        advice = KEY_ADVICE
        if section == "mcp_servers":
            advice = MCP_ENV_ADVICE if path[1:2] == ["env"] else MCP_KEY_ADVICE
        if isinstance(value, dict):
            for k, v in value.items():
                if SECRET_NAME.search(k):
                    _fail(f"`{k}` looks like an API key. {advice} Remove that line.",
                          line_of(section, index, path, k))
                walk(v, section, index, path + [k])
        elif isinstance(value, list):
            for item in value:
                walk(item, section, index, path)
        elif isinstance(value, str) and SECRET_VALUE.search(value):
            _fail(f"the value of `{path[-1]}` looks like an API key. {advice} Remove it.",
                  line_of(section, index, path[:-1], path[-1] if section else path[0]))

    for key, value in doc.items():
        if key in SECTIONS and isinstance(value, list):
            for i, table in enumerate(value):
                walk(table, key, i, [key])
        else:
            walk({key: value}, None, 0, [])


def _tables(doc: dict, section: str, lines: _Lines) -> list[dict]:
    value = doc.get(section, [])
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        _fail(f"`{section}` must be a list of tables, each written as [[{section}]].", lines.top_key(section))
    return value


def _provider(table: dict, index: int, lines: _Lines) -> dict:
    t = _Table(table, "providers", index, lines, PROVIDER_KEYS)
    provider_id = t.ident("id")
    if provider_id.lower().startswith(RESERVED_PREFIX):
        t.fail("id", f"provider ids starting with `{RESERVED_PREFIX}` are reserved (Numi keeps MCP servers' "
                     "secrets under those names); choose another id.")
    provider = {
        "id": provider_id,
        "kind": t.choice("kind", KINDS, required=True),
        "name": t.text("name", required=True, max_len=100),
        "base_url": t.text("base_url", max_len=2000),
        "enabled": t.boolean("enabled", True),
        "timeout": t.number("timeout", 1, 600, default=DEFAULT_TIMEOUT),
    }
    url = provider["base_url"]
    if url is not None:
        parts = urlsplit(url)
        try:
            parts.port  # noqa: B018 — raises on a port that is not a number
            bad = parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url)
        except ValueError:
            bad = True
        if bad:
            t.fail("base_url", "`base_url` must be an http:// or https:// URL, such as http://127.0.0.1:11434/v1.")
    elif provider["kind"] == "openai_compatible":
        t.fail(None, "`base_url` is missing; an OpenAI-compatible server needs its API root, "
                     "such as base_url = \"http://127.0.0.1:11434/v1\".")
    return provider


def _model(table: dict, index: int, lines: _Lines, kinds: dict) -> dict:
    t = _Table(table, "models", index, lines, MODEL_KEYS)
    model_id = t.ident("id")
    provider = t.ident("provider")
    if provider not in kinds:
        known = ", ".join(f'"{p}"' for p in kinds) or "none yet"
        t.fail("provider", f'`provider` = "{provider}" is not the id of any [[providers]] table '
                           f"(known: {known}).")
    api_model = t.text("api_model", required=True, max_len=300)
    supports = table.get("supports", {})
    if not isinstance(supports, dict):
        t.fail("supports", "`supports` must be a table like { tools = true, vision = false, reasoning = false }.")
    for key, value in supports.items():
        if key not in CAPABILITIES:
            t.fail("supports", f"`supports.{key}` is not known; use tools, vision and reasoning.")
        if not isinstance(value, bool):
            t.fail("supports", f"`supports.{key}` must be true or false (no quotes).")
    fallbacks = table.get("fallbacks", [])
    if not isinstance(fallbacks, list) or not all(isinstance(f, str) for f in fallbacks):
        t.fail("fallbacks", "`fallbacks` must be a list of model ids, like [\"gpt-4o\", \"llama3\"].")
    if len(fallbacks) > MAX_FALLBACKS:
        t.fail("fallbacks", f"`fallbacks` lists more than {MAX_FALLBACKS} models.")
    if len(set(fallbacks)) != len(fallbacks) or model_id in fallbacks:
        t.fail("fallbacks", "`fallbacks` must list each other model once, and not the model itself.")
    return {
        "id": model_id,
        "provider": provider,
        "wire_api": t.choice("wire_api", WIRE_APIS, default=default_wire_api(kinds[provider])),
        "api_model": api_model,
        "label": t.text("label", max_len=200) or api_model,
        "context_window": t.number("context_window", 1, 100_000_000, integer=True),
        "max_output_tokens": t.number("max_output_tokens", 1, 10_000_000, integer=True),
        "supports": {c: bool(supports.get(c, False)) for c in CAPABILITIES},
        "fallbacks": list(fallbacks),
        "price_input": t.number("price_input", 0, 1_000_000),
        "price_output": t.number("price_output", 0, 1_000_000),
        "note": t.text("note", max_len=MAX_NOTE),
        "_index": index,
    }


def _unique(items: list[dict], section: str, lines: _Lines) -> dict:
    seen: dict = {}
    for i, item in enumerate(items):
        if item["id"] in seen:
            first = lines.table(section, list(seen).index(item["id"]))[0]
            span = lines.table(section, i)
            also = f" (also at line {first})" if first else ""
            _fail(f'the id "{item["id"]}" is used twice{also}; every table needs its own id.',
                  lines.key(span, "id") if span[0] else None)
        seen[item["id"]] = item.get("kind")
    return seen


def _check_fallbacks(models: list[dict], lines: _Lines) -> None:
    ids = {m["id"] for m in models}
    for m in models:
        for other in m["fallbacks"]:
            if other not in ids:
                span = lines.table("models", m["_index"])
                _fail(f'model "{m["id"]}": fallback "{other}" is not the id of any [[models]] table.',
                      lines.key(span, "fallbacks"))
    for m in models:
        del m["_index"]
