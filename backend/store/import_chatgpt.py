"""Reading ChatGPT's data export (conversations.json), checked whole before anything is written.

A conversation is a tree in `mapping`: node id -> {"id", "parent", "children",
"message"}. The file comes from outside, so every field read here is
type-checked, and the tree itself must hold together: each `parent` names a
node that lists it among its `children` and each child names its parent back,
every node is reached from a root (a node without parent), so no loop, and at
most MAX_NODES nodes. Any problem refuses the whole file with 422: the
sentence names the conversation (its number, title and id) and the field.
Walking the checked tree is then linear and always ends.

What is kept of a conversation (docs/PROTOCOL.md, "Export and import"): every
branch of the tree, the one ChatGPT showed last (`current_node` up through the
parents, else the last child from the root down) active; `user` and `assistant`
text the person saw.
Left out: system and tool nodes (browsing, code runs, memory), hidden nodes,
assistant messages addressed to a tool, parts that are not text (images are
pointers to files the export does not reliably carry). "thoughts" nodes (o-series
reasoning summaries) become the reasoning of the assistant message after them.
A message left out passes its place on: the messages under it hang from the
nearest message kept above it. Each message keeps its node id as its source id,
and the conversation its id, so importing the same file again adds only what is new.
"""
from __future__ import annotations

import hashlib
import math

from backend.core.status import COMPLETE
from backend.store.import_read import MAX_TEXT, MAX_TIME, ImportRefused, ParsedChat, is_clean_text

MAX_NODES = 100_000  # per conversation: far above any real one, and the bound on a branch's depth
MAX_ID = 100  # characters of a node or conversation id kept as it is; a longer one is kept as its hash
_TEXT_TYPES = ("text", "multimodal_text")
_NAME_CHARS = 60


class _Refuse(Exception):
    """One problem at one field path (relative to the conversation)."""

    def __init__(self, path: str, problem: str):
        super().__init__(problem)
        self.path, self.problem = path, problem


def parse_chatgpt(doc: list) -> list[ParsedChat]:
    out = []
    for i, conv in enumerate(doc):
        try:
            out.append(_conversation(conv))
        except _Refuse as exc:
            raise ImportRefused(
                f"{_name(i, conv)} of the ChatGPT export cannot be imported: {exc.path or f'conversations[{i}]'} "
                f"{exc.problem} Nothing of this file was imported.",
                fields={f"conversations[{i}]{'.' if exc.path else ''}{exc.path}": exc.problem}) from None
    return out


def _name(i: int, conv) -> str:
    """Conversation N ("title", id …): how the person finds it in ChatGPT."""
    words = f"Conversation {i + 1}"
    if not isinstance(conv, dict):
        return words
    bits = []
    title, cid = conv.get("title"), conv.get("conversation_id") or conv.get("id")
    if isinstance(title, str) and title.strip() and is_clean_text(title):
        bits.append(f'"{_short(title.strip())}"')
    if isinstance(cid, str) and cid and is_clean_text(cid):
        bits.append(f"id {_short(cid)}")
    return f"{words} ({', '.join(bits)})" if bits else words


def _short(text: str) -> str:
    return text if len(text) <= _NAME_CHARS else text[:_NAME_CHARS - 1] + "…"


def _key(node_id: str) -> str:
    return f'mapping["{_short(node_id)}"]'


# -- type checks ---------------------------------------------------------------------

def _get(obj: dict, key: str, path: str, kind, what: str):
    """obj[key] when it is of `kind` (or null/missing: None); else refuse naming the field."""
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
        raise _Refuse(f"{path}.{key}" if path else key, f"must be {what} (it is {_type_name(value)}).")
    return value


def _text(obj: dict, key: str, path: str) -> str | None:
    value = _get(obj, key, path, str, "text or null")
    if value is not None and not is_clean_text(value):
        raise _Refuse(f"{path}.{key}" if path else key, "holds text that is not valid Unicode.")
    return value


def _object(obj: dict, key: str, path: str) -> dict | None:
    return _get(obj, key, path, dict, "an object or null")


def _list(obj: dict, key: str, path: str) -> list | None:
    return _get(obj, key, path, list, "a list or null")


def _time(obj: dict, key: str, path: str) -> float | None:
    value = _get(obj, key, path, (int, float), "a time in seconds since 1970, or null")
    if value is not None and not (math.isfinite(value) and 0 <= value <= MAX_TIME):
        raise _Refuse(f"{path}.{key}" if path else key, "must be a time in seconds since 1970 before the year 10000.")
    return None if value is None else float(value)


def _type_name(value) -> str:
    return {dict: "an object", list: "a list", str: "text", bool: "true/false"}.get(
        type(value), "a number" if isinstance(value, (int, float)) else "null")


