"""The turn engine's extension points: what a feature plugs in without editing the engine.

A feature (backend/features/<name>/) declares one `Feature` and is registered at start-up
(`backend.features.register_all`). Every hook is optional. The engine iterates the
registered features where it builds a chat's tool set (`tools`), a request's system text
(`system_text`), a stored message's place in a request (`quote`), a turn (`bind`,
`before_request`, `runs_turn`), and the app (`settings`, `events`, `migrations`,
`chat_data` for export and import; the routes through `backend/app.py`). A feature imports
this module; the engine never imports a feature (import-linter's `engine-below-features`
contract). docs/FEATURES.md says more.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol

from backend.core.cancel import CancelToken
from backend.core.tools import Tool, ToolRegistry
from backend.core.types import Message, ToolCall
from backend.store import chat_data, migrations
from backend.store import settings as settings_store
from backend.store.chat_data import ChatData
from backend.store.db import db, short_connection
from backend.turns import events


@dataclass(frozen=True)
class Offer:
    """What decides the tools a feature offers one chat's turn."""
    model_calls_tools: bool  # the model can call tools (its `supports.tools`)
    workspace: str | None  # the chat's workspace folder, checked to exist
    mode: str  # the chat's mode (backend/turns/modes.py then holds back what the mode does not allow)
    plan_open: bool  # the chat is carrying out a plan
    keys: Any  # the key store (None where a test runs without one)
    chat_id: str | None = None  # the chat (None: a folder's or the catalog's listing)
    folder_id: str | None = None  # its folder, or the folder being listed


class Refused(Exception):
    """A feature's command cannot be carried out: `code` and a sentence for the person."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


@dataclass(frozen=True)
class TurnHandle:
    """What a running turn hands each feature: its chat, its events, its stop, its newest message."""
    chat_id: str
    turn_id: str
    publish: Callable[..., dict]  # publish(type, **fields) on the chat's hub, as this turn
    cancel: CancelToken
    changed: Callable[[], None]  # the chat list's row of this chat changed (waiting, or no longer)
    message_id: Callable[[], int | None]  # the turn's newest assistant message (saved before its tools run)
    sources: Callable[[], Any]  # the turn's numbered sources (turns/sources.TurnSources), as they stand now
    service: Callable[[str], Any] = lambda name: None  # a feature's app-wide service, by feature name
    # read(what): private content reached the turn another way (outbound.MEMORY: memories in its
    # request), so a call that sends text out asks afterwards (turns/outbound.TurnReads.note).
    read: Callable[[str], None] = lambda what: None


class TurnPart:
    """A feature's share of one turn (what `Feature.bind` returns); every method is optional."""

    commands: frozenset[str] = frozenset()  # the commands for a running turn it carries out (`command`)

    def bind_tools(self, tools: ToolRegistry) -> None:
        """The turn's tool set is known: replace the feature's tools there by this turn's own."""

    def tool_arguments(self, call_id: str, name: str, delta: str) -> None:
        """A piece of a call's arguments (JSON text) as the model writes it, before the call is
        whole: a feature can show what a call is writing while it is written (documents)."""

    def tool_starting(self, call: ToolCall) -> None:
        """A call of the turn is about to run."""

    def cut_short(self, call_id: str | None = None) -> bool:
        """Whether the call (None: any call of this turn) ended because Numi was closing."""
        return False

    def asks(self, call: ToolCall) -> dict | None:
        """Fields for the call's approval card when this feature needs the person to decide it
        whatever the policy (no standing rule then covers it); None when it has no say."""
        return None

    def approved(self, call: ToolCall, arguments: str | None, asked: dict | None) -> None:
        """The person (or a policy) allowed the call; `arguments`: as edited, else None; `asked`: `asks`'s fields."""

    def waiting(self) -> list[dict]:
        """What of the turn waits for the person (the feature's events' fields); lock-free."""
        return []

    def resend(self) -> None:
        """A window resumed: publish again what waits for the person, as new events."""

    def command(self, name: str, **args) -> None:
        """Carry out one of `commands` for this turn (`Refused` when it cannot be)."""


@dataclass(frozen=True)
class BeforeRequest:
    """What `before_request` gets: the turn's request plan, and what it may use to change it."""
    chat: Any  # the chat's row (store/chats.ChatRow)
    model: Any  # its model's row
    plan: Any  # context.Plan, the request as it stands
    tools: ToolRegistry
    services: Any  # TurnServices
    continuing: bool
    cancel: CancelToken
    publish: Callable[..., dict]
    # Why messages are left out (a summary that failed): the engine's `context_trimmed` says it.
    notices: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class TurnRun:
    """What `runs_turn` gets: the turn as it is about to ask the model, and what a feature may use
    to run it itself (its own steps, then `answer` for a streamed reply without tools)."""
    chat_id: str
    user_message_id: int | None
    continuing: bool  # Continue of a cut-off reply: the feature should let the engine go on
    request: Any  # the ModelRequest the turn would send
    publish: Callable[..., dict]
    cancel: CancelToken
    services: Any  # TurnServices: keys, open_stream …
    sources: Any  # the turn's numbered sources (turns/sources.TurnSources): saved on its final reply
    approve: Callable[[ToolCall], Any]  # decide a call as the turn's policies say, asking if need be
    answer: Callable[[Any, CancelToken], Any]  # answer(request, cancel): one reply, no tools → agent.Outcome
    # A reply the feature writes itself (no model stream: a drawn image): open_reply() saves an empty
    # assistant message, streaming, as the turn's last and returns its id; close_reply(id, content)
    # saves its text, completes it as the turn's final reply and announces it (message_saved).
    open_reply: Callable[[], int]
    close_reply: Callable[[int, str], None]


