"""Reading an import safely: the file's container (JSON or zip) and Numi's own format.

ChatGPT's format is read by backend/store/import_chatgpt.py, with the types here.
Numi's version 2 links each chat's messages into a tree (`id`, `parent_id`,
`active_leaf_id`), checked to hold together; version 1 is one branch in order.

Nothing here writes anything. Every problem raises ImportRefused with a
sentence for the person; the caller turns it into a 4xx and changes nothing.

A zip is treated as hostile until read: at most MAX_ENTRIES entries; no entry
whose name is absolute, has a drive letter or backslash, or climbs with `..`;
no symlink entries; no encrypted ones; declared sizes within the uncompressed
budget and a compression ratio no real export reaches (MAX_RATIO) — and the
actual bytes are counted while reading, so an entry that lies about its size
is stopped where the lie shows, not after it filled the memory or the disk.
Entries are never extracted by their names: the JSON is read into memory and
attachments are streamed into files/.tmp, hashed as they arrive.
"""
from __future__ import annotations

import base64
import binascii
import json
import math
import os
import re
import stat
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import PurePosixPath
from typing import TypeGuard

from backend.core.status import COMPLETE, INTERRUPTED, MESSAGE_STATUSES, QUEUED, STREAMING
from backend.store import chat_data
from backend.store.chats import TOOL_NAME_MAX, TOOLS_OFF_MAX
from backend.store.export_format import FORMAT, VERSION, ZIP_JSON
from backend.store.files import clean_name

DEFAULT_MAX_IMPORT_MB = 200
MAX_ENTRIES = 10_000
MAX_RATIO = 100  # uncompressed / compressed, for entries over RATIO_FLOOR
RATIO_FLOOR = 1 << 20
UNCOMPRESSED_FACTOR = 4  # a zip may hold up to 4× the import limit once inflated
MAX_TEXT = 2_000_000  # characters of one message's content or reasoning
IMAGE_SIDE = 8192  # pixels a side of a drawn image (CONTRACT §13)
IMAGE_PROMPT = 32_000  # characters of the prompt it was drawn from
ROLES = ("user", "assistant", "tool", "system")
# A message that was being written or waiting when exported is not running here.
IMPORTED_STATUS = {STREAMING: INTERRUPTED, QUEUED: INTERRUPTED}
PARAMS = {"temperature": (0, 2), "top_p": (0, 1), "max_tokens": (1, 1_000_000)}
REASONING_EFFORTS = ("off", "low", "medium", "high")
SHA256 = re.compile(r"^[0-9a-f]{64}$")
# Times an ISO 8601 date can show: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z.
MIN_TIME, MAX_TIME = -62_135_596_800.0, 253_402_300_799.0


class ImportRefused(Exception):
    def __init__(self, message: str, status: int = 422, fields: dict | None = None, code: str = "invalid_import"):
        super().__init__(message)
        self.message, self.status, self.fields, self.code = message, status, fields, code


def max_import_bytes() -> int:
    raw = os.environ.get("NUMI_MAX_IMPORT_MB", "")
    try:
        mb = float(raw) if raw else DEFAULT_MAX_IMPORT_MB
    except ValueError:
        mb = DEFAULT_MAX_IMPORT_MB
    return max(1, int(mb * 1024 * 1024))


@dataclass
class Attachment:
    name: str
    size: int
    sha256: str
    created_at: float | None  # None: not known (the import's own time is used)
    data: bytes | None = None  # inline bytes; else a zip entry files/<sha256>, else already in files/


@dataclass
class ParsedChat:
    """A chat as read from a file. Each message dict holds Message columns, "attachments",
    "source_id" (its id in the file, unique in the chat) and "source_parent" (its parent's
    source id, or None for a root); `active` is the source id of the active branch's last
    message; `source_id` names the chat in the place it came from (None: it cannot be told
    apart from another, so it is always imported anew)."""
    title: str
    model_id: str | None
    folder: str | None
    system_prompt: str
    params: dict
    tools_off: list[str] | None  # CONTRACT §15; None: its folder's
    pinned: bool
    archived: bool
    created_at: float
    updated_at: float
    messages: list[dict] = field(default_factory=list)
    active: str | None = None
    source_id: str | None = None
    # What features keep of the chat (its documents), checked by each: name -> what its `write` takes.
    features: dict = field(default_factory=dict)


