"""HTTP API blueprints (CONTRACT §3)."""


def register_all(app) -> None:
    pass
