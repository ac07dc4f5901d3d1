"""The person saves a text into the chat's workspace (the documents panel's "Save to workspace").

`POST /api/chats/{id}/workspace/files` `{"path", "content", "overwrite"?}` writes through the
same confinement as the model's `write_file` (backend/tools/workspace_folder.py `Workspace`):
a path relative to the workspace, no `..`, no absolute path, no link out of it, never Numi's
data folder nor a protected file (`.git`, `.envrc`, editor settings), at most 2 MB, written
atomically. The person's click is the approval a model's write would ask for; replacing a
file that exists asks once more: without `"overwrite": true` it is 409 `exists` and nothing
is written. → 200 `{"path", "created", "size"}` (the path as the file tools show it).
"""
from __future__ import annotations

import os

from flask import Blueprint

from backend.api.validate import Fields, json_body
from backend.errors import ApiError, not_found
from backend.runtime import runtime
from backend.store import chats
from backend.tools.workspace import Workspace

bp = Blueprint("workspace_files", __name__)
PATH_MAX = 1024
# Checked again by Workspace.write_text in bytes; here so a huge body is refused by its length first.
CONTENT_MAX_CHARS = 2 * 1024 * 1024


@bp.post("/api/chats/<chat_id>/workspace/files")
def save_file(chat_id):
    chat = chats.get(chat_id)
    if chat is None:
        raise not_found("chat")
    f = Fields(json_body(), ("path", "content", "overwrite"))
    path = f.text("path", max_len=PATH_MAX, required=True, non_empty=True)
    content = f.text("content", max_len=CONTENT_MAX_CHARS, required=True)
    overwrite = f.boolean("overwrite")
    f.check()
    if not chat.workspace:
        raise ApiError(409, "no_workspace", "This chat has no workspace folder. Choose one in Chat settings, "
                                            "then save again.")
    if not os.path.isdir(chat.workspace):
        raise ApiError(409, "workspace_missing", f"The workspace folder {chat.workspace} is no longer there. "
                                                 f"Choose another in Chat settings.")
    workspace = Workspace(chat.workspace, hidden=[runtime().config.data_dir])
    try:
        shown, existing, _size = workspace.current(path, 0)
        if existing is not None and overwrite is not True:
            raise ApiError(409, "exists", f"{shown} already exists in the workspace. Replace it, or save under "
                                          f"another name.", {"path": "A file with this name exists."})
        real, created = workspace.write_text(path, content)
    except ValueError as err:  # outside the workspace, protected, too large: the tools' own sentence
        raise ApiError(422, "invalid", str(err), {"path": str(err)}) from None
    except OSError as err:
        raise ApiError(422, "invalid", f"{path} could not be written: {err.strerror or err}.",
                       {"path": "It could not be written."}) from None
    return {"path": workspace.rel(real), "created": created, "size": len(content.encode("utf-8"))}

