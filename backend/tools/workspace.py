"""Workspace file tools: list, read, search, write and edit files inside one folder and nowhere else.

Every path a model gives is relative to the workspace. It is checked on its
real location (symlinks followed), compared by path components, so neither
`..`, an absolute path, a sibling folder sharing the name's start, nor a link
pointing out can reach a file outside. Folders the tools must never touch
(Numi's data dir, with the API token and the database) stay out of reach even
inside a workspace, by link or by name, compared by the files themselves.
Writes land on the resolved target via a temp file and os.replace, so a
half-written file is never seen. What other programs run on the person's behalf
(backend/tools/protected_paths.py: `.git`, `.envrc`, editor settings) is never
written, in any mode: by name in any letter case, by link, or as the same file.
"""
from __future__ import annotations

import os
import re
import stat
import tempfile
from fnmatch import fnmatchcase
from pathlib import Path

from backend.core.tools import MAX_RESULT_CHARS, Tool
from backend.core.types import ToolSpec
from backend.private_files import USER_UMASK
from backend.tools import file_diff
from backend.tools.file_index import FileIndex, IgnoreRules, walk
from backend.tools.line_search import PATTERN_CHARS, SEARCH_BYTES, SEARCH_SECONDS, Budget, LineMatcher, Stopped
from backend.tools.protected_paths import KINDS as PROTECTED_KINDS
from backend.tools.protected_paths import file_ids as protected_file_ids
from backend.tools.protected_paths import find as find_protected
from backend.tools.protected_paths import protected_name, protected_part

MB = 1024 * 1024
DEFAULT_MAX_READ = 2 * MB
DEFAULT_MAX_WRITE = 2 * MB
OUTPUT_CHARS = MAX_RESULT_CHARS - 5_000  # room for our own "read on from here" note before the hard cut
LIST_DEFAULT, LIST_MAX = 500, 5_000
SEARCH_DEFAULT, SEARCH_MAX = 100, 1_000
LINE_CHARS = 300  # a matched line is shown up to this long
SNIFF_BYTES = 8192  # a NUL byte in here means binary, as git decides it

# New workspace files get the umask the person started Numi with (Numi's own is private).
_UMASK = USER_UMASK
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _size(n: int) -> str:
    return f"{n / MB:.1f} MB" if n >= MB // 10 else f"{n} bytes"