# -- the tree ------------------------------------------------------------------------

def _tree(conv: dict) -> tuple[dict, str | None]:
    """(mapping, current node id or None), with every link checked."""
    mapping = conv.get("mapping")
    if not isinstance(mapping, dict):
        raise _Refuse("mapping", f"must be the message tree, an object (it is {_type_name(mapping)}).")
    if len(mapping) > MAX_NODES:
        raise _Refuse("mapping", f"has {len(mapping)} nodes; Numi imports at most {MAX_NODES} per conversation.")
    current = _get(conv, "current_node", "", str, "a node id or null")
    if current is not None and current not in mapping:
        raise _Refuse("current_node", "names a node that is not in mapping.")
    for node_id, node in mapping.items():
        path = _key(node_id)
        if not isinstance(node, dict):
            raise _Refuse(path, f"must be an object (it is {_type_name(node)}).")
        _get(node, "id", path, str, "text or null")
        parent = _get(node, "parent", path, str, "a node id or null")
        if parent is not None and parent not in mapping:
            raise _Refuse(f"{path}.parent", "names a node that is not in mapping.")
        children = _list(node, "children", path) or []
        for k, child in enumerate(children):
            if not isinstance(child, str):
                raise _Refuse(f"{path}.children[{k}]", f"must be a node id (it is {_type_name(child)}).")
            if child not in mapping:
                raise _Refuse(f"{path}.children[{k}]", "names a node that is not in mapping.")
    # Links agree both ways: each child names this node as its parent, and each node with a
    # parent is listed by it. Each node then sits in at most one children list: counted
    # with a set, so a root with 100 000 children costs no more than a chain.
    listed = set()
    for node_id, node in mapping.items():
        for child in node.get("children") or ():
            if mapping[child].get("parent") != node_id:
                raise _Refuse(f"{_key(node_id)}.children",
                              f'lists "{_short(child)}", whose parent is another node: the links disagree.')
            if child in listed:
                raise _Refuse(f"{_key(node_id)}.children", f'lists "{_short(child)}" twice.')
            listed.add(child)
    for node_id, node in mapping.items():
        if node.get("parent") is not None and node_id not in listed:
            raise _Refuse(f"{_key(node_id)}.parent",
                          f'is "{_short(node["parent"])}", whose children do not list this node.')
    _check_reachable(mapping)
    return mapping, current


def _check_reachable(mapping: dict) -> None:
    """Every node is reached from a root; with links that agree, any other node sits on a loop."""
    roots = [k for k, n in mapping.items() if n.get("parent") is None]
    if mapping and not roots:
        raise _Refuse("mapping", "has no root node (one without a parent): its parent links loop.")
    seen, todo = set(roots), list(roots)
    while todo:
        for child in mapping[todo.pop()].get("children") or ():
            if child not in seen:  # agreeing links make each node some one node's child
                seen.add(child)
                todo.append(child)
    if len(seen) != len(mapping):
        stray = next(k for k in mapping if k not in seen)
        raise _Refuse(f"{_key(stray)}.parent", "leads round in a loop that never reaches the root.")


def _current(mapping: dict, current: str | None) -> str | None:
    """The node ChatGPT showed last: `current`, else the last child from the first root down."""
    if current is None:
        current = next((k for k, n in mapping.items() if n.get("parent") is None), None)
        while current is not None and mapping[current].get("children"):
            current = mapping[current]["children"][-1]
    return current


def _take(thoughts) -> str:
    """The thoughts above an assistant message that no other message took yet, oldest first.
    Each thought goes to one message only (the first below it), so a thoughts node with many
    branches under it costs no more than one: what is taken is always a chain's upper part,
    and the walk up stops there."""
    parts = []
    while thoughts is not None and not thoughts[2]:
        parts.append(thoughts[0])
        thoughts[2] = True
        thoughts = thoughts[1]
    return "\n\n".join(text for texts in reversed(parts) for text in texts)


def _source(node_id: str) -> str:
    """How an id is stored: as it is, or hashed when it is longer than any real one."""
    if len(node_id) <= MAX_ID:
        return node_id
    return "sha256:" + hashlib.sha256(node_id.encode("utf-8", "surrogatepass")).hexdigest()


# -- messages ------------------------------------------------------------------------

