"""The features: each a package plugged into the turn engine's points (backend/turns/features.py).

`ALL` names each feature's declaration, one line a feature, in the order they register
(their tools, system text and settings come in this order). A new feature is a package
here plus its line.
"""
from __future__ import annotations

from backend.turns import features

ALL: list[str] = [
    "backend.features.questions",
    "backend.features.plans",
    "backend.features.compaction",
    "backend.features.web",
    "backend.features.research",
    "backend.features.personal",
    "backend.features.knowledge",
    "backend.features.prompts",
    "backend.features.memory",
    "backend.features.documents",
    "backend.features.previews",
    "backend.features.images",
    "backend.features.voice",
]


def register_all() -> None:
    """Register every feature of `ALL` (again: each replaces itself)."""
    import importlib

    for module in ALL:
        features.register(importlib.import_module(module).FEATURE)
