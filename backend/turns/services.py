"""What a turn uses besides its chat's rows: the runtime's collaborators, built once at start-up."""
from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from backend.core import agent
from backend.core.tools import ToolRegistry
from backend.keys import KeyStore
from backend.store.files import FileStore
from backend.turns.toolset import Toolsets


@dataclass(frozen=True)
class TurnServices:
    keys: KeyStore  # provider API keys
    tools: ToolRegistry  # the plugin tools, until a turn knows its chat's model and workspace
    toolsets: Toolsets  # each chat's tool set
    files: FileStore  # attachments, read into model requests (the runtime's one store)
    limits: agent.Limits
    tool_pool: Executor  # tool calls run here, a few at once
    catalog: Any  # the CatalogService (a refused tool set is turned off there); None when run without one
    chat_changed: Callable[[str], None]  # the chat list's row for this chat changed (app events)
    open_stream: Callable  # a model request → its stream of events (backend.providers.open_stream)
    # The features' app-wide services by feature name (a turn's tools reach theirs: knowledge's index).
    feature_services: Mapping[str, Any] = field(default_factory=dict)
