"""Turns that belong to the process: the registry, per-chat event hubs and runners."""
