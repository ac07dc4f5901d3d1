"""Workspace file tools: list, read, search, write and edit files inside one folder and nowhere else.

Each tool is a function of the workspace it runs on and the model's arguments;
FILE_TOOLS is the table of them, with their specs and what each may do, and
`workspace_tools` makes the Tools of one workspace from it. Where a path may
lead, and what a write must never touch, is the workspace's to check
(backend/tools/workspace_folder.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import partial
from pathlib import Path
from typing import Any, Callable

from backend.core.tools import MAX_RESULT_CHARS, Tool
from backend.core.types import ToolSpec
from backend.tools import file_diff
from backend.tools.file_index import FileIndex, IgnoreRules, walk
from backend.tools.line_search import PATTERN_CHARS, SEARCH_BYTES, SEARCH_SECONDS, Budget, LineMatcher, Stopped
from backend.tools.workspace_folder import DEFAULT_MAX_READ, MB, Workspace, same_or_inside, size_text

# Workspace, same_or_inside and DEFAULT_MAX_READ are re-exported: callers take the file tools' names from here.
__all__ = ["FILE_TOOLS", "DEFAULT_MAX_READ", "Workspace", "same_or_inside", "split_lines", "workspace_tools"]

OUTPUT_CHARS = MAX_RESULT_CHARS - 5_000  # room for our own "read on from here" note before the hard cut
LIST_DEFAULT, LIST_MAX = 500, 5_000
SEARCH_DEFAULT, SEARCH_MAX = 100, 1_000
LINE_CHARS = 300  # a matched line is shown up to this long


def split_lines(text: str) -> list[str]:
    """Lines as editors and grep number them: only \\n ends a line (str.splitlines also splits on \\f etc.)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


class Files:
    """The workspace the tools run on, and where its file names come from: a running index, or a walk."""

    def __init__(self, workspace: Workspace, index: FileIndex | None = None):
        self.workspace, self.index = workspace, index
        self.rules = index.rules if index is not None else IgnoreRules(workspace.root)

    def entries(self, rel: str, recursive: bool):
        """(path, is folder) below `rel` that are not ignored and not hidden."""
        if self.index is not None and self.index.running:
            found = iter(self.index.entries(rel, recursive))
        else:
            found = walk(self.workspace.root, self.rules, rel, recursive)
        return (entry for entry in found if self.workspace.visible(entry[0]))

    def folder(self, path: str) -> str:
        """`path` as listed (relative, '' for the top); ValueError when it is missing or ignored."""
        real = self.workspace.resolve(path, allow_root=True)
        if not real.exists():
            raise ValueError(f"{path!r} does not exist in the workspace. Use list_files to see what is there.")
        rel = self.workspace.rel(real)
        if rel and self.rules.ignored(rel, real.is_dir()):
            raise ValueError(f"{path!r} is excluded by .gitignore (or is git's own .git folder), so it is "
                             f"not listed or searched. read_file can still read a file in it by its path.")
        return rel


# --- the tools ---

def list_files(files: Files, args: dict, cancel) -> str:
    """list_files: the entries of a folder, one a line, folders ending in '/'."""
    ws = files.workspace
    path = _str(args, "path", ".")
    recursive = _bool(args, "recursive")
    limit = _int(args, "max_entries", LIST_DEFAULT, 1, LIST_MAX)
    rel = files.folder(path)
    if not (ws.root / rel).is_dir():
        raise ValueError(f"{path!r} is a file, not a folder. Use read_file to read it.")
    lines = []
    for entry, is_dir in files.entries(rel, recursive):
        if _cancelled(cancel):
            lines.append("[cancelled: the listing is incomplete]")
            break
        if len(lines) == limit:
            lines.append(f"[stopped at {limit} entries; list a subfolder, or raise max_entries "
                         f"(up to {LIST_MAX})]")
            break
        lines.append(entry + "/" if is_dir else entry)
    return "\n".join(lines) if lines else f"{rel or 'The workspace'} has no files (ignored ones are left out)."


