"""Tools the protocol tests load into the server through NUMI_TOOL_PLUGINS."""
import json

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
