"""The voice feature's app-wide part: the key store and catalog its provider engines use."""
from __future__ import annotations

from backend.turns.features import AppContext, FeatureService


class VoiceService(FeatureService):
    def __init__(self, ctx: AppContext):
        self.keys = ctx.keys
        self.catalog = ctx.catalog
        self.data_dir = ctx.data_dir