def read_file(files: Files, args: dict, cancel) -> str:
    """read_file: a text file's lines, numbered, as much as fits in one result."""
    ws = files.workspace
    path = _str(args, "path")
    start = _int(args, "start_line", 1, 1)
    end = _int(args, "end_line", None, 1)
    _, text = ws.read_text(path)
    lines = split_lines(text)
    total = len(lines)
    if total == 0:
        return f"{path} is empty."
    if start > total:
        raise ValueError(f"{path!r} has {total} lines; start_line {start} is past its end.")
    if end is not None and end < start:
        raise ValueError(f"end_line {end} is before start_line {start}; give a range with start ≤ end.")
    end = min(end or total, total)
    out, used, last = [], 0, start - 1
    for n in range(start, end + 1):
        line = f"{n:>6}\t{lines[n - 1]}"
        if used + len(line) > OUTPUT_CHARS:
            if not out:  # one line longer than the whole budget: show its start
                out.append(line[:OUTPUT_CHARS] + " [line cut]")
                last = n
            break
        out.append(line)
        used += len(line) + 1
        last = n
    if (start, last) != (1, total):
        more = f"; call read_file with start_line={last + 1} to read on" if last < total else ""
        out.append(f"[lines {start}-{last} of {total}{more}]")
    return "\n".join(out)


def search_files(files: Files, args: dict, cancel) -> str:
    """search_files: 'path:line: text' for each matching line, within the search budget."""
    ws = files.workspace
    pattern = _str(args, "pattern")
    if not pattern:
        raise ValueError("'pattern' is empty; give the text or regex to search for.")
    use_regex, ignore_case = _bool(args, "regex"), _bool(args, "ignore_case")
    path, glob = _str(args, "path", "."), args.get("glob")
    if glob is not None and not isinstance(glob, str):
        raise ValueError("'glob' must be a string such as '*.py'.")
    if glob is not None and len(glob) > PATTERN_CHARS:
        raise ValueError(f"'glob' is {len(glob)} characters long; the limit is {PATTERN_CHARS}.")
    limit = _int(args, "max_results", SEARCH_DEFAULT, 1, SEARCH_MAX)
    matcher = LineMatcher(pattern, use_regex, ignore_case)  # a PatternError says what to change
    rel = files.folder(path)
    if (ws.root / rel).is_dir():
        listing = files.entries(rel, True)
    else:
        ws.read_utf8(path)  # one named file: say why it cannot be searched instead of skipping it
        listing = iter([(rel, False)])
    budget = Budget(cancel)
    out, used, skipped, note = [], 0, 0, ""
    try:
        for name, is_dir in listing:
            budget.check()  # per entry, so a tree of empty folders stops too
            if is_dir or (glob and not fnmatchcase(name if "/" in glob else name.rsplit("/", 1)[-1], glob)):
                continue
            try:
                real = ws.resolve(name)
            except ValueError:
                continue  # a link out of the workspace: not ours to search, nothing to report
            if real.is_dir():
                continue  # a link to a folder inside, whose files are searched under their own path
            try:
                _, data = ws.read_utf8(name)
            except (ValueError, OSError):
                skipped += 1
                continue
            budget.take(data)
            for n, line in matcher.lines(data, budget.check):
                if len(out) == limit or used > OUTPUT_CHARS:
                    note = (f"[stopped at {len(out)} matches; narrow it with path or glob, or raise "
                            f"max_results (up to {SEARCH_MAX})]")
                    break
                out.append(f"{name}:{n}: {_shown(line)}")
                used += len(out[-1]) + 1
            if note:
                break
    except Stopped as stop:
        note = _stopped(budget, stop.why)
    if not out:
        out.append(f"No matches for {pattern!r} in {rel or 'the workspace'}.")
    if skipped:
        out.append(f"[{skipped} file(s) not searched: binary, over the size limit, or unreadable]")
    if matcher.cut_lines:
        kib = f"{matcher.chunk_bytes / 1024:g} KiB"
        out.append(f"[{matcher.cut_lines} line(s) longer than {kib}: a regex searched only their first {kib} "
                   f"(a search with regex false sees all of them)]")
    if note:
        out.append(note)
    return "\n".join(out)


def write_file(files: Files, args: dict, cancel) -> str:
    """write_file: create or replace a whole file."""
    ws = files.workspace
    path, content = _str(args, "path"), _str(args, "content")
    real, created = ws.write_text(path, content)
    size = len(content.encode("utf-8"))
    return f"{'Created' if created else 'Overwrote'} {ws.rel(real)} ({size} bytes)."


