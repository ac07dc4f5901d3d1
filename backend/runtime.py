"""The services one server holds for its lifetime: keys, the catalog file, app events, MCP, turns.

App-wide services hang off this object, not off the turn registry: the API and
the sockets reach them here, and the registry is handed the ones it uses.
"""
from __future__ import annotations

import importlib
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from flask import current_app

from backend.store import housekeeping

log = logging.getLogger(__name__)


def runtime() -> Runtime:
    """The per-app services (keys, app events, the turn engine) for the current request."""
    return current_app.extensions["numi"]


class Runtime:
    """`turns` is the turn engine (CONTRACT §4 commands, running/waiting queries): routes and
    sockets drive it and nothing behind it; `services` is what its turns use, built here."""

    def __init__(self, config):
        from backend.app_events import AppEvents
        from backend.catalog.service import CatalogService
        from backend.features import register_all
        from backend.keys import KeyStore
        from backend.store.files import FileStore
        from backend.turns.mcp_runtime import McpRuntime
        from backend.turns.registry import TurnRegistry
        from backend.turns.services import TurnServices
        from backend.turns.toolset import Toolsets

        self.config = config
        register_all()  # the features plug into the engine before it builds anything (backend/features/)
        self.keys = KeyStore()
        self.catalog = CatalogService(config.data_dir)
        self.files = FileStore.for_data_dir(config.data_dir)  # attachments, content-addressed
        # Chat-level changes for every window's chat list (/ws/_app) and the desktop shell;
        # whether a chat runs or waits is the engine's to say (made just below).
        self.app_events = AppEvents(lambda chat_id: self.turns.is_running(chat_id),
                                    lambda chat_id: self.turns.is_awaiting(chat_id),
                                    lambda chat_id: self.turns.is_asking(chat_id))
        self.mcp = McpRuntime(self.keys)  # the MCP servers of catalog.toml, for turns and the API
        self.toolsets = Toolsets(load_tools(), config.data_dir, self.mcp, keys=self.keys)
        self.feature_services = _feature_services(config, self)
        self.services = TurnServices(
            keys=self.keys, tools=self.toolsets.plugins, toolsets=self.toolsets, files=self.files,
            limits=limits_from_env(),
            tool_pool=ThreadPoolExecutor(max_workers=4, thread_name_prefix="tool"),
            # The catalog: a turn whose tools were refused turns them off there.
            catalog=self.catalog, chat_changed=self.app_events.chat_changed, open_stream=_open_stream,
            feature_services=self.feature_services)
        self.turns = TurnRegistry(config, self.services)
        self.auto_backup = None  # started with the rest, in start()

    def start(self) -> None:
        # Before the first request: catalog.toml is loaded into (or written from) the tables,
        # and what should be gone by now (old trash, temporary chats a crash left) is.
        self.catalog.start()
        self.files.sweep_tmp()
        housekeeping.at_start()
        self.turns.start()
        self.mcp.reload()
        self.auto_backup = _start_auto_backup(self.config.data_dir)
        for name, service in self.feature_services.items():
            try:
                service.start()
            except Exception:
                log.exception("the %s feature could not start; the rest of Numi runs without it", name)
        # The SDKs take most of a second to import; do it now, off the start-up
        # path, rather than in the first turn the person waits on.
        threading.Thread(target=_warm_up, name="warm-up", daemon=True).start()

    def shutdown(self, timeout: float) -> None:
        if self.auto_backup is not None:
            self.auto_backup.stop()  # a copy in progress finishes first (a second or so)
        try:
            self.catalog.stop(timeout=min(2.0, timeout))
        except Exception:
            log.exception("stopping the catalog watcher failed")
        self.turns.shutdown(timeout)
        for name, service in self.feature_services.items():
            try:
                service.stop(min(2.0, timeout))
            except Exception:
                log.exception("stopping the %s feature failed", name)
        self.services.tool_pool.shutdown(wait=False, cancel_futures=True)
        self.toolsets.close()
        self.app_events.close()
        self.mcp.close()
        # Temporary chats end with the app. A reply that would not stop in time keeps its
        # chat (its thread may still write to it); the next start removes it once idle.
        try:
            housekeeping.at_exit(keep=self.turns.running_chat_ids())
        except Exception:
            log.exception("removing temporary chats failed; the next start removes them once idle")


def _feature_services(config, rt) -> dict:
    """Each registered feature's app-wide service, by feature name."""
    from backend.turns import features

    services: dict = {}

    def provided(name: str):
        # Looked up at each use: services are made in registration order, so one made early may
        # ask for what a later one provides.
        for service in services.values():
            found = service.provides().get(name)
            if found is not None:
                return found
        return None

    context = features.AppContext(data_dir=config.data_dir, keys=rt.keys, files=rt.files, catalog=rt.catalog,
                                  provided=provided)
    for f in features.registered():
        if f.service is not None:
            services[f.name] = f.service(context)
    return services


def limits_from_env():
    """A turn's limits (steps, tool calls, seconds, output), as the environment sets them."""
    from backend.core import agent

    env = os.environ.get
    return agent.Limits(max_steps=int(env("NUMI_MAX_STEPS", 20)),
                        max_tool_calls=int(env("NUMI_MAX_TOOL_CALLS", 50)),
                        max_seconds=float(env("NUMI_MAX_TURN_SECONDS", 600)),
                        max_output_chars=int(env("NUMI_MAX_OUTPUT_CHARS", 1_000_000)))


def load_tools():
    """Built-in tools arrive with their own issue; NUMI_TOOL_PLUGINS names modules with register(registry)."""
    from backend.core.tools import ToolRegistry

    registry = ToolRegistry()
    for name in filter(None, os.environ.get("NUMI_TOOL_PLUGINS", "").split(",")):
        importlib.import_module(name.strip()).register(registry)
    return registry


def _open_stream(request):
    """The providers' stream function, imported on first use (the SDKs are slow to import)."""
    from backend.providers import open_stream

    return open_stream(request)


def _start_auto_backup(data_dir):
    """The daily copy of numi.db (NUMI_AUTO_BACKUP=0: none); docs/PROTOCOL.md, "Backup"."""
    from backend.store import backup

    if not backup.auto_enabled():
        return None
    auto = backup.AutoBackup(data_dir)
    auto.start()
    return auto


def _warm_up() -> None:
    for name in ("backend.providers", "backend.providers.chat_completions"):
        try:
            importlib.import_module(name)
        except Exception:
            pass  # the first turn reports a real import problem with a proper error
