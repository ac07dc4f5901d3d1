"""The turn engine in process: a `TurnRegistry` on a temp database, answered by a scripted model.

No server, socket or provider: a test drives the registry's commands (send, stop,
queue, steer, edit, regenerate, approvals, questions) and reads what its chat's hub
publishes. The model is `ScriptedModel`, handed to the engine as its stream function
(`TurnServices.open_stream`): each request takes the next scripted step, and a `Gate`
in a step holds the reply there until the test opens it or the turn stops.
What the wire adds (framing, resume, pacing) is tested on the real server instead.
"""
from __future__ import annotations

import json
import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

from backend.core import agent
from backend.core.tools import Tool, ToolRegistry
from backend.core.types import ModelRequest, StepEnd, TextDelta, ToolCallDelta, ToolCallStart, ToolSpec, Usage
from backend.features import register_all
from backend.keys import KeyStore
from backend.store import chats, history
from backend.store.db import db, open_database
from backend.store.files import FileStore
from backend.store.models import Chat, ModelEntry, Provider
from backend.store.serialize import message_to_dict
from backend.turns import features
from backend.turns.events import problems
from backend.turns.registry import TurnRegistry
from backend.turns.services import TurnServices
from backend.turns.toolset import Toolsets
from tests import tool_plugin

WAIT_S = 10.0  # the longest any step of a test waits for the engine


class Gate:
    """A point in a scripted reply where the stream waits until `open()` (or the turn stops)."""

    def __init__(self):
        self.reached = threading.Event()
        self._open = threading.Event()

    def open(self) -> None:
        self._open.set()

    def wait_reached(self) -> None:
        assert self.reached.wait(WAIT_S), "the reply never reached its gate"


class _Stream:
    """One scripted model step as the agent loop reads a provider's stream."""

    def __init__(self, events: list):
        self.events = events
        self.closed = threading.Event()

    def __iter__(self):
        for event in self.events:
            if self.closed.is_set():
                return  # a closed stream ends at once, as a provider's does
            if isinstance(event, BaseException):
                raise event  # a provider failure, where the step puts it
            if isinstance(event, Gate):
                event.reached.set()
                while not (event._open.is_set() or self.closed.is_set()):
                    event._open.wait(0.01)
                if self.closed.is_set():
                    return
            else:
                yield event

    def close(self) -> None:
        self.closed.set()

    def __enter__(self):
        return self

    def __exit__(self, *_exc) -> None:
        self.close()


class ScriptedModel:
    """The engine's stream function: each request gets the next step the test queued."""

    def __init__(self):
        self._steps: queue.Queue[list] = queue.Queue()
        self.requests: list[ModelRequest] = []

    def step(self, *events) -> None:
        self._steps.put(list(events))

    def says(self, *parts: str | Gate) -> None:
        """A final answer: text pieces (and gates between them), then usage and stop."""
        events = [p if isinstance(p, Gate) else TextDelta(p) for p in parts]
        self.step(*events, Usage(10, 5), StepEnd("stop"))

    def calls(self, name: str, arguments: dict, call_id: str = "call_1", gate: Gate | None = None,
              text: str = "") -> None:
        """A step that calls one tool (after `text` and `gate`, when given)."""
        self.calls_each([(call_id, name, arguments)], gate, text)

    def calls_each(self, calls: list[tuple[str, str, dict]], gate: Gate | None = None, text: str = "") -> None:
        """A step that calls several tools at once: (call id, tool name, arguments) each."""
        head = [*([TextDelta(text)] if text else []), *([gate] if gate else [])]
        body = [e for i, (call_id, name, args) in enumerate(calls)
                for e in (ToolCallStart(i, call_id, name), ToolCallDelta(i, json.dumps(args)))]
        self.step(*head, *body, Usage(10, 5), StepEnd("tool_calls"))

    def fails(self, error: BaseException) -> None:
        """A step whose request fails with `error` (a provider error) before any reply."""
        self.step(error)

    def __call__(self, request: ModelRequest) -> _Stream:
        self.requests.append(request)
        try:
            return _Stream(self._steps.get(timeout=WAIT_S))
        except queue.Empty:
            raise AssertionError("the engine asked the model more often than the test scripted") from None


