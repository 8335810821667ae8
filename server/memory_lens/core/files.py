"""Reading one memory file safely: never a crash, never a hang, a reason for every refusal.

A file counts only if it is a regular file (after following symlinks) whose bytes decode as
UTF-8 (a leading BOM is dropped) and contain no NUL byte. FIFOs and devices are detected with
`stat` before anything is opened, so reading never blocks.

A file with bad bytes (invalid UTF-8 or a NUL) stays unusable for writing, but it carries the
text the agent loads from it (`decode_as_agent`: U+FFFD for bad bytes, NUL kept, as Node's
`fs.readFile(path, 'utf-8')`) and where its first bad byte is (`FileRead.encoding`).
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path

from memory_lens.core.file_identity import quick_identity

BOM = "\ufeff"
DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024  # past this a memory file is reported, never read whole
ENV_MAX_FILE_SIZE = "MEMORY_LENS_MAX_FILE_SIZE"


@dataclass(frozen=True)
class EncodingIssue:
    """Where a file's first bad byte is: an invalid UTF-8 sequence or a NUL."""

    offset: int  # in bytes, from the start of the file (a BOM included)
    line: int  # 1-based
    column: int  # 1-based, in characters of the decoded line
    reason: str


class FileStatus(str, Enum):
    """What reading a candidate memory file found."""

    OK = "ok"
    MISSING = "missing"
    UNUSABLE = "unusable"


@dataclass(frozen=True)
class FileRead:
    """The outcome of reading one path: its text when usable, else why not."""

    path: Path
    status: FileStatus
    text: str = ""
    reason: str = ""
    size: int = 0
    real_path: Path | None = None
    bom: bool = False  # the file starts with a UTF-8 byte order mark (not part of `text`)
    encoding: EncodingIssue | None = None  # set for a file with bad bytes; `text` is then the agent's
    too_large: bool = False  # over the size limit: not read at all (`size` says how big it is)

    @property
    def ok(self) -> bool:
        return self.status is FileStatus.OK

    @property
    def loadable(self) -> bool:
        """The agent loads this file: it is usable, or its only fault is bad bytes."""
        return self.status is FileStatus.OK or self.encoding is not None

    @property
    def agent_text(self) -> str:
        """The text exactly as the agent decodes it: a byte order mark kept as U+FEFF."""
        return BOM + self.text if self.bom else self.text

    @property
    def exists(self) -> bool:
        return self.status is not FileStatus.MISSING