def split_lines(text: str) -> list[str]:
    """Lines as editors and grep number them: only \\n ends a line (str.splitlines also splits on \\f etc.)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _file_id(path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def same_or_inside(path, folder) -> bool:
    """Whether `path` is `folder` or lies inside it, judged by the real folders (links, letter
    case and a second spelling of the same place make no difference)."""
    target = _file_id(folder)
    if target is None:
        return False
    real = Path(os.path.realpath(path))
    return any(_file_id(p) == target for p in (real, *real.parents))


PRIVATE = ("{path!r} is inside Numi's own data folder (chats, settings, the API token), which the "
           "file tools never read, list or change.")


class Workspace:
    """One folder the file tools may touch; every path is checked to stay inside it and out of `hidden`."""

    def __init__(self, root, max_read_bytes: int = DEFAULT_MAX_READ, max_write_bytes: int = DEFAULT_MAX_WRITE,
                 hidden=()):
        self.root = Path(root).resolve(strict=True)
        if not self.root.is_dir():
            raise ValueError(f"The workspace {str(root)!r} is not a folder.")
        self.max_read_bytes, self.max_write_bytes = max_read_bytes, max_write_bytes
        # `hidden` folders (the data dir) can be inside a workspace chosen before they were refused,
        # or the workspace inside them: either way, nothing in them is the tools' to see.
        hidden = [Path(os.path.realpath(h)) for h in hidden if os.path.isdir(h)]
        self._all_hidden = any(same_or_inside(self.root, h) for h in hidden)
        inside = [h for h in hidden if same_or_inside(h, self.root)]
        self._hidden_ids = {_file_id(h) for h in inside}
        self._hidden_rels = [self.rel(h) for h in inside if h.is_relative_to(self.root)]

    def _private(self, real: Path) -> bool:
        """Whether a resolved path is in a hidden folder."""
        if self._all_hidden:
            return True
        if not self._hidden_ids:
            return False
        for p in (real, *real.parents):
            if _file_id(p) in self._hidden_ids:
                return True
            if p == self.root:
                return False
        return False

    def visible(self, rel: str) -> bool:
        """Whether a listed workspace path (as walk() gives it) is outside every hidden folder."""
        return not self._all_hidden and not any(rel == h or rel.startswith(h + "/") for h in self._hidden_rels)

    def resolve(self, path, allow_root: bool = False) -> Path:
        """The real location of `path` (relative to the workspace); ValueError if it is not inside."""
        if not isinstance(path, str):
            raise ValueError("A path must be a string, relative to the workspace folder (e.g. 'src/main.py').")
        if "\x00" in path:
            raise ValueError(f"The path {path!r} contains a NUL character; give a plain relative path.")
        if path.strip() in ("", "."):
            if not allow_root:
                raise ValueError("A file path is needed, relative to the workspace folder (e.g. 'src/main.py').")
            if self._all_hidden:
                raise ValueError(PRIVATE.format(path=path))
            return self.root
        given = Path(path)
        if given.is_absolute() or given.anchor or path.startswith(("/", "\\")):
            raise ValueError(f"The path {path!r} is absolute. Give paths relative to the workspace "
                             f"folder, e.g. 'src/main.py'.")
        if ".." in re.split(r"[\\/]", path):
            raise ValueError(f"The path {path!r} contains '..'. Paths must stay inside the workspace: "
                             f"give them from its top folder, without '..'.")
        real = Path(os.path.realpath(self.root / given))
        if not real.is_relative_to(self.root):  # by components: /ws-sibling is not inside /ws
            raise ValueError(f"The path {path!r} leads outside the workspace through a symbolic link, "
                             f"so it cannot be used.")
        if self._private(real):
            raise ValueError(PRIVATE.format(path=path))
        return real

    def rel(self, real: Path) -> str:
        """A resolved path as the tools show it: relative, with forward slashes ('' for the top)."""
        rel = real.relative_to(self.root).as_posix()
        return "" if rel == "." else rel

    def read_text(self, path: str) -> tuple[Path, str]:
        """(real path, text) of a UTF-8 file within the size limit; ValueError naming `path` otherwise."""
        real, data = self._read_file(path)
        return real, _utf8(path, data)

    def read_utf8(self, path: str) -> tuple[Path, bytes]:
        """(real path, bytes) of a file read_text would read: the same checks, the text left encoded."""
        real, data = self._read_file(path)
        _utf8(path, data)
        return real, data

    def _read_file(self, path: str) -> tuple[Path, bytes]:
        real = self.resolve(path)
        try:
            st = os.stat(real)
        except FileNotFoundError:
            raise ValueError(f"{path!r} does not exist in the workspace. Use list_files to see what is there.")
        if stat.S_ISDIR(st.st_mode):
            raise ValueError(f"{path!r} is a folder, not a file. Use list_files to see what it holds.")
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{path!r} is not a regular file (a device, socket or pipe), so it is not read.")
        self._check_size(path, st.st_size)
        # The real path has no links left in it; O_NOFOLLOW keeps one swapped in since from being followed.
        fd = os.open(real, os.O_RDONLY | _O_NOFOLLOW | getattr(os, "O_BINARY", 0))
        with os.fdopen(fd, "rb") as f:
            data = f.read(self.max_read_bytes + 1)
        self._check_size(path, len(data))
        if b"\x00" in data[:SNIFF_BYTES]:
            raise ValueError(f"{path!r} is a binary file, so it is not read; the file tools handle text only.")
        return real, data

    def _check_size(self, path: str, size: int) -> None:
        if size > self.max_read_bytes:
            raise ValueError(f"{path!r} is {_size(size)}, over the {_size(self.max_read_bytes)} limit for "
                             f"reading a file, so it is not read. Work with a smaller file.")

    def current(self, path: str, limit: int) -> tuple[str, bytes | None, int]:
        """What a write to `path` would replace: its path as shown, its first `limit` + 1 bytes
        (None when it does not exist yet) and its size; ValueError where no file could be written."""
        real = self.resolve(path)
        try:
            st = os.stat(real)
        except FileNotFoundError:
            return self.rel(real), None, 0
        except OSError as exc:
            raise ValueError(f"{path!r} cannot be read: {exc.strerror or exc}.")
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{path!r} is not a regular file.")
        fd = os.open(real, os.O_RDONLY | _O_NOFOLLOW | getattr(os, "O_BINARY", 0))
        with os.fdopen(fd, "rb") as f:
            return self.rel(real), f.read(limit + 1), st.st_size

    def write_text(self, path: str, text: str) -> tuple[Path, bool]:
        """Replace or create `path` atomically, making its folders; (real path, whether it is new)."""
        real = self.resolve(path)
        self._check_unprotected(path, real)
        data = text.encode("utf-8")
        if len(data) > self.max_write_bytes:
            raise ValueError(f"The content for {path!r} is {_size(len(data))}, over the "
                             f"{_size(self.max_write_bytes)} limit for writing a file. Write less.")
        try:
            st = os.stat(real)
        except FileNotFoundError:
            st = None
        except NotADirectoryError:
            raise ValueError(f"{path!r} cannot be written: part of it is a file, not a folder.")
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise ValueError(f"{path!r} is a folder; give the path of a file to write.")
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{path!r} is not a regular file (a device, socket or pipe), so it is not written.")
        try:
            os.makedirs(real.parent, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise ValueError(f"{path!r} cannot be written: part of it is a file, not a folder.")
        # The folders may have been swapped for a link since resolve(); look again before writing.
        parent = Path(os.path.realpath(real.parent))
        if not parent.is_relative_to(self.root):
            raise ValueError(f"The path {path!r} leads outside the workspace through a symbolic link, "
                             f"so it cannot be used.")
        if self._private(parent):
            raise ValueError(PRIVATE.format(path=path))
        self._check_unprotected(path, parent / real.name, by_identity=False)  # by name: a link swapped in
        mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_UMASK
        _atomic_write(real, data, mode)
        return real, st is None

    def _check_unprotected(self, path: str, real: Path, by_identity: bool = True) -> None:
        """ValueError when `real` is, or is in, a file other programs run on the person's behalf:
        by name in any letter case, or by being the same file or folder (a link, another spelling)."""
        parts = real.relative_to(self.root).parts
        where = next(("/".join(parts[:n + 1]) for n, part in enumerate(parts) if protected_name(part)), None)
        if where is None and protected_part(self.root.parts):
            where = f"the workspace itself ({self.root})"
        if where is None and by_identity:
            where = self._protected_by_identity(real)
        if where is not None:
            raise ValueError(PROTECTED.format(path=path, where=where, kinds=PROTECTED_KINDS))

    def _protected_by_identity(self, real: Path) -> str | None:
        """The protected entry `real` lies in or is another name of, found on disk, else None."""
        entries = find_protected(self.root)
        if not entries:
            return None
        for entry in entries:
            if real.is_relative_to(entry):  # a hooks folder or git folder named by git's own files
                return self.rel(entry)
        ids = {_file_id(entry): entry for entry in entries}
        ids.pop(None, None)
        for folder in (real, *real.parents):
            found = ids.get(_file_id(folder))
            if found is not None:
                return self.rel(found)
            if folder == self.root:
                break
        try:
            st = os.stat(real, follow_symlinks=False)
        except OSError:
            return None
        # A hard link shares the file itself; os.replace would not write through it, but the file
        # is theirs all the same.
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            for entry in entries:
                if (st.st_dev, st.st_ino) in protected_file_ids([entry]):
                    return f"a hard link to a file in {self.rel(entry)}"
        return None


PROTECTED = ("{path!r} is protected ({where}): other programs run what such files hold for the person later, "
             "outside any sandbox ({kinds}). The file tools never change them, in any mode; if the change is "
             "wanted, the person can make it themselves outside Numi.")


def _utf8(path: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path!r} is not UTF-8 text (it may be binary or in another encoding), "
                         f"so it is not read.")


def _atomic_write(target: Path, data: bytes, mode: int) -> None:
    # The temp file sits beside the target so os.replace stays on one filesystem (an atomic rename).
    # os.replace swaps the directory entry: a link at `target` would be replaced, never followed.
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)  # mkstemp makes 0600; keep the file's own mode (or the usual one if new)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


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


def _stopped(budget: Budget, why: str) -> str:
    """The line closing a search that ran out of its budget, or was stopped, for the model to act on."""
    if why == "cancelled":
        return "[cancelled: the search is incomplete]"
    limit = (f"a search runs for at most {budget.seconds:g} s" if why == "time"
             else f"a search reads at most {_size(budget.max_bytes)} of files")
    return (f"[stopped after {budget.files} file(s) / {_size(budget.bytes)}: {limit}; "
            f"narrow the search with path or glob]")


def _shown(line: memoryview) -> str:
    """A matched line as the result shows it: up to LINE_CHARS characters."""
    text = bytes(line[:(LINE_CHARS + 1) * 4]).decode("utf-8", "ignore")  # ≤ 4 bytes a character
    return text if len(text) <= LINE_CHARS else text[:LINE_CHARS] + " …"


def _cancelled(cancel) -> bool:
    return cancel is not None and cancel.is_set()


def _guard(verb: str, fn):
    """OS errors (permission denied, disk full) as a sentence for the model instead of a traceback."""
    def run(args: dict, cancel) -> str:
        try:
            return fn(args, cancel)
        except OSError as exc:
            raise ValueError(f"Could not {verb} {args.get('path', '.')!r}: {exc.strerror or exc}.")
    return run


def workspace_tools(workspace: Workspace, index: FileIndex | None = None) -> list[Tool]:
    """list_files, read_file, search_files, write_file and edit_file on `workspace`.

    With a running `index` (of the same root) listing and searching take the file names from it
    instead of walking the disk.
    """
    rules = index.rules if index is not None else IgnoreRules(workspace.root)

    def entries(rel: str, recursive: bool):
        if index is not None and index.running:
            found = iter(index.entries(rel, recursive))
        else:
            found = walk(workspace.root, rules, rel, recursive)
        return (entry for entry in found if workspace.visible(entry[0]))

    def folder(path: str) -> str:
        real = workspace.resolve(path, allow_root=True)
        if not real.exists():
            raise ValueError(f"{path!r} does not exist in the workspace. Use list_files to see what is there.")
        rel = workspace.rel(real)
        if rel and rules.ignored(rel, real.is_dir()):
            raise ValueError(f"{path!r} is excluded by .gitignore (or is git's own .git folder), so it is "
                             f"not listed or searched. read_file can still read a file in it by its path.")
        return rel

    def list_files(args: dict, cancel) -> str:
        path = _str(args, "path", ".")
        recursive = _bool(args, "recursive")
        limit = _int(args, "max_entries", LIST_DEFAULT, 1, LIST_MAX)
        rel = folder(path)
        if not (workspace.root / rel).is_dir():
            raise ValueError(f"{path!r} is a file, not a folder. Use read_file to read it.")
        lines = []
        for entry, is_dir in entries(rel, recursive):
            if _cancelled(cancel):
                lines.append("[cancelled: the listing is incomplete]")
                break
            if len(lines) == limit:
                lines.append(f"[stopped at {limit} entries; list a subfolder, or raise max_entries "
                             f"(up to {LIST_MAX})]")
                break
            lines.append(entry + "/" if is_dir else entry)
        return "\n".join(lines) if lines else f"{rel or 'The workspace'} has no files (ignored ones are left out)."

    def read_file(args: dict, cancel) -> str:
        path = _str(args, "path")
        start = _int(args, "start_line", 1, 1)
        end = _int(args, "end_line", None, 1)
        _, text = workspace.read_text(path)
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

    def search_files(args: dict, cancel) -> str:
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
        rel = folder(path)
        if (workspace.root / rel).is_dir():
            listing = entries(rel, True)
        else:
            workspace.read_utf8(path)  # one named file: say why it cannot be searched instead of skipping it
            listing = iter([(rel, False)])
        budget = Budget(cancel)
        out, used, skipped, note = [], 0, 0, ""
        try:
            for name, is_dir in listing:
                budget.check()  # per entry, so a tree of empty folders stops too
                if is_dir or (glob and not fnmatchcase(name if "/" in glob else name.rsplit("/", 1)[-1], glob)):
                    continue
                try:
                    real = workspace.resolve(name)
                except ValueError:
                    continue  # a link out of the workspace: not ours to search, nothing to report
                if real.is_dir():
                    continue  # a link to a folder inside, whose files are searched under their own path
                try:
                    _, data = workspace.read_utf8(name)
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

    def write_file(args: dict, cancel) -> str:
        path, content = _str(args, "path"), _str(args, "content")
        real, created = workspace.write_text(path, content)
        size = len(content.encode("utf-8"))
        return f"{'Created' if created else 'Overwrote'} {workspace.rel(real)} ({size} bytes)."

    def edited(args: dict) -> tuple[Path, str, str, int]:
        """edit_file's change, worked out: (the file, its text now, its text after, replacements)."""
        path, old, new = _str(args, "path"), _str(args, "old_text"), _str(args, "new_text")
        replace_all = _bool(args, "replace_all")
        if not old:
            raise ValueError("'old_text' is empty; give the exact text to replace (use write_file for a new file).")
        if old == new:
            raise ValueError("'old_text' and 'new_text' are the same, so there is nothing to change.")
        if not workspace.resolve(path).exists():
            raise ValueError(f"{path!r} does not exist in the workspace. Use write_file to create it.")
        real, text = workspace.read_text(path)
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

    def edit_file(args: dict, cancel) -> str:
        real, _, after, count = edited(args)
        workspace.write_text(workspace.rel(real), after)
        return f"Replaced {count} occurrence{'s' if count > 1 else ''} in {workspace.rel(real)}."

    # What a write or an edit would change, for the person to see before and after it runs.
    def write_preview(args: dict) -> str:
        rel, old, size = workspace.current(_str(args, "path"), file_diff.MAX_BYTES)
        return file_diff.describe_change(rel, old, _str(args, "content").encode("utf-8"), size)

    def edit_preview(args: dict) -> str:
        real, before, after, _ = edited(args)
        return file_diff.describe_change(workspace.rel(real), before.encode("utf-8"), after.encode("utf-8"))

    path_prop = {"type": "string", "description": "Path relative to the workspace folder, e.g. 'src/main.py'."}
    folder_prop = {"type": "string", "description": "Folder relative to the workspace; '.' (default) is its top."}
    specs = [
        (ToolSpec("list_files", "List the files and folders in a workspace folder (folders end in '/'). "
                  "Files excluded by .gitignore and the .git folder are left out.",
                  _schema({"path": folder_prop,
                           "recursive": {"type": "boolean", "description": "Include everything below. Default false."},
                           "max_entries": {"type": "integer", "minimum": 1, "maximum": LIST_MAX,
                                           "description": f"Stop after this many entries. Default {LIST_DEFAULT}."}},
                          [])),
         list_files, True, "list"),
        (ToolSpec("read_file", "Read a UTF-8 text file in the workspace, with line numbers "
                  "(number, tab, line). Give start_line/end_line to read part of a long file.",
                  _schema({"path": path_prop,
                           "start_line": {"type": "integer", "minimum": 1, "description": "First line, 1-based."},
                           "end_line": {"type": "integer", "minimum": 1, "description": "Last line, inclusive."}},
                          ["path"])),
         read_file, True, "read"),
        (ToolSpec("search_files", "Search the text files of the workspace (or a folder or file in it) "
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
                          ["pattern"])),
         search_files, True, "search"),
        (ToolSpec("write_file", "Create a text file in the workspace, or replace all of an existing one. "
                  "Missing folders are made. Prefer edit_file to change part of a file.",
                  _schema({"path": path_prop, "content": {"type": "string", "description": "The whole new content."}},
                          ["path", "content"])),
         write_file, False, "write"),
        (ToolSpec("edit_file", "Replace an exact piece of text in a workspace file. old_text must match "
                  "exactly once (whitespace included) unless replace_all is true.",
                  _schema({"path": path_prop,
                           "old_text": {"type": "string", "description": "The exact text to replace, as in the file."},
                           "new_text": {"type": "string", "description": "What replaces it."},
                           "replace_all": {"type": "boolean",
                                           "description": "Replace every occurrence. Default false."}},
                          ["path", "old_text", "new_text"])),
         edit_file, False, "edit"),
    ]
    previews = {"write_file": write_preview, "edit_file": edit_preview}
    # The safe ones only read: they run beside others, unasked, and in plan mode.
    return [Tool(spec, _guard(verb, fn), concurrent=safe, needs_approval=not safe, read_only=safe,
                 preview=previews.get(spec.name), path_arguments=("path",))
            for spec, fn, safe, verb in specs]
