"""One folder the file tools may touch, and nowhere else.

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
from pathlib import Path

from backend.private_files import USER_UMASK
from backend.tools.protected_paths import KINDS as PROTECTED_KINDS
from backend.tools.protected_paths import file_ids as protected_file_ids
from backend.tools.protected_paths import find as find_protected
from backend.tools.protected_paths import protected_name, protected_part

MB = 1024 * 1024
DEFAULT_MAX_READ = 2 * MB
DEFAULT_MAX_WRITE = 2 * MB
SNIFF_BYTES = 8192  # a NUL byte in here means binary, as git decides it

# New workspace files get the umask the person started Numi with (Numi's own is private).
_UMASK = USER_UMASK
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def size_text(n: int) -> str:
    """A size as the tools' sentences give it: bytes, or MB with one decimal."""
    return f"{n / MB:.1f} MB" if n >= MB // 10 else f"{n} bytes"


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
            raise ValueError(f"{path!r} is {size_text(size)}, over the {size_text(self.max_read_bytes)} "
                             f"limit for reading a file, so it is not read. Work with a smaller file.")

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
            raise ValueError(f"The content for {path!r} is {size_text(len(data))}, over the "
                             f"{size_text(self.max_write_bytes)} limit for writing a file. Write less.")
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