# -- the container -------------------------------------------------------------------

class SafeZip:
    """A zip checked up front, whose entries are read with their sizes counted."""

    def __init__(self, path, limit: int):
        self.budget = limit * UNCOMPRESSED_FACTOR
        try:
            self.zf = zipfile.ZipFile(path)
            infos = self.zf.infolist()
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise ImportRefused(f"The file looks like a zip but cannot be read ({exc}).") from None
        if len(infos) > MAX_ENTRIES:
            raise ImportRefused(f"The zip has {len(infos)} entries; an import takes at most {MAX_ENTRIES}.")
        total = 0
        self.entries: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            _check_entry(info)
            total += info.file_size
            if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(1, info.compress_size):
                raise ImportRefused(f"The zip entry {info.filename!r} inflates more than {MAX_RATIO} times "
                                    f"(a zip bomb?). It was not imported.")
            if not info.is_dir():
                self.entries[info.filename] = info
        if total > self.budget:
            raise ImportRefused(f"The zip would inflate to {total} bytes, more than the {self.budget} an "
                                f"import may hold (4× NUMI_MAX_IMPORT_MB).", status=413, code="import_too_large")
        self.read_so_far = 0

    def chunks(self, name: str, chunk: int = 1 << 16):
        """The entry's bytes in chunks, refused the moment they pass its declared size or the budget."""
        info = self.entries[name]
        got = 0
        try:
            with self.zf.open(info) as f:
                while block := f.read(chunk):
                    got += len(block)
                    self.read_so_far += len(block)
                    if got > info.file_size or self.read_so_far > self.budget:
                        raise ImportRefused(f"The zip entry {name!r} holds more than it declares (a zip bomb?). "
                                            f"Nothing was imported.")
                    yield block
        except (zipfile.BadZipFile, zlib_error(), OSError, EOFError) as exc:
            raise ImportRefused(f"The zip entry {name!r} is damaged ({exc}). Nothing was imported.") from None

    def read(self, name: str) -> bytes:
        return b"".join(self.chunks(name))

    def close(self) -> None:
        self.zf.close()


def zlib_error():
    import zlib
    return zlib.error


def _check_entry(info: zipfile.ZipInfo) -> None:
    name = info.filename
    parts = PurePosixPath(name).parts
    if (name.startswith(("/", "\\")) or "\\" in name or "\x00" in name or re.match(r"^[A-Za-z]:", name)
            or ".." in parts):
        raise ImportRefused(f"The zip entry {name!r} points outside the export's folder. "
                            f"Nothing was imported.")
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise ImportRefused(f"The zip entry {name!r} is a symbolic link; exports never hold links. "
                            f"Nothing was imported.")
    if info.flag_bits & 0x1:
        raise ImportRefused(f"The zip entry {name!r} is encrypted; export again without a password.")


def find_document(z: SafeZip) -> tuple[str, bytes]:
    """(kind, json bytes): Numi's numi-export.json, else a ChatGPT conversations.json."""
    if ZIP_JSON in z.entries:
        return "numi", z.read(ZIP_JSON)
    candidates = sorted((n for n in z.entries if PurePosixPath(n).name == "conversations.json"),
                        key=lambda n: n.count("/"))
    if candidates:
        return "chatgpt", z.read(candidates[0])
    raise ImportRefused("The zip has neither numi-export.json (a Numi export) nor conversations.json "
                        "(a ChatGPT data export). Choose one of those.")


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} is too large a number")
    return value