@dataclass(frozen=True)
class AppContext:
    """What a feature's app-wide service is built with: the server's data dir and its shared stores."""
    data_dir: Any  # pathlib.Path
    keys: Any  # the key store (backend/keys.py)
    files: Any  # attachments (backend/store/files.FileStore)
    catalog: Any  # providers and models (backend/catalog/service.CatalogService)
    # What another feature's service offers by name (`FeatureService.provides`), or None: features
    # never import each other, so one that uses another's work finds it here when it runs.
    provided: Callable[[str], Any] = lambda name: None


class Embeddings(Protocol):
    """What a service provides as "embeddings" (knowledge's embedder): vectors for any texts by the
    model Settings → Knowledge names, through the same endpoint, target and client."""

    def model(self) -> str | None:
        """The model vectors are made by now; None while embeddings are off or not usable (not yet
        reached, or failing: tried again later)."""

    def embed(self, texts: list[str], timeout: float | None, model: str) -> list[Any] | None:
        """Each text's normalised float32 vector (a numpy array), in order, or None for a text the
        endpoint refuses alone (it matches nothing); None when it failed (already logged; for a
        while after, None at once without asking) or the model is no longer `model`. `timeout`:
        seconds to wait (None: the provider's own)."""


class Documents(Protocol):
    """What a service provides as "documents" (the documents feature): a chat's documents by id."""

    def content(self, doc_id: str, version: int | None = None) -> tuple[str, str, int, str] | None:
        """(chat_id, language, version, text) of the document at `version` (None: its latest), or
        None when there is no such document or version. Any thread: it opens (and closes) its own
        database connection where the thread has none."""


class FeatureService:
    """A feature's part of the app that outlives requests and turns (a background indexer, a watcher)."""

    def provides(self) -> dict[str, Any]:
        """What it offers other features by name (`AppContext.provided`): e.g. "embeddings"."""
        return {}

    def start(self) -> None:
        """The database is ready and the server is about to take requests."""

    def stop(self, timeout: float) -> None:
        """The app is closing: end background work within `timeout` seconds."""


class FieldRefused(ValueError):
    """An `OwnerField`'s value is refused: the message is the sentence the 422 gives."""


@dataclass(frozen=True)
class OwnerField:
    """A field a feature adds to chats and folders: GET shows it, POST and PATCH set it.

    The feature keeps the value itself (its own table), so the engine's tables stay its own."""
    name: str
    check: Callable[[Any], Any]  # the request's value → what `write` stores; FieldRefused(sentence) if not
    read: Callable[[str, str], Any]  # read(kind, owner_id) → the value GET shows ("chat" or "folder")
    write: Callable[[str, str, Any], None]  # write(kind, owner_id, value), in the request's transaction
    kinds: tuple[str, ...] = ("chat", "folder")
    # A folder file (export and import) carries the value as another machine can take it: `carry`
    # turns what `read` gives into that (knowledge: base names, not this machine's ids), and
    # `adopt` turns it back into a request's value plus sentences on what did not carry over.
    # Without them the value travels as it is and goes through `check`.
    carry: Callable[[Any], Any] | None = None
    adopt: Callable[[Any], tuple[Any, list[str]]] | None = None


