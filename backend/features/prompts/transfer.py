"""Prompts in the full export and back on import (CONTRACT §12; docs/PROTOCOL.md "Export and import").

The export's JSON gains `"prompts": [{"id", "name", "command", "content", "created_at", "updated_at"}]`
(its format version stays 2: a Numi that predates prompts reads the chats and ignores the list;
an export without it imports as before). On import a prompt whose command is free is added; one
whose command is here already with the same name and text counts as already here; one whose
command is here with other text is left out and the prompt here is kept (`clashed` lists those
commands), so an import never changes a prompt the person has.
"""
from __future__ import annotations

import time
from datetime import datetime, timezone

from backend.features.prompts import library
from backend.features.prompts.text import CONTENT_MAX, NAME_MAX, VARIABLES_MAX, command_problem, variables
from backend.store.db import db
from backend.store.import_read import ImportRefused, is_clean_text
from backend.store.serialize import iso

MAX_PROMPTS = 10_000


def exported() -> list[dict]:
    """Every prompt in the export's shape."""
    return [{"id": p.id, "name": p.name, "command": p.command, "content": p.content,
             "created_at": iso(p.created_at), "updated_at": iso(p.updated_at)} for p in library.all_prompts()]


def _time(value) -> float | None:
    try:
        dt = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    try:
        stamp = dt.timestamp()
    except (OverflowError, ValueError):
        return None
    return stamp if 0 <= stamp <= 253_402_300_799 else None


def _text(errors: dict, item: dict, key: str, where: str, most: int) -> str | None:
    value = item.get(key)
    if not isinstance(value, str) or not value.strip():
        errors[f"{where}.{key}"] = "Must be text that is not empty."
    elif not is_clean_text(value):
        errors[f"{where}.{key}"] = "Holds text that is not valid Unicode (a lone surrogate)."
    elif len(value) > most:
        errors[f"{where}.{key}"] = f"Longer than {most:,} characters."
    else:
        return value
    return None


def parse(doc: dict) -> list[dict]:
    """The export's prompts, checked (none when it has no list); ImportRefused when any is malformed."""
    items = doc.get("prompts")
    if items is None:
        return []
    if not isinstance(items, list):
        raise ImportRefused('The export\'s "prompts" is not a list; it may be damaged. Nothing was imported.')
    if len(items) > MAX_PROMPTS:
        raise ImportRefused(f"The export holds {len(items):,} prompts; Numi imports at most {MAX_PROMPTS:,}. "
                            f"Nothing was imported.")
    errors: dict[str, str] = {}
    out = []
    for i, item in enumerate(items):
        where = f"prompts[{i}]"
        if not isinstance(item, dict):
            errors[where] = "Must be an object."
            continue
        name = _text(errors, item, "name", where, NAME_MAX)
        command = _text(errors, item, "command", where, 10_000)
        content = _text(errors, item, "content", where, CONTENT_MAX)
        if command is not None and (problem := command_problem(command)):
            errors[f"{where}.command"] = problem
            command = None
        if content is not None and len(variables(content)) > VARIABLES_MAX:
            errors[f"{where}.content"] = f"Asks for more than {VARIABLES_MAX} variables."
            content = None
        if name is not None and command is not None and content is not None:
            now = time.time()
            created = _time(item.get("created_at")) or now
            out.append({"name": name.strip(), "command": command, "content": content, "created_at": created,
                        "updated_at": max(created, _time(item.get("updated_at")) or created)})
    if errors:
        where, problem = next(iter(errors.items()))
        raise ImportRefused(f"The export's prompts have {len(errors)} problem{'s' if len(errors) > 1 else ''}; "
                            f"the first is in {where}: {problem} Nothing was imported.", fields=errors)
    return out


def write(prompts: list[dict]) -> dict:
    """Add the checked prompts (in the caller's transaction, or one of their own); what happened to them:
    `added` and `already` counts, and `clashed`, the commands whose prompt here was kept."""
    added = already = 0
    clashed: list[str] = []
    with db.atomic():
        for p in prompts:
            if library.add_unless_taken(p["name"], p["command"], p["content"], p["created_at"], p["updated_at"]):
                added += 1
                continue
            here = library.by_command(p["command"])
            if here is not None and (here.name, here.content) == (p["name"], p["content"]):
                already += 1
            elif p["command"] not in clashed:
                clashed.append(p["command"])
    return {"added": added, "already": already, "clashed": clashed}
