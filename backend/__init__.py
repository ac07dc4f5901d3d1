"""Numi's backend: the HTTP API, the WebSocket turn protocol and the turn engine."""

__version__ = "0.1.0"
