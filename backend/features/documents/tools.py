"""`doc_create` and `doc_edit` (CONTRACT §11): their specs, and the checks of their arguments.

Both run without asking (their policy may say otherwise) and change nothing outside the chat's
documents; plan mode holds them back all the same (they are not read-only). Limits, each refused
with a sentence the model can act on: a title of 1–200 characters (white space runs made one
space), content of at most 1 MB (1 048 576 bytes of UTF-8) whole or after a replacement, and
`find` matching the current text exactly once. A language Numi does not know makes the document
plain text (languages.py), and the result says so.
"""
from __future__ import annotations

from typing import Any, Callable

from backend.core.text import well_formed
from backend.core.tools import Tool
from backend.core.types import ToolSpec
from backend.features.documents import languages

CREATE, EDIT = "doc_create", "doc_edit"
TITLE_MAX = 200
CONTENT_MAX_BYTES = 1_048_576
COUNT_CAP = 10_000  # occurrences of `find` counted at most, for the sentence

CREATE_SPEC = ToolSpec(
    name=CREATE,
    description=("Write a document into the panel beside the chat, where the person reads and edits it: code, a "
                 "long text, an HTML page, an SVG drawing, a Mermaid diagram. Use it for anything longer than a "
                 "few lines that the person will keep, run or change, instead of writing it in your answer; "
                 "answer text never becomes a document. Returns the document's id, for doc_edit. "
                 f"At most {CONTENT_MAX_BYTES:,} bytes of content."),
    parameters={
        "type": "object",
        "properties": {
            "title": {"type": "string", "maxLength": TITLE_MAX,
                      "description": "A short name for the document, as a tab shows it (e.g. \"fetch_rates.py\")."},
            "language": {"type": "string",
                         "description": f"What the content is, one of: {languages.known_list()}."},
            "content": {"type": "string", "description": "The whole text of the document."},
        },
        "required": ["title", "language", "content"],
    },
)

EDIT_SPEC = ToolSpec(
    name=EDIT,
    description=("Change a document of this chat (its doc_id is in your system text, with its current text, "
                 "which includes the person's own edits). Either give `content`, the whole new text, or "
                 "`find` and `replace`: `find` must occur exactly once in the current text (white space and "
                 "line ends included); prefer find/replace for a small change in a long document. Each edit "
                 "is a new version the person can compare and undo."),
    parameters={
        "type": "object",
        "properties": {
            "doc_id": {"type": "string", "description": "The document's id (\"doc_…\")."},
            "content": {"type": "string", "description": "The whole new text (leave out find and replace)."},
            "find": {"type": "string", "description": "Text that occurs exactly once in the document now."},
            "replace": {"type": "string", "description": "What replaces `find` (\"\" deletes it)."},
        },
        "required": ["doc_id"],
    },
)


def _unbound(args: dict, cancel) -> str:
    raise ValueError("Documents are written only inside a chat's turn.")


def create_tool(run: Callable[[dict, Any], str] = _unbound) -> Tool:
    return Tool(CREATE_SPEC, run, needs_approval=False, read_only=False)


def edit_tool(run: Callable[[dict, Any], str] = _unbound) -> Tool:
    return Tool(EDIT_SPEC, run, needs_approval=False, read_only=False)


# --- the checks ------------------------------------------------------------------------------

def clean_title(raw: str) -> str:
    return " ".join(well_formed(raw).split())


def title_of(args: dict) -> str:
    raw = args.get("title")
    if not isinstance(raw, str) or not clean_title(raw):
        raise ValueError(f'{CREATE} needs "title": a short name for the document (1 to {TITLE_MAX} characters).')
    title = clean_title(raw)
    if len(title) > TITLE_MAX:
        raise ValueError(f"The title is {len(title):,} characters long; give one of at most {TITLE_MAX}. "
                         f"Nothing was created.")
    return title


def language_of(args: dict) -> tuple[str, str | None]:
    """The document's language, and a sentence for the result when the name given was not known."""
    raw = args.get("language", "")  # left out: plain text
    if not isinstance(raw, str):
        raise ValueError(f'"language" must be text, one of: {languages.known_list()}. Nothing was created.')
    language, known = languages.normalize(raw)
    if known:
        return language, None
    shown = " ".join(raw.split())[:40]
    return language, (f'Numi does not know the language "{shown}", so the document is plain text (the languages '
                      f"it knows: {languages.known_list()}).")


def size_label(n: int) -> str:
    return f"{n / 1_048_576:.2f} MB" if n >= 104_857 else f"{n:,} bytes"


def content_of(value: Any, what: str = "content", verb: str = "created") -> str:
    """A document's whole text, well-formed; ValueError when it is no text or too large."""
    if not isinstance(value, str):
        raise ValueError(f'"{what}" must be text: the whole text of the document. Nothing was {verb}.')
    return within_limit(well_formed(value), verb)


def within_limit(text: str, verb: str) -> str:
    size = len(text.encode("utf-8"))
    if size > CONTENT_MAX_BYTES:
        raise ValueError(f"The document would be {size_label(size)}; a document holds at most 1 MB "
                         f"({CONTENT_MAX_BYTES:,} bytes of UTF-8). Nothing was {verb}: split it into several "
                         f"documents.")
    return text


def edit_of(args: dict) -> tuple[str | None, tuple[str, str] | None]:
    """(content, None) for a whole new text, or (None, (find, replace)); ValueError when neither or both."""
    content, find, replace = args.get("content"), args.get("find"), args.get("replace")
    if content is not None and (find is not None or replace is not None):
        raise ValueError(f'Give {EDIT} either "content" (the whole new text) or "find" and "replace", not both. '
                         f"Nothing was changed.")
    if content is not None:
        return content_of(content, verb="changed"), None
    if find is None:
        raise ValueError(f'{EDIT} needs "content" (the whole new text), or "find" and "replace". Nothing was changed.')
    if not isinstance(find, str) or not find:
        raise ValueError('"find" must be non-empty text that occurs exactly once in the document. '
                         "Nothing was changed.")
    if not isinstance(replace, str):
        raise ValueError('"find" needs "replace": the text that takes its place ("" deletes it). '
                         "Nothing was changed.")
    return None, (well_formed(find), well_formed(replace))


def occurrences(text: str, find: str, cap: int = COUNT_CAP) -> list[int]:
    """Where `find` starts in `text`, overlapping places included; at most `cap` + 1 of them."""
    found: list[int] = []
    at = text.find(find)
    while at != -1 and len(found) <= cap:
        found.append(at)
        at = text.find(find, at + 1)
    return found


def replaced(text: str, find: str, replace: str, doc_id: str, version: int) -> str:
    """`text` with its one `find` replaced; ValueError saying how often it occurs otherwise."""
    found = occurrences(text, find)
    if len(found) == 1:
        return within_limit(text[:found[0]] + replace + text[found[0] + len(find):], "changed")
    if not found:
        raise ValueError(f'"find" does not occur in {doc_id} (version {version}): it must match the current text '
                         f"exactly once, white space and line ends included. The current text is in your system "
                         f"text (the person may have edited it). Nothing was changed.")
    times = f"more than {COUNT_CAP:,}" if len(found) > COUNT_CAP else f"{len(found):,}"
    raise ValueError(f'"find" occurs {times} times in {doc_id} (version {version}); it must occur exactly once. '
                     f"Include more of the text around it so that it matches one place. Nothing was changed.")
