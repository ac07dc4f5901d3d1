"""A scripted fake OpenAI Chat Completions server for tests (see script.py for the format)."""
from . import script
from .control import FakeProviderProcess
from .server import FakeProvider, RecordedRequest

__all__ = ["FakeProvider", "FakeProviderProcess", "RecordedRequest", "script"]