def _conversation(conv) -> ParsedChat:
    if not isinstance(conv, dict):
        raise _Refuse("", f"must be an object (it is {_type_name(conv)}).")
    title = _text(conv, "title", "") or ""
    created = _time(conv, "create_time", "") or 0.0
    updated = _time(conv, "update_time", "")
    conversation_id, conv_id = _text(conv, "conversation_id", ""), _text(conv, "id", "")
    ident = conversation_id or conv_id
    mapping, current = _tree(conv)
    # Every node's message is checked, whichever branch it sits on: a file is refused or
    # imported whole.
    parsed = {node_id: _message(node, _key(node_id)) for node_id, node in mapping.items()}
    messages: list[dict] = []
    kept_as: dict[str, str | None] = {}  # node id -> the source id of the message it passes on
    # Depth first, children in their order, so versions keep ChatGPT's order. A stack, not
    # recursion: a branch may be 100 000 nodes deep. Each entry: (node, kept above, thoughts),
    # thoughts a chain of [texts, the chain above, taken] shared by the branches below it.
    roots = [k for k, n in mapping.items() if n.get("parent") is None]
    todo: list[tuple[str, str | None, list | None]] = [(k, None, None) for k in reversed(roots)]
    while todo:
        node_id, above, thoughts = todo.pop()
        msg = parsed[node_id]
        if msg is not None and msg["thoughts"] is not None:
            thoughts = [msg["thoughts"], thoughts, False]
        elif msg is not None:
            source = _source(node_id)
            messages.append({
                "role": msg["role"], "content": msg["text"][:MAX_TEXT],
                "reasoning_content": _take(thoughts) if msg["role"] == "assistant" else "",
                "reasoning_details": None, "tool_calls": None, "tool_call_id": None, "tool_error": False,
                "citation_sources": None, "status": COMPLETE, "model_id": None, "usage": None, "error": None,
                "created_at": msg["created_at"] if msg["created_at"] is not None else created, "attachments": [],
                "source_id": source, "source_parent": above,
            })
            above = source
            if msg["role"] == "assistant":
                thoughts = None
        kept_as[node_id] = above
        todo.extend((child, above, thoughts) for child in reversed(mapping[node_id].get("children") or ()))
    shown = _current(mapping, current)
    leaf = kept_as.get(shown) if shown is not None else None
    if leaf is None and messages:  # nothing kept on the branch shown last: the last one kept
        leaf = messages[-1]["source_id"]
    return ParsedChat(title=title[:300] or "Imported from ChatGPT", model_id=None, folder=None, system_prompt="",
                      params={}, tools_off=None, pinned=False, archived=False, created_at=created,
                      updated_at=updated if updated is not None else created, messages=messages,
                      active=leaf, source_id=f"chatgpt:{_source(ident)}" if ident else None)


def _message(node: dict, path: str) -> dict | None:
    """What a node shows the person: {"role", "text", "thoughts", "created_at"}, or None."""
    msg = _object(node, "message", path)
    if msg is None:
        return None
    path = f"{path}.message"
    author = _object(msg, "author", path) or {}
    role = _text(author, "role", f"{path}.author")
    content = _object(msg, "content", path) or {}
    meta = _object(msg, "metadata", path) or {}
    hidden = _get(meta, "is_visually_hidden_from_conversation", f"{path}.metadata", bool, "true, false or null")
    recipient = _text(msg, "recipient", path)
    created = _time(msg, "create_time", path)
    ctype = _text(content, "content_type", f"{path}.content")
    parts = _parts(content, f"{path}.content")
    thoughts = _thoughts(content, f"{path}.content")
    if hidden:
        return None
    if role == "assistant" and ctype == "thoughts":
        return {"role": role, "text": "", "thoughts": thoughts, "created_at": created}
    if role not in ("user", "assistant") or ctype not in _TEXT_TYPES:
        return None
    if role == "assistant" and (recipient or "all") != "all":
        return None
    text = "\n".join(p for p in parts if isinstance(p, str)).strip()
    return {"role": role, "text": text, "thoughts": None, "created_at": created} if text else None


def _parts(content: dict, path: str) -> list:
    """Text parts and objects (pointers to images and files, left out); anything else is refused."""
    parts = _list(content, "parts", path) or []
    for k, part in enumerate(parts):
        if isinstance(part, str):
            if not is_clean_text(part):
                raise _Refuse(f"{path}.parts[{k}]", "holds text that is not valid Unicode.")
        elif part is not None and not isinstance(part, dict):
            raise _Refuse(f"{path}.parts[{k}]", f"must be text or an object (it is {_type_name(part)}).")
    return parts


def _thoughts(content: dict, path: str) -> list[str]:
    out = []
    for k, thought in enumerate(_list(content, "thoughts", path) or []):
        if not isinstance(thought, dict):
            raise _Refuse(f"{path}.thoughts[{k}]", f"must be an object (it is {_type_name(thought)}).")
        text = _text(thought, "content", f"{path}.thoughts[{k}]")
        if text:
            out.append(text)
    return out