def _edited(ws: Workspace, args: dict) -> tuple[Path, str, str, int]:
    """edit_file's change, worked out: (the file, its text now, its text after, replacements)."""
    path, old, new = _str(args, "path"), _str(args, "old_text"), _str(args, "new_text")
    replace_all = _bool(args, "replace_all")
    if not old:
        raise ValueError("'old_text' is empty; give the exact text to replace (use write_file for a new file).")
    if old == new:
        raise ValueError("'old_text' and 'new_text' are the same, so there is nothing to change.")
    if not ws.resolve(path).exists():
        raise ValueError(f"{path!r} does not exist in the workspace. Use write_file to create it.")
    real, text = ws.read_text(path)
    if "\r\n" in text and "\r" not in old:
        # The file has Windows line ends; the model's text almost never does.
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
    count = text.count(old)
    if count == 0:
        raise ValueError(f"old_text was not found in {path!r} (0 matches). Read the file and copy the "
                         f"text exactly, including whitespace and indentation.")
    if count > 1 and not replace_all:
        raise ValueError(f"old_text occurs {count} times in {path!r}. Include more of the surrounding "
                         f"lines so it matches exactly once, or set replace_all to true.")
    after = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    return real, text, after, count if replace_all else 1


def edit_file(files: Files, args: dict, cancel) -> str:
    """edit_file: replace an exact piece of a file's text."""
    ws = files.workspace
    real, _, after, count = _edited(ws, args)
    ws.write_text(ws.rel(real), after)
    return f"Replaced {count} occurrence{'s' if count > 1 else ''} in {ws.rel(real)}."


def write_preview(files: Files, args: dict) -> str:
    """What write_file would change, for the person to see before and after it runs."""
    ws = files.workspace
    rel, old, size = ws.current(_str(args, "path"), file_diff.MAX_BYTES)
    return file_diff.describe_change(rel, old, _str(args, "content").encode("utf-8"), size)


def edit_preview(files: Files, args: dict) -> str:
    """What edit_file would change, for the person to see before and after it runs."""
    ws = files.workspace
    real, before, after, _ = _edited(ws, args)
    return file_diff.describe_change(ws.rel(real), before.encode("utf-8"), after.encode("utf-8"))


def _stopped(budget: Budget, why: str) -> str:
    """The line closing a search that ran out of its budget, or was stopped, for the model to act on."""
    if why == "cancelled":
        return "[cancelled: the search is incomplete]"
    limit = (f"a search runs for at most {budget.seconds:g} s" if why == "time"
             else f"a search reads at most {size_text(budget.max_bytes)} of files")
    return (f"[stopped after {budget.files} file(s) / {size_text(budget.bytes)}: {limit}; "
            f"narrow the search with path or glob]")


def _shown(line: memoryview) -> str:
    """A matched line as the result shows it: up to LINE_CHARS characters."""
    text = bytes(line[:(LINE_CHARS + 1) * 4]).decode("utf-8", "ignore")  # ≤ 4 bytes a character
    return text if len(text) <= LINE_CHARS else text[:LINE_CHARS] + " …"


def _cancelled(cancel) -> bool:
    return cancel is not None and cancel.is_set()


# --- arguments ---

def _str(args: dict, name: str, default: str | None = None) -> str:
    value = args.get(name, default)
    if value is None:
        raise ValueError(f"'{name}' is required.")
    if not isinstance(value, str):
        raise ValueError(f"'{name}' must be a string.")
    return value


def _bool(args: dict, name: str) -> bool:
    value = args.get(name, False)
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"  # some models quote their booleans
    if not isinstance(value, bool):
        raise ValueError(f"'{name}' must be true or false.")
    return value


def _int(args: dict, name: str, default: int | None, low: int, high: int | None = None) -> int | None:
    value = args.get(name, default)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    elif isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"'{name}' must be a whole number.")
    if value < low or (high is not None and value > high):
        bound = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise ValueError(f"'{name}' must be {bound}; got {value}.")
    return value


def _schema(properties: dict, required: list[str]) -> dict:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


# --- the table ---

_PATH = {"type": "string", "description": "Path relative to the workspace folder, e.g. 'src/main.py'."}
_FOLDER = {"type": "string", "description": "Folder relative to the workspace; '.' (default) is its top."}

LIST_SPEC = ToolSpec(
    "list_files", "List the files and folders in a workspace folder (folders end in '/'). "
    "Files excluded by .gitignore and the .git folder are left out.",
    _schema({"path": _FOLDER,
             "recursive": {"type": "boolean", "description": "Include everything below. Default false."},
             "max_entries": {"type": "integer", "minimum": 1, "maximum": LIST_MAX,
                             "description": f"Stop after this many entries. Default {LIST_DEFAULT}."}},
            []))