def is_clean_text(text: str) -> bool:
    """Whether `text` can be stored: no lone surrogate (a JSON escape like \\ud800 alone)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def parse_json(raw: bytes):
    try:
        # NaN, Infinity and 1e400 are no JSON numbers: refused here, never stored.
        return json.loads(raw, parse_constant=_no_constant, parse_float=_finite)
    except (ValueError, RecursionError) as exc:
        raise ImportRefused(f"The file is neither a zip nor valid JSON ({str(exc)[:120]}). Choose a Numi "
                            f"export (.json or .zip) or a ChatGPT conversations.json.") from None


def detect(doc) -> str:
    if isinstance(doc, dict) and "format" in doc:
        return "numi"
    if isinstance(doc, list) and all(isinstance(c, dict) and "mapping" in c for c in doc[:5]):
        return "chatgpt"
    raise ImportRefused('This JSON is not an export Numi knows: expected {"format": "numi-export", …} or a '
                        "ChatGPT conversations.json (a list of conversations).")


# -- Numi's format -------------------------------------------------------------------

class _Check:
    """Collects field problems as "chats[0].messages[3].role": sentence."""

    def __init__(self):
        self.errors: dict[str, str] = {}

    def fail(self, where: str, message: str):
        if len(self.errors) < 20:
            self.errors[where] = message
        return None

    def text(self, obj, key, where, *, nullable=False, max_len=MAX_TEXT, default=""):
        value = obj.get(key, default)
        if value is None and nullable:
            return None
        if not isinstance(value, str):
            return self.fail(f"{where}.{key}", "Must be text.")
        if not is_clean_text(value):
            return self.fail(f"{where}.{key}", "Holds text that is not valid Unicode (a lone surrogate).")
        if len(value) > max_len:
            return self.fail(f"{where}.{key}", f"Longer than {max_len} characters.")
        return value

    def time(self, obj, key, where, default=None):
        value = obj.get(key)
        if value is None and default is not None:
            return default
        try:
            dt = datetime.fromisoformat(value)
            if dt.tzinfo is None:
                dt = dt.replace(tzinfo=timezone.utc)
            if not MIN_TIME <= dt.timestamp() <= MAX_TIME:
                raise ValueError("out of range")
            return dt.timestamp()
        except (TypeError, ValueError, OverflowError):
            return self.fail(f"{where}.{key}", "Must be a date and time in ISO 8601, like 2026-01-31T10:00:00.000Z.")

    def json_value(self, obj, key, where, kind):
        value = obj.get(key)
        if value is not None and not isinstance(value, kind):
            return self.fail(f"{where}.{key}", f"Must be {'an object' if kind is dict else 'a list'} or null.")
        if value is not None and not is_clean_text(json.dumps(value, ensure_ascii=False)):
            return self.fail(f"{where}.{key}", "Holds text that is not valid Unicode (a lone surrogate).")
        return value

    def flag(self, obj, key, where) -> bool:
        value = obj.get(key, False)
        if not isinstance(value, bool):
            self.fail(f"{where}.{key}", "Must be true or false.")
        return value is True


def check_format(doc: dict, name: str, newest: int, what: str) -> int:
    """The version of a Numi file of format `name` (`what` names it in sentences: "export"),
    refused when it is another format, damaged or newer than `newest`."""
    if doc.get("format") != name:
        raise ImportRefused(f'This JSON is not a Numi {what} ("format" is {doc.get("format")!r}, '
                            f'expected "{name}").')
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ImportRefused(f'The {what} has no valid "version"; it may be damaged.')
    if version > newest:
        raise ImportRefused(f"This {what} was made by a newer Numi (format version {version}; this one reads "
                            f"up to {newest}). Update Numi, then import it again.")
    return version


def parse_numi(doc: dict) -> list[ParsedChat]:
    version = check_format(doc, FORMAT, VERSION, "export")
    chats = doc.get("chats")
    if not isinstance(chats, list):
        raise ImportRefused('The export has no "chats" list; it may be damaged.')
    c = _Check()
    out = [_numi_chat(c, chat, f"chats[{i}]", version) for i, chat in enumerate(chats)]
    if c.errors:
        where, problem = next(iter(c.errors.items()))
        n = len(c.errors)
        count = "1 problem" if n == 1 else f"{n}{'+' if n >= 20 else ''} problems"
        raise ImportRefused(f"The export has {count}; the first is in {_chat_name(chats, where)}, {where}: {problem} "
                            f"Nothing was imported.", fields=c.errors)
    return out


def _chat_name(chats: list, where: str) -> str:
    """chat N ("its title"): which chat of the export a field path is in."""
    found = re.match(r"chats\[(\d+)\]", where)
    assert found is not None  # every problem found so far is inside one of the chats
    i = int(found.group(1))
    title = chats[i].get("title") if isinstance(chats[i], dict) else None
    if isinstance(title, str) and title.strip() and is_clean_text(title):
        short = title.strip() if len(title.strip()) <= 60 else title.strip()[:59] + "…"
        return f'chat {i + 1} ("{short}")'
    return f"chat {i + 1}"


def _numi_chat(c: _Check, chat, where: str, version: int):
    if not isinstance(chat, dict):
        return c.fail(where, "Must be an object.")
    messages = chat.get("messages")
    if not isinstance(messages, list):
        c.fail(f"{where}.messages", "Must be a list.")
        messages = []
    created = c.time(chat, "created_at", where)
    source = c.text(chat, "id", where, nullable=True, max_len=200, default=None)
    parsed = ParsedChat(
        title=(c.text(chat, "title", where, max_len=10_000) or "")[:300],
        model_id=c.text(chat, "model_id", where, nullable=True, max_len=200, default=None),
        folder=c.text(chat, "folder", where, nullable=True, max_len=200, default=None),
        system_prompt=c.text(chat, "system_prompt", where, max_len=100_000) or "",
        params=_params(c, _or(chat.get("params"), {}), f"{where}.params"),
        tools_off=_tools_off(c, chat, where),
        pinned=c.flag(chat, "pinned", where), archived=c.flag(chat, "archived", where),
        created_at=created, updated_at=c.time(chat, "updated_at", where, default=created),
        messages=[_numi_message(c, m, f"{where}.messages[{j}]") for j, m in enumerate(messages)],
        features=_features(c, chat, where),
    )
    if version == 1:
        # No ids or links: the messages, in order, are one branch; a message is known by its place.
        parsed.source_id = f"numi-v1:{source}" if source else None
        for j, m in enumerate(parsed.messages):
            if m is not None:
                m["source_id"], m["source_parent"] = str(j), str(j - 1) if j else None
        parsed.active = str(len(messages) - 1) if messages else None
    else:
        parsed.source_id = f"numi:{source}" if source else None
        _numi_tree(c, chat, messages, parsed, where)
    return parsed


def _features(c: _Check, chat: dict, where: str) -> dict:
    """What features keep of the chat (`features`: {name: value}), each value checked by its feature
    (backend/store/chat_data.py); a name this Numi does not know is ignored."""
    raw = chat.get("features")
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        return c.fail(f"{where}.features", "Must be an object.") or {}
    out = {}
    for name, data in chat_data.parts().items():
        if name in raw:
            try:
                out[name] = data.check(raw[name])
            except ValueError as exc:
                c.fail(f"{where}.features.{name}", str(exc))
    return out


def _tools_off(c: _Check, chat: dict, where: str) -> list[str] | None:
    """A chat's `tools_off` as the API takes it (CONTRACT §15): null, or at most 500 names of at
    most 200 characters; duplicates dropped."""
    value = c.json_value(chat, "tools_off", where, list)
    if value is None:
        return None
    if len(value) > TOOLS_OFF_MAX or not all(isinstance(n, str) and 0 < len(n) <= TOOL_NAME_MAX for n in value):
        return c.fail(f"{where}.tools_off", f"Must be at most {TOOLS_OFF_MAX} tool names, each 1 to "
                                            f"{TOOL_NAME_MAX} characters.")
    return list(dict.fromkeys(value))


def _numi_tree(c: _Check, chat: dict, messages: list, parsed: ParsedChat, where: str) -> None:
    """Version 2's links: each message's `id` (a whole number, unique in the chat) and
    `parent_id` (null or another message's id), with no loop; `active_leaf_id` null or an id."""
    ids: dict[int, int] = {}  # id -> index
    for j, m in enumerate(messages):
        value = m.get("id") if isinstance(m, dict) else None
        if not _is_id(value) or value in ids:
            c.fail(f"{where}.messages[{j}].id", "Must be a whole number from 0 to 2⁶³−1, unique in its chat.")
        else:
            ids[value] = j
    parent_of: dict[int, int | None] = {}
    for j, m in enumerate(messages):
        if not isinstance(m, dict) or not _is_id(m.get("id")) or ids.get(m["id"]) != j:
            continue
        parent = m.get("parent_id")
        if parent is not None and (not _is_id(parent) or parent not in ids or parent == m["id"]):
            c.fail(f"{where}.messages[{j}].parent_id", "Must be null or the id of another message of this chat.")
            continue
        parent_of[m["id"]] = parent
    loop = _on_a_loop(parent_of)
    if loop is not None:
        c.fail(f"{where}.messages[{ids[loop]}].parent_id",
               "Leads round in a loop of parent_id links that never reaches a first message.")
    leaf = chat.get("active_leaf_id")
    if leaf is not None and (not _is_id(leaf) or leaf not in parent_of):
        c.fail(f"{where}.active_leaf_id", "Must be null or the id of one of this chat's messages.")
    if c.errors:
        return
    for m, raw in zip(parsed.messages, messages):
        m["source_id"] = str(raw["id"])
        m["source_parent"] = None if raw.get("parent_id") is None else str(raw["parent_id"])
    if leaf is None and messages:  # a hand-made file: the branch ending at its last message
        leaf = messages[-1]["id"]
    parsed.active = None if leaf is None else str(leaf)


def _is_id(value) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 63


def _on_a_loop(parent_of: dict):
    """A message whose parent links loop (never reach a root), else None; linear in the links."""
    done: set = set()
    for start in parent_of:
        trail, seen, at = [], set(), start
        while at is not None and at not in done:
            if at in seen:
                return at
            seen.add(at)
            trail.append(at)
            at = parent_of.get(at)
        done.update(trail)
    return None


def _or(value, default):
    """`value`, or `default` for null: an empty {} where a list belongs is still the wrong type."""
    return default if value is None else value


def _params(c: _Check, params, where: str) -> dict:
    if not isinstance(params, dict):
        return c.fail(where, "Must be an object.") or {}
    out = {}
    for key, value in params.items():
        if key in PARAMS:
            lo, hi = PARAMS[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
                c.fail(f"{where}.{key}", f"Must be a number from {lo} to {hi}.")
            else:
                out[key] = value
        elif key == "reasoning_effort":
            if value not in REASONING_EFFORTS:
                c.fail(f"{where}.{key}", f"Must be one of {', '.join(REASONING_EFFORTS)}.")
            else:
                out[key] = value
        else:
            c.fail(f"{where}.{key}", "Not a chat parameter Numi knows.")
    return out


def _numi_message(c: _Check, m, where: str):
    if not isinstance(m, dict):
        return c.fail(where, "Must be an object.")
    role = m.get("role")
    if role not in ROLES:
        c.fail(f"{where}.role", f"Must be one of {', '.join(ROLES)}.")
    status = m.get("status", COMPLETE)
    if status not in MESSAGE_STATUSES:
        c.fail(f"{where}.status", f"Must be one of {', '.join(MESSAGE_STATUSES)}.")
    calls = []
    raw_calls = _or(m.get("tool_calls"), [])
    if not isinstance(raw_calls, list):
        c.fail(f"{where}.tool_calls", "Must be a list.")
        raw_calls = []
    for k, call in enumerate(raw_calls):
        w = f"{where}.tool_calls[{k}]"
        if not isinstance(call, dict) or not all(isinstance(call.get(f), str) for f in ("id", "name", "arguments")):
            c.fail(w, 'Must be {"id", "name", "arguments"}, all text.')
        elif not all(is_clean_text(call[f]) for f in ("id", "name", "arguments")):
            c.fail(w, "Holds text that is not valid Unicode (a lone surrogate).")
        else:
            calls.append({"id": call["id"], "name": call["name"], "arguments": call["arguments"]})
    error = c.json_value(m, "error", where, dict)
    return {
        "role": role,
        "content": c.text(m, "content", where) or "",
        "reasoning_content": c.text(m, "reasoning", where) or "",
        "reasoning_details": c.json_value(m, "reasoning_details", where, list),
        "tool_calls": calls or None,
        "tool_call_id": c.text(m, "tool_call_id", where, nullable=True, max_len=500, default=None),
        "tool_error": c.flag(m, "tool_error", where),
        "citation_sources": c.json_value(m, "citation_sources", where, list),
        "status": IMPORTED_STATUS.get(status, status),
        "model_id": c.text(m, "model_id", where, nullable=True, max_len=200, default=None),
        "usage": c.json_value(m, "usage", where, dict),
        "error": error,
        "created_at": c.time(m, "created_at", where),
        "attachments": _attachments(c, _or(m.get("attachments"), []), f"{where}.attachments"),
        "images": _images(c, _or(m.get("images"), []), f"{where}.images"),
    }


def _attachments(c: _Check, items, where: str) -> list[Attachment]:
    if not isinstance(items, list):
        return c.fail(where, "Must be a list.") or []
    found = (_attachment(c, a, f"{where}[{k}]") for k, a in enumerate(items))
    return [a for a in found if a is not None]


def _attachment(c: _Check, a, w: str) -> Attachment | None:
    """One file as an export gives it (an attachment, a drawn image's file); None when refused."""
    if not isinstance(a, dict):
        return c.fail(w, "Must be an object.")
    sha, size = a.get("sha256"), a.get("size")
    if not isinstance(sha, str) or not SHA256.match(sha):
        return c.fail(f"{w}.sha256", "Must be 64 lowercase hex digits.")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        return c.fail(f"{w}.size", "Must be a whole number of bytes.")
    data = None
    if a.get("data") is not None:
        try:
            data = base64.b64decode(a["data"], validate=True)
        except (binascii.Error, TypeError, ValueError):
            return c.fail(f"{w}.data", "Must be base64.")
    name = c.text(a, "name", w, nullable=True, max_len=10_000, default=None) or "file"
    created = c.time(a, "created_at", w, default=0.0) or None
    return Attachment(name=clean_name(name), size=size, sha256=sha, created_at=created, data=data)


def _images(c: _Check, items, where: str) -> list[dict]:
    """An assistant message's drawn images (CONTRACT §13): {"prompt", "width", "height", "model",
    "backend", "file": Attachment, "thumbnail": Attachment | None} each."""
    if not isinstance(items, list):
        return c.fail(where, "Must be a list.") or []
    out = []
    for k, item in enumerate(items):
        w = f"{where}[{k}]"
        if not isinstance(item, dict):
            c.fail(w, "Must be an object.")
            continue
        width, height = item.get("width"), item.get("height")
        if not all(isinstance(n, int) and not isinstance(n, bool) and 0 < n <= IMAGE_SIDE for n in (width, height)):
            c.fail(w, f"Must have a width and a height, whole numbers from 1 to {IMAGE_SIDE}.")
            continue
        prompt = c.text(item, "prompt", w, max_len=IMAGE_PROMPT)
        model = c.text(item, "model", w, nullable=True, max_len=200, default=None)
        backend = c.text(item, "backend", w, nullable=True, max_len=40, default=None)
        if item.get("file") is None:
            c.fail(f"{w}.file", "Must be the image's file, given as an attachment is.")
            continue
        file = _attachment(c, item["file"], f"{w}.file")
        thumbnail = _attachment(c, item["thumbnail"], f"{w}.thumbnail") if item.get("thumbnail") is not None else None
        if prompt is None or file is None:
            continue
        out.append({"prompt": prompt, "width": width, "height": height, "model": model, "backend": backend,
                    "file": file, "thumbnail": thumbnail})
    return out


def message_files(m: dict) -> list[Attachment]:
    """Every file a parsed message brings: its attachments, then its images' files and thumbnails."""
    drawn = [f for image in m.get("images") or () for f in (image["file"], image["thumbnail"]) if f is not None]
    return [*m["attachments"], *drawn]
