"""HTTP API blueprints (CONTRACT §3), one module per resource."""


def register_all(app) -> None:
    from backend.api import catalog, chats, settings

    for module in (catalog, settings, chats):
        app.register_blueprint(module.bp)
