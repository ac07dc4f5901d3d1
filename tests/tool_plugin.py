"""Tools the protocol tests load into the server through NUMI_TOOL_PLUGINS."""
import json
import os
from pathlib import Path

from backend.core.tools import Tool
from backend.core.types import ToolSpec


def _spec(name, description):
    return ToolSpec(name=name, description=description,
                    parameters={"type": "object", "properties": {"text": {"type": "string"}}})


def register(registry):
    registry.add(Tool(_spec("upper", "Upper-case a text."),
                      lambda args, cancel: args.get("text", "").upper(), concurrent=True))
    registry.add(Tool(_spec("guarded", "Echo a text, after the person allows it."),
                      lambda args, cancel: json.dumps({"echo": args.get("text", "")}), needs_approval=True))
    # The real shell tool, confined to a folder the test names (approval rules and Stop are
    # tested through it; the built-in tools join per chat with the workspace picker).
    if os.environ.get("NUMI_TEST_WORKSPACE"):
        from backend.tools.shell import shell_tool
        registry.add(shell_tool(Path(os.environ["NUMI_TEST_WORKSPACE"]), timeout_default=60))