READ_SPEC = ToolSpec(
    "read_file", "Read a UTF-8 text file in the workspace, with line numbers "
    "(number, tab, line). Give start_line/end_line to read part of a long file.",
    _schema({"path": _PATH,
             "start_line": {"type": "integer", "minimum": 1, "description": "First line, 1-based."},
             "end_line": {"type": "integer", "minimum": 1, "description": "Last line, inclusive."}},
            ["path"]))
SEARCH_SPEC = ToolSpec(
    "search_files", "Search the text files of the workspace (or a folder or file in it) "
    "for text or a regular expression, line by line. Prints 'path:line: text' per match; "
    ".gitignore'd files are skipped. One search reads at most "
    f"{SEARCH_BYTES // MB} MB of files for at most {SEARCH_SECONDS:g} s, and says so when it stops.",
    _schema({"pattern": {"type": "string",
                         "description": "Text to find, or if regex is true a regular expression in "
                                        "RE2 syntax (Python's, without backreferences or "
                                        "lookaround; \\d \\w \\s \\b are ASCII)."},
             "regex": {"type": "boolean", "description": "Treat pattern as a regex. Default false."},
             "ignore_case": {"type": "boolean", "description": "Match regardless of case. Default false."},
             "path": {"type": "string", "description": "Folder or file to search; default the whole workspace."},
             "glob": {"type": "string", "description": "Only files whose name matches, e.g. '*.py' "
                                                       "(with a '/', the path from the top is matched)."},
             "max_results": {"type": "integer", "minimum": 1, "maximum": SEARCH_MAX,
                             "description": f"Stop after this many matches. Default {SEARCH_DEFAULT}."}},
            ["pattern"]))
WRITE_SPEC = ToolSpec(
    "write_file", "Create a text file in the workspace, or replace all of an existing one. "
    "Missing folders are made. Prefer edit_file to change part of a file.",
    _schema({"path": _PATH, "content": {"type": "string", "description": "The whole new content."}},
            ["path", "content"]))
EDIT_SPEC = ToolSpec(
    "edit_file", "Replace an exact piece of text in a workspace file. old_text must match "
    "exactly once (whitespace included) unless replace_all is true.",
    _schema({"path": _PATH,
             "old_text": {"type": "string", "description": "The exact text to replace, as in the file."},
             "new_text": {"type": "string", "description": "What replaces it."},
             "replace_all": {"type": "boolean", "description": "Replace every occurrence. Default false."}},
            ["path", "old_text", "new_text"]))


@dataclass(frozen=True)
class FileTool:
    """One row of the table: a tool's spec, its function and what it may do."""
    spec: ToolSpec
    run: Callable[[Files, dict, Any], str]  # (files, arguments, cancel token) -> output text
    # Only reads: runs beside others, unasked, and in plan mode; the rest ask the person first.
    read_only: bool
    verb: str  # what "Could not <verb> <path>" says when the system refuses
    preview: Callable[[Files, dict], str] | None = None  # what a call would change


FILE_TOOLS = (
    FileTool(LIST_SPEC, list_files, read_only=True, verb="list"),
    FileTool(READ_SPEC, read_file, read_only=True, verb="read"),
    FileTool(SEARCH_SPEC, search_files, read_only=True, verb="search"),
    FileTool(WRITE_SPEC, write_file, read_only=False, verb="write", preview=write_preview),
    FileTool(EDIT_SPEC, edit_file, read_only=False, verb="edit", preview=edit_preview),
)


def workspace_tools(workspace: Workspace, index: FileIndex | None = None) -> list[Tool]:
    """list_files, read_file, search_files, write_file and edit_file on `workspace`.

    With a running `index` (of the same root) listing and searching take the file names from it
    instead of walking the disk.
    """
    files = Files(workspace, index)
    return [Tool(t.spec, _guard(t.verb, partial(t.run, files)), concurrent=t.read_only,
                 needs_approval=not t.read_only, read_only=t.read_only,
                 preview=partial(t.preview, files) if t.preview is not None else None,
                 path_arguments=("path",))
            for t in FILE_TOOLS]


def _guard(verb: str, fn):
    """OS errors (permission denied, disk full) as a sentence for the model instead of a traceback."""
    def run(args: dict, cancel) -> str:
        try:
            return fn(args, cancel)
        except OSError as exc:
            raise ValueError(f"Could not {verb} {args.get('path', '.')!r}: {exc.strerror or exc}.")
    return run
