"""A folder as a file (docs/PROTOCOL.md "Folder files"): its settings, not its chats, so a person
can share a project (an assistant) with someone else or take it to another machine.

`GET /api/folders/{id}/export` writes the file; `POST /api/folders/import` makes a new folder of
one. What names this machine's rows travels by what another machine can find: the model by its
API name, knowledge bases by their names (`OwnerField.carry`). On import what is not found here
is left out and said in `notes`; the rest goes through the same checks as `POST /api/folders`.
"""
from __future__ import annotations

import json
import time

from flask import Blueprint, Response

from backend.api import feature_fields
from backend.api.files import _disposition
from backend.api.folders import NAME_MAX, _changes, _folder, _folders_changed, folder_to_dict
from backend.errors import ApiError
from backend.request_body import json_body
from backend.store import export_format as fmt
from backend.store import import_read as rd
from backend.store.db import db
from backend.store.models import Folder, ModelEntry
from backend.turns import features

bp = Blueprint("folder_file", __name__)

FORMAT = "numi-folder"
VERSION = 1
OWN = ("system_prompt", "params", "mode", "tools_off")  # travel as they are
TEXT_MAX = 200  # a carried model name or label


def _refused(sentence: str) -> ApiError:
    return ApiError(422, "invalid", sentence + " Nothing was imported.", {"body": sentence})


# --- export ---------------------------------------------------------------------------------

def _carried_model(model_id: str | None) -> dict | None:
    model = ModelEntry.get_or_none(ModelEntry.id == model_id) if model_id else None
    if model is None:
        return None
    return {"api_model": model.api_model, "label": model.label, "wire_api": model.wire_api}


@bp.get("/api/folders/<folder_id>/export")
def export_folder(folder_id):
    folder = folder_to_dict(_folder(folder_id))
    carried = {"name": folder["name"], **{k: folder[k] for k in OWN}, "model": _carried_model(folder["model_id"])}
    for field in features.owner_fields("folder"):
        value = folder[field.name]
        carried[field.name] = field.carry(value) if field.carry is not None else value
    doc = {"format": FORMAT, "version": VERSION, "exported_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "folder": carried}
    response = Response(json.dumps(doc, ensure_ascii=False, indent=1), mimetype="application/json")
    # A name of no ASCII letter or digit gives no stem: the file is then called for what it is.
    named = any(c.isascii() and c.isalnum() for c in folder["name"])
    stem = fmt.safe_stem(folder["name"]) if named else "folder"
    response.headers["Content-Disposition"] = _disposition("attachment", f"{stem}.numi-folder.json")
    return response


# --- import ---------------------------------------------------------------------------------

def _folder_of(doc: dict) -> dict:
    """The file's folder object, once the file is known to be a folder file this Numi reads."""
    try:
        rd.check_format(doc, FORMAT, VERSION, "folder file")
    except rd.ImportRefused as exc:
        other = doc.get("format") != FORMAT
        raise _refused(exc.message + (" Export a folder from its ⋯ menu (Export settings…) and import that file."
                                      if other else "")) from None
    if "folder" not in doc:
        raise _refused("The folder file has no \"folder\"; it may be damaged.")
    folder = doc["folder"]
    if not isinstance(folder, dict):
        raise _refused("The folder file's \"folder\" must be an object.")
    return folder


def _free_name(name) -> str:
    """The file's name, or the first of “name (2)”, “name (3)”, … no folder here has."""
    if not isinstance(name, str) or not name.strip():
        raise _refused("The folder file's folder has no name.")
    base = " ".join(name.split())[:NAME_MAX]
    taken = {n.lower() for (n,) in Folder.select(Folder.name).tuples()}
    candidate, n = base, 1
    while candidate.lower() in taken:
        n += 1
        suffix = f" ({n})"
        candidate = base[:NAME_MAX - len(suffix)].rstrip() + suffix
    return candidate


def _found_model(carried, notes: list[str]) -> str | None:
    """This machine's model for the file's one: the same API name (the same label first), or none."""
    if carried is None:
        return None
    api_model = carried.get("api_model") if isinstance(carried, dict) else None
    if not isinstance(api_model, str) or not api_model or len(api_model) > TEXT_MAX:
        raise _refused("The folder file's \"model\" must be null or an object with its \"api_model\".")
    label = carried.get("label") if isinstance(carried.get("label"), str) else api_model
    same = list(ModelEntry.select().where(ModelEntry.api_model == api_model).order_by(ModelEntry.created_at))
    if not same:
        notes.append(f"The model “{label[:TEXT_MAX]}” ({api_model}) is not in your catalog, so the folder's chats "
                     f"start with your default model. Add it in Settings → Models, then pick it for the folder.")
        return None
    return next((m for m in same if m.label == label), same[0]).id


@bp.post("/api/folders/import")
def import_folder():
    folder = _folder_of(json_body())
    notes: list[str] = []
    body: dict = {k: folder[k] for k in OWN if k in folder}
    unknown = sorted(set(folder) - set(OWN) - {"name", "model"} - set(feature_fields.names("folder")))
    if unknown:
        notes.append(f"Left out what this Numi does not know: {', '.join(unknown[:10])}.")
    for field in features.owner_fields("folder"):
        if field.name not in folder:
            continue
        value = folder[field.name]
        if field.adopt is not None:
            try:
                value, said = field.adopt(value)
            except features.FieldRefused as exc:
                raise ApiError(422, "invalid", f"The folder file's {field.name}: {exc} Nothing was imported.",
                               {field.name: str(exc)}) from None
            notes.extend(said)
        body[field.name] = value
    with db.atomic():
        body["name"] = _free_name(folder.get("name"))
        body["model_id"] = _found_model(folder.get("model"), notes)
        changes, featured = _changes(body, None)
        made = Folder.create(**changes)
        feature_fields.write("folder", made.id, featured)
    _folders_changed()
    return {"folder": folder_to_dict(made), "notes": notes}, 201
