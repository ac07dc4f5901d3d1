"""Numi's export format (version 2), its Markdown rendering and the bulk zip.

The JSON (docs/PROTOCOL.md, "Export and import"):

    {"format": "numi-export", "version": 2, "exported_at": iso, "app_version": str,
     "chats": [{"id", "title", "model_id", "folder", "system_prompt", "params", "tools_off", "pinned",
                "archived", "created_at", "updated_at", "active_leaf_id",
                "messages": [{"id", "parent_id", "role", "content", "reasoning", "reasoning_details",
                              "tool_calls", "tool_call_id", "tool_error", "citation_sources", "status",
                              "model_id", "usage", "error", "created_at",
                              "attachments": [{"name", "mime", "size", "sha256", "created_at",
                                               "data"?}],
                              "images"?: [{"prompt", "width", "height", "model", "backend",
                                           "file": attachment, "thumbnail"?: attachment}]}],
                "features"?: {name: value}}]}

Every version of every message is there: `parent_id` links them into the chat's tree and
`active_leaf_id` ends the branch the person saw. Ids are the exporting database's own
message ids, so a later export of the same chat names the same message the same way (an
import uses that to add only what is new). Version 1 had neither ids nor links: one branch.

An assistant message that drew images (CONTRACT §13) lists them under `images`, each with its
file (and its thumbnail's) in the attachments' shape, so their bytes travel as attachments' do;
it is left out when there are none.

A chat's `features` holds what features keep of it beyond its messages (its documents), each
under the feature's name as that feature exports it (backend/store/chat_data.py); it is left out
when there is nothing.

The full export (the zip) also carries the prompt library as `"prompts": [{"id", "name",
"command", "content", "created_at", "updated_at"}]` (backend/features/prompts/transfer.py);
older exports have no such list, and a Numi that predates it ignores it.

Bytes travel either inline (`data`, base64: a single chat's JSON is complete on
its own) or beside the JSON in the zip as `files/<sha256>` (no `data`). No
provider, key, catalog or setting is ever part of an export: only chats (and prompts).
Queued messages discarded before they were sent are left out, and so are request
ids (they only de-duplicate sends within this database).
"""
from __future__ import annotations

import base64
import json
import re
import time
import unicodedata
import zipfile
from pathlib import Path

from backend import __version__
from backend.core.status import COMPLETE, QUEUED
from backend.store import chat_data, message_images
from backend.store.models import Chat, Folder, Message, ModelEntry
from backend.store.serialize import _tool_call, attachment_ids, files_by_id, iso

FORMAT = "numi-export"
VERSION = 2
ZIP_JSON = "numi-export.json"


def chat_export(chat: Chat, inline_bytes=None) -> dict:
    """One chat in the export shape; `inline_bytes(sha256) -> bytes|None` fills `data`."""
    rows = list(Message.select().where((Message.chat == chat.id) & Message.deleted_at.is_null())
                .order_by(Message.id))
    parents, leaf = _links(rows, chat.active_leaf_id)
    files = files_by_id(i for m in rows for i in [*attachment_ids(m), *message_images.file_ids(m.content_parts)])
    folder = Folder.get_or_none(Folder.id == chat.folder_id) if chat.folder_id else None
    out = {
        "id": chat.id,  # where it came from; an import gives the chat a new id
        "title": chat.title,
        "model_id": chat.model_id,
        "folder": folder.name if folder else None,
        "system_prompt": chat.system_prompt or "",
        "params": dict(chat.params or {}),
        "tools_off": list(chat.tools_off) if chat.tools_off is not None else None,
        "pinned": bool(chat.pinned),
        "archived": bool(chat.archived),
        "created_at": iso(chat.created_at),
        "updated_at": iso(chat.updated_at),
        "active_leaf_id": leaf,
        "messages": [_message(m, parents[m.id], files, inline_bytes) for m in rows],
    }
    features = chat_data.exported(chat.id)
    if features:
        out["features"] = features
    return out


def _links(rows: list[Message], leaf: int | None) -> tuple[dict[int, int | None], int | None]:
    """Each message's parent and the branch's last message, as the export gives them. A message
    still waiting in the queue has no place in the tree yet: it follows the active branch,
    where it would be sent (and where a restart puts it)."""
    parents = {}
    for m in rows:
        if m.status == QUEUED:
            parents[m.id], leaf = leaf, m.id
        else:
            parents[m.id] = m.parent_id
    return parents, leaf