def _kind_reason(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory, not a file"
    if stat.S_ISFIFO(mode):
        return "is a FIFO (named pipe), not a regular file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a regular file"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a regular file"
    return "is not a regular file"


def _stat_failure(path: Path, err: OSError) -> FileRead:
    if err.errno == errno.ELOOP:
        return FileRead(path, FileStatus.UNUSABLE, reason="is a symbolic link loop")
    if err.errno in (errno.ENOENT, errno.ENOTDIR):
        try:
            is_link = stat.S_ISLNK(os.lstat(path).st_mode)
        except OSError:
            is_link = False
        if is_link:
            try:
                target = os.readlink(path)
            except OSError:
                target = "?"
            return FileRead(path, FileStatus.UNUSABLE, reason=f"is a dangling symbolic link (to {target})")
        return FileRead(path, FileStatus.MISSING, reason="does not exist")
    if err.errno in (errno.EACCES, errno.EPERM):
        return FileRead(path, FileStatus.UNUSABLE, reason="cannot be read: permission denied")
    return FileRead(path, FileStatus.UNUSABLE, reason=f"cannot be read: {err.strerror or err}")


def decode_memory_bytes(data: bytes) -> tuple[str | None, str]:
    """Decode file bytes as memory text; return (text, "") or (None, reason)."""
    nul = data.find(b"\0")
    if nul >= 0:
        return None, f"contains a NUL byte at offset {nul} (binary file?)"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        return None, f"is not valid UTF-8 (bad byte at offset {err.start})"
    if text.startswith(BOM):
        text = text[1:]
    return text, ""


def decode_as_agent(data: bytes) -> tuple[str, bool, EncodingIssue | None]:
    """Decode DATA as the agent does: (text without its BOM, whether there was a BOM, the first
    bad byte or None). Bad bytes become U+FFFD; NUL bytes are kept."""
    strict, why = decode_memory_bytes(data)
    if strict is not None:
        return strict, data.startswith(b"\xef\xbb\xbf"), None
    text = data.decode("utf-8", errors="replace")
    bom = text.startswith(BOM)
    nul = data.find(b"\0")
    try:
        data.decode("utf-8")
        bad = len(data)
    except UnicodeDecodeError as err:
        bad = err.start
    offset = min(bad, nul) if nul >= 0 else bad
    why = (f"contains a NUL byte at offset {nul} (binary file?)" if offset == nul
           else f"is not valid UTF-8 (bad byte at offset {bad})")
    prefix = data[:offset].decode("utf-8")
    line = prefix.count("\n") + 1
    column = len(prefix) - (prefix.rfind("\n") + 1) + 1
    if bom and line == 1:
        column -= 1
    return text[1:] if bom else text, bom, EncodingIssue(offset, line, column, why)


def too_large_reason(size: int, limit: int) -> str:
    return (f"is too large ({size} bytes, over the {limit}-byte limit): it is not checked or edited; "
            f"raise the limit with --max-file-size or {ENV_MAX_FILE_SIZE}")


def read_memory_file(path: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> FileRead:
    """Read one candidate memory file; the result says whether it is usable and why not. A file
    over MAX_BYTES (`Settings.max_file_bytes`) is not read: it comes back `too_large`."""
    p = Path(path)
    try:
        st = os.stat(p)
    except OSError as err:
        return _stat_failure(p, err)
    except ValueError:  # a NUL byte: no file can have that name
        return FileRead(p, FileStatus.UNUSABLE, reason="is not a valid path (a NUL byte in its name)")
    reason = _kind_reason(st.st_mode)
    if reason:
        return FileRead(p, FileStatus.UNUSABLE, reason=reason, size=0)
    try:
        # O_NONBLOCK: if the path was swapped for a FIFO since stat, open must not block.
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        failed = _stat_failure(p, err)
        # The file exists (stat worked) but cannot be opened: still report its size.
        return replace(failed, size=st.st_size) if failed.exists else failed
    try:
        fst = os.fstat(fd)
        reason = _kind_reason(fst.st_mode)
        if reason:
            return FileRead(p, FileStatus.UNUSABLE, reason=reason)
        if fst.st_size > max_bytes:
            return FileRead(p, FileStatus.UNUSABLE, reason=too_large_reason(fst.st_size, max_bytes),
                            size=fst.st_size, real_path=Path(realpath(p)), too_large=True)
        chunks = []
        total = 0
        want = fst.st_size + 1  # the whole file and its end in one read, no oversized buffer
        while True:
            chunk = os.read(fd, want)
            want = 1 << 16
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:  # it grew since fstat: still never more than the limit in memory
                return FileRead(p, FileStatus.UNUSABLE, reason=too_large_reason(total, max_bytes),
                                size=total, real_path=Path(realpath(p)), too_large=True)
            chunks.append(chunk)
        named = _named(fd)  # where the file read is: one system call, not realpath's three
    except OSError as err:
        return FileRead(p, FileStatus.UNUSABLE, reason=f"cannot be read: {err.strerror or err}",
                        size=st.st_size)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    text, bom, issue = decode_as_agent(data)
    real = Path(named or realpath(p))
    if issue is not None:
        return FileRead(p, FileStatus.UNUSABLE, text=text, reason=issue.reason, size=fst.st_size,
                        real_path=real, bom=bom, encoding=issue)
    return FileRead(p, FileStatus.OK, text=text, size=fst.st_size, real_path=real, bom=bom)


_O_PATH = getattr(os, "O_PATH", 0) if os.path.isdir("/proc/self/fd") else 0


def realpath(path: str | os.PathLike[str]) -> str:
    """`os.path.realpath`, faster for an existing path on Linux: the kernel resolves it once when
    it is opened (`O_PATH`: nothing is read, a FIFO does not block) and names the result, in three
    system calls instead of one `lstat` per component. Anything else takes `os.path.realpath`."""
    if _O_PATH:
        try:
            fd = os.open(path, _O_PATH | os.O_CLOEXEC)
        except OSError:
            return os.path.realpath(path)
        try:
            resolved = _named(fd)
        finally:
            os.close(fd)
        if resolved:
            return resolved
    return os.path.realpath(path)


def _named(fd: int) -> str | None:
    """The absolute path the kernel names for open descriptor FD (Linux `/proc`), or None
    (no `/proc`, or a file deleted since it was opened)."""
    if not _O_PATH:
        return None
    try:
        resolved = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    return resolved if resolved.startswith("/") and not resolved.endswith(" (deleted)") else None


def real_dir(path: Path) -> Path | None:
    """PATH resolved, when it is a directory; None otherwise, or when the system cannot name it."""
    try:
        return Path(realpath(path)) if path.is_dir() else None
    except (OSError, ValueError):
        return None


class RunReads:
    """`read_memory_file` for one run of many checks (`memory-lens check` of a tree, where each file
    is read again for every file below it): a file is read once while its identity (one `lstat`:
    `file_identity.quick_identity`) stays the same, so a file changed during the run is read as it
    is. Made per run, never kept: call it with a path, as `read_memory_file`."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._reads: dict[str | os.PathLike[str], tuple[tuple[int, ...], FileRead]] = {}

    def __call__(self, path: str | os.PathLike[str]) -> FileRead:
        ident = quick_identity(path)  # type: ignore[arg-type]  # lstat takes any path
        cached = self._reads.get(path)
        if cached is not None and cached[0] == ident:
            return cached[1]
        got = read_memory_file(path, self.max_bytes)
        if ident is not None:
            self._reads[path] = (ident, got)
        return got
