"""A tool whose output is not valid Unicode, as a plugin or MCP server that cuts text by UTF-16
code units leaves it (loaded with NUMI_TOOL_PLUGINS)."""
from backend.core.tools import Tool
from backend.core.types import ToolSpec


def register(registry):
    spec = ToolSpec(name="cut_text", description="The first code units of a text.",
                    parameters={"type": "object", "properties": {"text": {"type": "string"}}})
    # Cutting "ab😀" after three UTF-16 code units keeps half of the emoji's pair.
    registry.add(Tool(spec, lambda args, cancel: (args.get("text", "") + "\ud83d")[:3]))