def _message(m: Message, parent_id: int | None, files: dict, inline_bytes) -> dict:
    out = {
        "id": m.id,
        "parent_id": parent_id,
        "role": m.role,
        "content": m.content or "",
        "reasoning": m.reasoning_content or "",
        "reasoning_details": m.reasoning_details,
        "tool_calls": [_tool_call(c) for c in (m.tool_calls or [])],
        "tool_call_id": m.tool_call_id,
        "tool_error": bool(m.tool_error),
        "citation_sources": m.citation_sources,
        "status": m.status,
        "model_id": m.model_id,
        "usage": m.usage,
        "error": m.error,
        "created_at": iso(m.created_at),
        "attachments": [_attachment(files[i], inline_bytes) for i in attachment_ids(m) if i in files],
    }
    images = _images(m, files, inline_bytes)
    if images:
        out["images"] = images
    return out


def _images(m: Message, files: dict, inline_bytes) -> list[dict]:
    """The images the message's step drew, each with its file (one whose row is gone is left out)."""
    out = []
    for item in message_images.items(m.content_parts):
        if item["file_id"] not in files:
            continue
        image = {k: item[k] for k in ("prompt", "width", "height", "model", "backend")}
        image["file"] = _attachment(files[item["file_id"]], inline_bytes)
        thumbnail = item.get("thumbnail_file_id")
        if thumbnail in files:
            image["thumbnail"] = _attachment(files[thumbnail], inline_bytes)
        out.append(image)
    return out


def _attachment(row, inline_bytes) -> dict:
    data = {"name": row.name, "mime": row.mime, "size": row.size, "sha256": row.sha256,
            "created_at": iso(row.created_at)}
    if inline_bytes is not None:
        blob = inline_bytes(row.sha256)
        if blob is not None:
            data["data"] = base64.b64encode(blob).decode("ascii")
    return data


def document(chats: list[dict], prompts: list[dict] | None = None) -> dict:
    """The export's JSON; the full export adds the prompt library (`prompts`), a chat's own does not."""
    doc = {"format": FORMAT, "version": VERSION, "exported_at": iso(time.time()),
           "app_version": __version__, "chats": chats}
    if prompts is not None:
        doc["prompts"] = prompts
    return doc


# -- Markdown ------------------------------------------------------------------------

ROLE_NAMES = {"user": "You", "assistant": "Assistant", "tool": "Tool result", "system": "System"}


