"""Whether a tool call runs: the chat's policy for the tool, the default policy, and the
standing ("always") rules a person gave.

A policy is `ask`, `allow` or `deny` per tool name, set per chat or as a default for
every chat; a tool with none follows its own default, which the chat's mode may change
(backend/turns/modes.py): it asks when it declares `needs_approval` and runs otherwise.
A standing rule is what "allow always" leaves behind. For most tools it covers the
tool; for a command-running tool it covers one exact command line, and only one that
cannot smuggle a second command in (backend/tools/command_rules.py) — anything else
asks every time; for `web_fetch` it covers one origin (scheme, host and port). A fetch
into the person's own network asks whatever the rules say (backend/turns/runner.py), so
no rule ever covers one.

Where no sandbox can confine the shell (backend/tools/sandbox.py), a command could read
everything the person can, Numi's secrets included: then the shell asks before every
command, whatever its policy or standing rules say, and "allow always" leaves no rule.
"""
from __future__ import annotations

import hashlib
import json

from backend.core.types import ToolCall
from backend.store import chat_state, settings
from backend.store.db import db
from backend.tools import fetch_guard, sandbox
from backend.tools.command_rules import rule_matches, standing_rule_allowed, trimmed
from backend.tools.fetch import NAME as FETCH
from backend.turns import modes
from backend.turns.toolset import shell_network

POLICIES = ("ask", "allow", "deny")
DEFAULT_KEY = "tool_policy_default"  # an app setting: the policies for every chat
POLICY_KEY = "tool_policy"  # a chat's own state (backend/store/chat_state.py): its policies
RULES_KEY = "allow_always"  # a chat's own state: its standing rules
# Tools whose standing rule is one exact value of an argument, not the whole tool.
EXACT_RULES = {"shell": "command"}
# Tools that run what they are given on the person's behalf: without a sandbox, each call asks.
CONFINED = {"shell"}


def unconfined(tool: str) -> bool:
    """Whether calls of `tool` would run outside a sandbox, so that each one must be asked about."""
    return tool in CONFINED and not sandbox.status().available


# --- policies ---------------------------------------------------------------------------

def policies(chat_id: str | None) -> dict[str, str]:
    """The policies set for the chat (or, with None, the defaults), by tool name."""
    if chat_id:
        return dict(chat_state.get(chat_id, POLICY_KEY, {}))
    return dict(settings.get(DEFAULT_KEY, {}))


def set_policy(chat_id: str | None, tool: str, policy: str | None) -> None:
    """Set (or with None clear) one tool's policy for the chat, or as the default."""
    with db.atomic():
        current = policies(chat_id)
        if policy is None:
            current.pop(tool, None)
        else:
            current[tool] = policy
        if chat_id:
            chat_state.put(chat_id, POLICY_KEY, current or None)
        else:
            settings.put(DEFAULT_KEY, current)


def set_policy_of(chat_id: str, tool: str) -> str | None:
    """The policy the person set for the tool, in the chat or as the default; None when neither."""
    return policies(chat_id).get(tool) or policies(None).get(tool)


def policy_for(chat_id: str, tool: str, needs_approval: bool, mode: str = modes.DEFAULT) -> str:
    policy = (policies(chat_id).get(tool) or policies(None).get(tool)
              or modes.own_policy(mode, tool, needs_approval, shell_network))
    return "ask" if policy == "allow" and unconfined(tool) else policy


# --- tools that can change under the person (MCP servers) ------------------------------------
# A server can change what a tool says it does after the person trusted it ("tool poisoning"):
# such a tool's name, description and schema are fingerprinted when a call is approved, and
# any change asks again, whatever the policy or rules say. Never approved counts as changed.
WATCHED_PREFIX = "mcp__"


def fingerprint(tool) -> str:
    spec = tool.spec
    canonical = json.dumps({"name": spec.name, "description": spec.description, "parameters": spec.parameters},
                           sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def unapproved_change(tool) -> bool:
    if tool is None or not tool.name.startswith(WATCHED_PREFIX):
        return False
    return settings.get(f"tool_approved:{tool.name}") != fingerprint(tool)


def approved_as_is(tool) -> None:
    if tool is not None and tool.name.startswith(WATCHED_PREFIX):
        settings.put(f"tool_approved:{tool.name}", fingerprint(tool))


# --- standing rules -----------------------------------------------------------------------

def _arguments(call: ToolCall) -> dict:
    try:
        args = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return {}
    return args if isinstance(args, dict) else {}


def _fetch_origin(url) -> str | None:
    try:
        return fetch_guard.origin(url.strip()) if isinstance(url, str) else None
    except ValueError:
        return None


def rule_for(call: ToolCall) -> dict | None:
    """The standing rule "allow always" may store for this call, or None when it must ask each time."""
    if unconfined(call.name):
        return None
    if call.name == FETCH:
        # One site, never the whole web: a later call elsewhere asks again. Research's reads of
        # many pages at once (`urls`) leave no rule.
        site = _fetch_origin(_arguments(call).get("url"))
        return {"tool": FETCH, "origin": site} if site else None
    field = EXACT_RULES.get(call.name)
    if field is None:
        return {"tool": call.name}
    value = _arguments(call).get(field)
    if not isinstance(value, str) or not standing_rule_allowed(value):
        return None
    return {"tool": call.name, field: trimmed(value)}


def _listed(stored) -> list[dict]:
    # Rules were once stored as bare tool names.
    return [{"tool": r} if isinstance(r, str) else dict(r) for r in stored]


def rules(chat_id: str) -> list[dict]:
    return _listed(chat_state.get(chat_id, RULES_KEY, []))


def _fetch_covered(chat_id: str, call: ToolCall) -> bool:
    """Whether rules cover every page the call reads: `url`, or research's `urls`. A rule stored
    without an origin (before rules were per site) covers every public page."""
    args = _arguments(call)
    urls = args.get("urls") if "urls" in args else [args.get("url")]
    if not isinstance(urls, list) or not urls:
        return False
    sites = {r.get("origin") for r in rules(chat_id) if r.get("tool") == FETCH}
    if None in sites:
        return True
    return all(_fetch_origin(url) in sites for url in urls)


def covered(chat_id: str, call: ToolCall) -> bool:
    """Whether a standing rule of the chat allows this exact call."""
    if unconfined(call.name):
        return False
    if call.name == FETCH:
        return _fetch_covered(chat_id, call)
    field = EXACT_RULES.get(call.name)
    value = _arguments(call).get(field) if field else None
    for rule in rules(chat_id):
        if rule.get("tool") != call.name:
            continue
        if field is None:
            return True
        if isinstance(value, str) and isinstance(rule.get(field), str) and rule_matches(rule[field], value):
            return True
    return False


def remember(chat_id: str, rule: dict) -> None:
    with db.atomic():
        current = rules(chat_id)
        if rule not in current:
            chat_state.put(chat_id, RULES_KEY, current + [rule])


def forget(chat_id: str, rule: dict) -> bool:
    with db.atomic():
        current = rules(chat_id)
        if rule not in current:
            return False
        chat_state.put(chat_id, RULES_KEY, [r for r in current if r != rule] or None)
        return True


def all_rules() -> list[dict]:
    """Every chat's standing rules, each with its chat id."""
    return [{"chat_id": chat_id, **r} for chat_id, stored in chat_state.of_every_chat(RULES_KEY)
            for r in _listed(stored)]
