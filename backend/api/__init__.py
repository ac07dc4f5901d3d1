"""HTTP API blueprints (CONTRACT §3), one module per resource."""


def register_all(app) -> None:
    from backend.api import (
        approvals,
        backup,
        catalog,
        chat_tools,
        chats,
        context,
        drafts,
        export,
        files,
        folder_file,
        folders,
        importer,
        mcp,
        messages,
        search,
        settings,
        trash,
        workspace_files,
    )

    for module in (catalog, settings, chats, messages, context, files, folders, folder_file, trash, search, export, importer,
                   backup, approvals, mcp, drafts, chat_tools, workspace_files):
        app.register_blueprint(module.bp)