def _fence(text: str, lang: str = "") -> str:
    # One backtick more than the longest run inside, so no content can close the block.
    longest = max((len(r) for r in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _when(value: str | None) -> str:
    return value[:16].replace("T", " ") + " UTC" if value else ""  # to the minute: for reading


def model_labels() -> dict[str, str]:
    """Each catalog model's id → the name people know it by (its label, else its API name)."""
    return {m.id: m.label or m.api_model for m in ModelEntry.select(ModelEntry.id, ModelEntry.label, ModelEntry.api_model)}


def _model_name(model_id: str, labels: dict[str, str]) -> str:
    # A model removed from the catalog since keeps its id: the only name left for it.
    return labels.get(model_id) or f"`{model_id}`"


def to_markdown(chat: dict, labels: dict[str, str] | None = None) -> str:
    """A readable rendering of one exported chat (not meant to be imported); `labels` names
    the models (model_labels()), and each reply is headed with the model that wrote it."""
    labels = labels or {}
    out = [f"# {chat['title'] or 'Untitled chat'}", ""]
    meta = [f"Created {_when(chat['created_at'])}"]
    if chat.get("model_id"):
        meta.append(f"model {_model_name(chat['model_id'], labels)}")
    out += ["_" + ", ".join(meta) + " — exported from Numi._", ""]
    if chat.get("system_prompt"):
        out += ["> **System prompt**", ">"] + [f"> {line}" for line in chat["system_prompt"].splitlines()] + [""]
    shown = active_branch(chat)
    if len(shown) < len(chat["messages"]):
        n = len(chat["messages"]) - len(shown)
        out += [f"_The branch shown last; {n} message{'' if n == 1 else 's'} of other versions "
                f"{'is' if n == 1 else 'are'} in the JSON export._", ""]
    for m in shown:
        who = ROLE_NAMES.get(m["role"], m["role"])
        if m["role"] == "assistant" and m.get("model_id"):
            who = _model_name(m["model_id"], labels)
        head = f"## {who} · {_when(m['created_at'])}"
        if m["role"] == "tool" and m.get("tool_call_id"):
            head += f" · `{m['tool_call_id']}`"
        if m["status"] != COMPLETE:
            head += f" · _{m['status']}_"
        out += [head, ""]
        if m.get("reasoning"):
            out += ["<details><summary>Reasoning</summary>", "", m["reasoning"], "", "</details>", ""]
        if m.get("content"):
            out += [_fence(m["content"]) if m["role"] == "tool" else m["content"], ""]
        sources = [x for x in m.get("citation_sources") or () if isinstance(x, dict) and isinstance(x.get("n"), int)]
        if sources:
            # What the reply's [n] cite: the numbers stay meaningful outside Numi.
            out += ["**Sources**", ""] + [_source_line(x) for x in sources] + [""]
        for call in m.get("tool_calls") or ():
            out += [f"**Tool call** `{call['name']}` (`{call['id']}`)", "", _fence(call["arguments"] or "", "json"), ""]
        for a in m.get("attachments") or ():
            out.append(f"- Attachment: {a['name']} ({a['mime']}, {a['size']} bytes, sha256 `{a['sha256'][:12]}…`)")
        for image in m.get("images") or ():
            drawn = f", by {_plain(image['model'])}" if image.get("model") else ""
            out.append(f"- Image: {image['file']['name']} ({image['width']} × {image['height']} px{drawn}), "
                       f"drawn from: {_plain(' '.join(image['prompt'].split()))}")
        if m.get("attachments") or m.get("images"):
            out.append("")
        if m.get("error"):
            out += [f"> **Error:** {m['error'].get('message', '')}", ""]
    return "\n".join(out).rstrip() + "\n"


def _source_line(source: dict) -> str:
    """One source as a list item: `- [n] Title — <url>`; its text is the web's, so kept plain."""
    title = " ".join(str(source.get("title") or "").split()) or f"Source {source['n']}"
    url = source.get("url")
    where = f" — <{url}>" if isinstance(url, str) and re.match(r"https?://[^\s<>]+$", url) else ""
    return f"- [{source['n']}] {_plain(title)}{where}"


def _plain(text: str) -> str:
    """Text with Markdown's inline marks escaped, so a web page's title renders as it reads."""
    return re.sub(r"([\\`*_{}\[\]<>()#+!|~])", r"\\\1", text)


def active_branch(chat: dict) -> list[dict]:
    """The exported chat's messages from the root to `active_leaf_id`."""
    by_id = {m["id"]: m for m in chat["messages"]}
    out, at = [], chat.get("active_leaf_id")
    while at in by_id:  # an export's own links: they end at a root
        out.append(by_id[at])
        at = by_id[at]["parent_id"]
    return out[::-1]


# -- names and the bulk zip --------------------------------------------------------

def safe_stem(title: str, max_len: int = 60) -> str:
    """A file name part anyone's file system takes: ASCII letters, digits, - and _."""
    ascii_title = unicodedata.normalize("NFKD", title or "").encode("ascii", "ignore").decode()
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", ascii_title).strip("-_")[:max_len].strip("-_")
    return stem or "chat"


def write_zip(target, chats, blob_path, prompts: list[dict] | None = None) -> None:
    """The whole export as a zip: numi-export.json, chats/<title>-<id>.md, files/<sha256>.

    `chats`: Chat rows; `blob_path(sha256) -> Path`; `prompts`: the prompt library, in the
    JSON's `prompts`. Blobs are added once each, streamed from disk; a blob missing from
    files/ is left out (its metadata stays).
    """
    exported = [chat_export(c) for c in chats]
    labels = model_labels()
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(ZIP_JSON, json.dumps(document(exported, prompts), ensure_ascii=False, indent=1))
        for chat in exported:
            zf.writestr(f"chats/{safe_stem(chat['title'])}-{chat['id']}.md", to_markdown(chat, labels))
        seen = set()
        for chat in exported:
            for m in chat["messages"]:
                drawn = [f for image in m.get("images") or () for f in (image["file"], image.get("thumbnail")) if f]
                for a in [*m["attachments"], *drawn]:
                    sha = a["sha256"]
                    path = Path(blob_path(sha))
                    if sha in seen or not path.is_file():
                        continue
                    seen.add(sha)
                    # Images and PDFs are compressed already; deflating them again wastes time.
                    kind = zipfile.ZIP_STORED if a["mime"].startswith("image/") or a["mime"] == "application/pdf" \
                        else zipfile.ZIP_DEFLATED
                    zf.write(path, f"files/{sha}", compress_type=kind)
