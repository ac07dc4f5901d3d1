"""The vendor-free core: message and stream types, the agent loop, history and tools.

Nothing in here imports Flask, peewee or a provider SDK.
"""