class Events:
    """What one chat's hub published, read as a socket would, each event held to its definition."""

    def __init__(self, hub):
        self.sub = hub.subscribe()
        self.seen: list[dict] = []

    def _pull(self) -> None:
        for event in self.sub.pull():
            wrong = problems(event)
            assert not wrong, f"the engine published an event its definition does not allow: {wrong}"
            self.seen.append(event)

    def until(self, kind: str, **match) -> dict:
        """The first event of `kind` (with those field values) not yet returned by `until`."""
        deadline = time.monotonic() + WAIT_S
        start = getattr(self, "_mark", 0)
        while True:
            self.sub.wake.clear()
            self._pull()
            for i in range(start, len(self.seen)):
                event = self.seen[i]
                if event["type"] == kind and all(event.get(k) == v for k, v in match.items()):
                    self._mark = i + 1
                    return event
            left = deadline - time.monotonic()
            assert left > 0, f"no {kind} {match}; got {[e['type'] for e in self.seen][-20:]}"
            self.sub.wake.wait(left)

    def of(self, kind: str) -> list[dict]:
        self._pull()
        return [e for e in self.seen if e["type"] == kind]


class Engine:
    """A turn registry on its own database under `tmp_path`, with one model and a scripted stream."""

    def __init__(self, tmp_path: Path, tools: list[Tool] = (), supports_tools: bool = True):
        data_dir = tmp_path / "data"
        data_dir.mkdir(parents=True, exist_ok=True)
        register_all()  # as the Runtime does: the features plug into the engine
        open_database(str(data_dir / "numi.db"))
        db.connect(reuse_if_open=True)  # the test's thread, as a request's would
        provider = Provider.create(kind="openai_compatible", name="Scripted", base_url="http://127.0.0.1:9/v1")
        self.model_id = ModelEntry.create(provider=provider, wire_api="chat_completions", api_model="scripted",
                                          label="Scripted", supports_tools=supports_tools).id
        self.model = ScriptedModel()
        self.changed: list[str] = []  # chat ids whose chat-list row changed, in order
        self.pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="tool")
        toolsets = Toolsets(ToolRegistry(list(tools)), data_dir, None, keys=None)
        self.services = TurnServices(
            keys=KeyStore(), tools=toolsets.plugins, toolsets=toolsets, files=FileStore.for_data_dir(data_dir),
            limits=agent.Limits(max_steps=20, max_tool_calls=50, max_seconds=60, max_output_chars=1_000_000),
            tool_pool=self.pool, catalog=None, chat_changed=self.changed.append, open_stream=self.model)
        self.turns = TurnRegistry(SimpleNamespace(data_dir=data_dir, epoch="e1"), self.services)
        self.turns.start()

    def chat(self, **fields) -> str:
        """A chat of the scripted model; titled, so no title request takes a scripted step."""
        return Chat.create(model_id=self.model_id, **{"title": "A chat", **fields}).id

    def events(self, chat_id: str) -> Events:
        return Events(self.turns.hub(chat_id))

    def add_model(self, api_model: str, **fields) -> str:
        """Another model of the scripted provider (answered by the same script); its id."""
        provider = ModelEntry.get_by_id(self.model_id).provider
        return ModelEntry.create(provider=provider, wire_api="chat_completions", api_model=api_model,
                                 label=api_model, supports_tools=True, **fields).id

    def set_mode(self, chat_id: str, mode: str) -> None:
        """Change the chat's mode as `PATCH /api/chats/<id>` does: a plan being carried out stops being one."""
        if chats.mode(chat_id) != mode:
            features.mode_changed(chat_id)
            chats.set_mode(chat_id, mode)

    def messages(self, chat_id: str) -> list[dict]:
        """The active branch as `GET …/messages` lists it (queued messages after it), each with its versions."""
        rows, _ = history.branch_page(chat_id, 200)
        rows += history.queued(chat_id)
        versions = history.versions(rows)
        return [{**message_to_dict(r), "versions": versions[r.id]} for r in rows]

    def wait_for_titles(self) -> None:
        """Wait until every title request a finished turn started has ended (titles run on their own thread)."""
        for thread in threading.enumerate():
            if thread.name == "title":
                thread.join(WAIT_S)

    def close(self) -> None:
        self.turns.shutdown(5.0)
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.services.toolsets.close()
        db.close()


def plugin_tools() -> list[Tool]:
    """The tools the protocol tests load into the server (tests/tool_plugin.py): `upper` and `guarded`."""
    registry = ToolRegistry()
    tool_plugin.register(registry)
    return registry.all()


def echo_tool(name: str = "echo", needs_approval: bool = False, ran: list | None = None) -> Tool:
    """A plugin tool that answers with its `text` argument (and notes each call in `ran`)."""

    def run(args: dict, _ctx) -> str:
        if ran is not None:
            ran.append(args)
        return f"echo: {args.get('text', '')}"

    spec = ToolSpec(name=name, description="Repeat the text.",
                    parameters={"type": "object", "properties": {"text": {"type": "string"}}})
    return Tool(spec, run, needs_approval=needs_approval, read_only=True)