@dataclass(frozen=True)
class Feature:
    """One feature's hooks. `name` is its key: registering a name again replaces the feature."""
    name: str
    # The tools it offers a chat's turn, by what the `Offer` says (each turn rebinds its own, `bind`).
    tools: Callable[[Offer], list[Tool]] | None = None
    # Its tools as settings screens list them (descriptions only, never run).
    catalog: Callable[[], list[Tool]] | None = None
    # A part of the request's system text (None or "": nothing), by the chat and the tools offered.
    system_text: Callable[[Any, list[str]], str | None] | None = None
    # System text before the folder's and the chat's own prompts, by the chat (personal: the person's
    # instructions for every chat).
    preamble: Callable[[Any], str | None] | None = None
    # A message the request carries before a stored row (a row's `content_parts`), or None.
    quote: Callable[[Any], Message | None] | None = None
    # Whether the chat is carrying out a plan: modes.py then keeps `update_plan` offered.
    plan_open: Callable[[str], bool] | None = None
    # The person changed the chat's mode (PATCH /api/chats): plans, e.g., stops carrying one out.
    mode_changed: Callable[[str], None] | None = None
    events: tuple[events.Event, ...] = ()  # the chat events it publishes
    settings: tuple[settings_store.Section, ...] = ()  # its sections of GET/PATCH /api/settings
    routes: Callable[[Any], None] | None = None  # routes(app): its HTTP routes (called by backend/app.py)
    migrations: tuple[tuple[str, Callable[[Any], None]], ...] = ()  # (name, fn(db)): each run once
    bind: Callable[[TurnHandle], TurnPart] | None = None  # its share of each turn
    # Before a turn's first request: the plan it sends instead (compaction makes room), or None.
    before_request: Callable[[BeforeRequest], Any] | None = None
    # The turn's outcome (agent.Outcome) when the feature runs the turn itself, else None.
    runs_turn: Callable[[TurnRun], Any] | None = None
    commands: Mapping[str, Callable[..., Any]] = field(default_factory=dict)  # chat commands it carries out
    # Its app-wide service, one per server (the Runtime starts and stops it); routes reach it through
    # `service(app, name)`.
    service: Callable[[AppContext], FeatureService] | None = None
    fields: tuple[OwnerField, ...] = ()  # what it adds to chats and folders (GET, POST, PATCH)
    # Its own data of a chat, which export and import carry (backend/store/chat_data.py).
    chat_data: ChatData | None = None


_lock = threading.Lock()
_features: dict[str, Feature] = {}


def register(feature: Feature) -> Feature:
    """Plug a feature in: its events, settings sections and migrations join the app's."""
    with _lock:
        old = _features.get(feature.name)
        if old is not None:
            events.remove(*(e.name for e in old.events))
        events.add(*feature.events)
        _features[feature.name] = feature
    for section in feature.settings:
        settings_store.register(section)
    chat_data.unregister(feature.name)  # a feature registered again may no longer have one
    if feature.chat_data is not None:
        chat_data.register(feature.name, feature.chat_data)
    for name, fn in feature.migrations:
        migrations.register_named(f"{feature.name}.{name}", fn)
    if feature.migrations and db.database is not None:
        with short_connection():  # a database opened before the feature registered
            migrations.run_named(db)
    return feature


def unregister(name: str) -> None:
    """Unplug a feature (a test's): its events, settings sections and pending migrations go too."""
    with _lock:
        feature = _features.pop(name, None)
        if feature is None:
            return
        events.remove(*(e.name for e in feature.events))
    for section in feature.settings:
        settings_store.unregister(section.name)
    chat_data.unregister(name)
    for migration, _ in feature.migrations:
        migrations.unregister_named(f"{feature.name}.{migration}")


def registered() -> list[Feature]:
    """Every registered feature, in the order they were first registered."""
    return list(_features.values())


def find(name: str) -> Feature | None:
    return _features.get(name)


def service(app, name: str) -> Any:
    """The feature's service in this app (the Runtime made it), or None."""
    return app.extensions["numi"].feature_services.get(name)


def chat_event(app, chat_id: str, type_: str, **fields) -> dict:
    """Publish a chat event from outside a turn (a feature's route: the person changed something),
    on the chat's hub, so every window of the chat hears it; `turn_id` is null."""
    return app.extensions["numi"].turns.hub(chat_id).publish(type_, None, **fields)


def owner_fields(kind: str) -> list[OwnerField]:
    """The fields the features add to a chat ("chat") or a folder ("folder"), in registration order."""
    return [f for feature in registered() for f in feature.fields if kind in f.kinds]


def command(name: str) -> Callable[..., Any]:
    """The command `name` of whichever feature carries it out; LookupError when none does."""
    for feature in registered():
        if name in feature.commands:
            return feature.commands[name]
    raise LookupError(f"no feature carries out {name!r}")


def offered_tools(offer: Offer) -> list[Tool]:
    return [t for f in registered() if f.tools is not None for t in f.tools(offer)]


def catalog_tools() -> list[Tool]:
    return [t for f in registered() if f.catalog is not None for t in f.catalog()]


def system_parts(chat, tool_names: list[str]) -> list[str]:
    """The features' parts of a request's system text, in registration order."""
    parts = (f.system_text(chat, tool_names) for f in registered() if f.system_text is not None)
    return [p for p in parts if p]


def preamble_parts(chat) -> list[str]:
    """The features' text before a request's own prompts, in registration order."""
    parts = (f.preamble(chat) for f in registered() if f.preamble is not None)
    return [p for p in parts if p]


def quote_of(content_parts) -> Message | None:
    for feature in registered():
        if feature.quote is not None and (found := feature.quote(content_parts)) is not None:
            return found
    return None


def plan_open(chat_id: str) -> bool:
    return any(f.plan_open(chat_id) for f in registered() if f.plan_open is not None)


def mode_changed(chat_id: str) -> None:
    """Tell every feature that the person changed the chat's mode."""
    for feature in registered():
        if feature.mode_changed is not None:
            feature.mode_changed(chat_id)


def bind_turn(handle: TurnHandle) -> dict[str, TurnPart]:
    """Each feature's share of a new turn, by feature name."""
    return {f.name: f.bind(handle) for f in registered() if f.bind is not None}
