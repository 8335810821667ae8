"""Note files on disk: listing a notes directory, reading and writing one note file.

Reads go through the core's safe reader (`files.read_memory_file`: FIFOs never opened, invalid
UTF-8 and permission errors reported, never raised) after a size check, so a huge file is
reported without being read. Writes go through the core writer (`writer.update_memory_file`,
`writer.delete_file`): a cross-process lock per file, the file read again under the lock, a
temporary file, fsync and an atomic rename. Nothing half-written is ever visible, and two
processes creating the same note cannot both succeed.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from memory_lens.core.discovery import Scope
from memory_lens.core.files import FileStatus, decode_memory_bytes, read_memory_file
from memory_lens.core.guarded_replace import fsync_dir
from memory_lens.core.notes.naming import is_note_file
from memory_lens.core.notes.model import (
    MAX_FILE_BYTES,
    Note,
    NoteError,
    NoteExistsError,
    NoteFileError,
    NoteNotFoundError,
    StoredNote,
    decode_note,
    revision_of,
)
from memory_lens.core.temp_files import temp_prefix
from memory_lens.core.write_policy import WriteArea, is_inside
from memory_lens.core.writer import (
    MemoryFileError,
    OutsideLinkError,
    allowed_target,
    delete_file,
    lock_for,
    sweep_temp_files,
    update_memory_file,
)


def read_note_file(path: Path, scope: Scope, area: WriteArea | None = None) -> StoredNote:
    """The note in PATH. NoteNotFoundError when there is no such file; NoteFileError (the
    message is the reason, without the path) when the file is not a usable note, or when AREA
    is given and PATH leads out of it through a symbolic link (`outside_area`)."""
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        if os.path.islink(path):
            raise NoteFileError(f"is a dangling symbolic link (to {os.readlink(path)})") from None
        raise NoteNotFoundError(f"{path}: no such note file") from None
    except OSError as err:
        raise NoteFileError(f"cannot be read: {err.strerror or err}") from None
    outside = outside_area(path, area)
    if outside:
        raise NoteFileError(outside)
    if size > MAX_FILE_BYTES:
        raise NoteFileError(f"is too large for a note ({size} bytes; the limit is {MAX_FILE_BYTES})")
    got = read_memory_file(path, MAX_FILE_BYTES)
    if got.status is FileStatus.MISSING:
        raise NoteNotFoundError(f"{path}: no such note file")
    if not got.ok:
        raise NoteFileError(got.reason)
    return StoredNote(decode_note(got.text, scope), path, revision_of(got.text))


def outside_area(path: Path, area: WriteArea | None) -> str | None:
    """Why PATH is not read: through a symbolic link (its own or a directory's), it leads out
    of AREA (the notes directory's link rule of `write_policy`, applied to reads) and the user
    has not allowed that; None when it may be read."""
    if area is None or area.follow_outside_links:
        return None
    real = os.path.realpath(path)
    if is_inside(real, area.roots):
        return None
    return f"is a link to {real}, outside {area.what}; not read ({area.hint})"


def read_note_files(directory: Path, scope: Scope, fnames: Iterable[str],
                    area: WriteArea | None = None) -> Iterator[tuple[str, tuple[Note, str] | str]]:
    """(file name, (note, revision)) for each of FNAMES in DIRECTORY, or (file name, why it is
    not a usable note): what `read_note_file` gives for each, read the short way. A plain
    regular file within the size limits is read through one directory descriptor (an `lstat`,
    an `open`, an `fstat`, one `read`); anything else (a symbolic link, a FIFO, a file growing
    or shrinking meanwhile, bytes that are not UTF-8, a directory that leads out of AREA) goes
    through `read_note_file`, so every file gets the same answer and the same reason either way."""
    limit = MAX_FILE_BYTES
    try:
        dir_fd: int | None = None if outside_area(directory, area) else os.open(
            directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        dir_fd = None
    try:
        for fname in fnames:
            text = _read_plain(dir_fd, fname, limit) if dir_fd is not None else None
            try:
                if text is None:
                    stored = read_note_file(directory / fname, scope, area)
                    yield fname, (stored.note, stored.revision)
                else:
                    yield fname, (decode_note(text, scope), revision_of(text))
            except NoteNotFoundError:
                yield fname, "vanished while being read"
            except NoteFileError as err:
                yield fname, str(err)
    finally:
        if dir_fd is not None:
            os.close(dir_fd)


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)


def _read_plain(dir_fd: int, fname: str, limit: int) -> str | None:
    """The text of FNAME (relative to DIR_FD) when it is a regular file of at most LIMIT bytes of
    valid UTF-8 without NUL bytes, read in one go; None for anything else (the caller then reads
    it the careful way, which says what is wrong). Checked before opening, as the safe reader
    does, so a device or FIFO is never opened; O_NONBLOCK and `fstat` cover a swap meanwhile."""
    try:
        before = os.stat(fname, dir_fd=dir_fd, follow_symlinks=False)  # a link: the careful way
        if not stat.S_ISREG(before.st_mode) or before.st_size > limit:
            return None
        fd = os.open(fname, _READ_FLAGS, dir_fd=dir_fd)
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        data = os.read(fd, st.st_size + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) != st.st_size:  # changed while being read
        return None
    text, _ = decode_memory_bytes(data)
    return text


def create_file(path: Path, text: str, area: WriteArea | None = None) -> None:
    """Write TEXT to the new file PATH through the core writer; NoteExistsError when PATH exists."""

    def change(current: str) -> tuple[str, None]:
        if os.path.lexists(path):  # under the lock: whoever got here first created it
            raise NoteExistsError(f"a note file {path.name} already exists in {path.parent}")
        return text, None

    try:
        update_memory_file(path, change, area=area, sweep=False)  # `list_note_files` sweeps
    except MemoryFileError as err:
        if os.path.lexists(path) and not isinstance(err, OutsideLinkError):
            raise NoteExistsError(f"{err}") from None
        raise NoteFileError(str(err)) from None


BATCH_FILE = "memory-lens-batch.json"  # the name a batch's temporary files carry (`create_files`)


def create_files(directory: Path, files: Sequence[tuple[str, str]], area: WriteArea | None = None) -> list[str]:
    """Create each (file name, text) of FILES in DIRECTORY, each only where nothing is there; the
    file names that were taken (left alone). For many files at once (restore, import): each text
    goes to a temporary file, all are flushed to disk together (one `os.sync` where the system
    has it, else an fsync each), then each is linked to its name, which fails, atomically, when
    anything is there (a note, a link, a file another process created meanwhile); the directory
    is flushed once. Nothing half-written is ever visible. The temporary files are named after
    BATCH_FILE and the batch holds its lock, so a listing's sweep leaves them alone while the
    batch runs and removes them after a killed one (`list_note_files`). On a file system
    without hard links each file goes through the core writer instead."""
    from filelock import Timeout as LockTimeout

    try:
        allowed_target(directory, area)
        directory.mkdir(parents=True, exist_ok=True)
    except MemoryFileError as err:
        raise NoteFileError(str(err)) from None
    except OSError as err:
        raise NoteFileError(f"{directory}: cannot create it: {err.strerror or err}") from None
    umask = os.umask(0)
    os.umask(umask)
    batch_sync = hasattr(os, "sync")
    batch = directory / BATCH_FILE
    temps: list[tuple[str, str, Path]] = []
    taken: list[str] = []
    try:
        with lock_for(Path(os.path.realpath(batch))):
            try:
                for fname, text in files:
                    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(batch), suffix=".tmp", dir=directory)
                    temps.append((fname, text, Path(tmp)))
                    with os.fdopen(fd, "wb") as fh:
                        fh.write(text.encode("utf-8"))
                        if not batch_sync:
                            fh.flush()
                            os.fsync(fh.fileno())
                    os.chmod(tmp, 0o666 & ~umask)
                if batch_sync:
                    os.sync()
                allowed_target(directory, area)  # again, right before the files appear
                for fname, text, tmp in temps:
                    try:
                        os.link(tmp, directory / fname)
                    except FileExistsError:
                        taken.append(fname)
                    except OSError:  # no hard links here: the writer's own way, one file at a time
                        try:
                            create_file(directory / fname, text, area)
                        except NoteExistsError:
                            taken.append(fname)
            finally:
                for _, _, tmp in temps:
                    try:
                        os.unlink(tmp)
                    except OSError:
                        pass
    except MemoryFileError as err:
        raise NoteFileError(str(err)) from None
    except LockTimeout:
        raise NoteFileError(f"{directory}: another Memory Lens process is writing many notes there; "
                            "try again when it is done") from None
    except OSError as err:
        raise NoteFileError(f"{directory}: cannot write note files: {err.strerror or err}") from None
    fsync_dir(directory)
    return taken


def rewrite_note_file(path: Path, scope: Scope, transform: Callable[[StoredNote], Note | None],
                      area: WriteArea | None = None) -> tuple[StoredNote, bool]:
    """Replace the note in PATH with TRANSFORM(current note), read under the lock; TRANSFORM
    returns None to leave it alone (or raises). Returns (the note now on disk, whether it was
    written). A malformed file is never overwritten: NoteFileError."""
    outcome: list[tuple[StoredNote, bool]] = []

    def change(current: str) -> tuple[str | None, None]:
        outcome.clear()
        if not current and not os.path.exists(path):
            raise NoteNotFoundError(f"{path}: the note file was deleted")
        try:
            stored = StoredNote(decode_note(current, scope), path, revision_of(current))
        except NoteFileError as err:
            raise NoteFileError(f"{path}: {err}; it is not overwritten: fix or remove it by hand") from None
        new = transform(stored)
        if new is None:
            outcome.append((stored, False))
            return None, None
        text = new.encode()
        outcome.append((StoredNote(new, path, revision_of(text)), text != current))
        return text, None

    try:
        update_memory_file(path, change, create=False, area=area, sweep=False)
    except MemoryFileError as err:
        if not os.path.lexists(path):
            raise NoteNotFoundError(f"{path}: the note file was deleted") from None
        raise NoteFileError(str(err)) from None
    return outcome[-1]


def delete_note_file(path: Path, scope: Scope, check: Callable[[StoredNote], None],
                     area: WriteArea | None = None) -> StoredNote:
    """Delete the note file PATH after CHECK (which may raise) approved the note in it, read
    under the lock. A malformed file is never deleted by name: NoteFileError."""

    def approve(current: str) -> StoredNote:
        try:
            stored = StoredNote(decode_note(current, scope), path, revision_of(current))
        except NoteFileError as err:
            raise NoteFileError(f"{path}: {err}; it is not deleted: fix or remove it by hand") from None
        check(stored)
        return stored

    try:
        return delete_file(path, approve, area)
    except MemoryFileError as err:
        if not os.path.lexists(path):
            raise NoteNotFoundError(f"{path}: the note file was deleted") from None
        raise NoteFileError(str(err)) from None


# Listing a notes directory -----------------------------------------------------------------


# What tells a note file changed: (size, mtime_ns, inode, ctime_ns). The ctime too, because a
# file rewritten in place at the same length with its mtime set back keeps the other three.
Signature = tuple[int, int, int, int]


def directory_signature(directory: Path) -> tuple[int, int] | None:
    """(mtime_ns, inode) of DIRECTORY, which a file created, renamed or deleted in it changes;
    None when it is gone."""
    try:
        st = os.stat(directory)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ino)


def list_note_files(directory: Path, give_way: Callable[[], None] | None = None) -> dict[str, Signature]:
    """(size, mtime_ns, inode, ctime_ns) of every note file of DIRECTORY (symlinks followed; a dangling
    one gets zeros, so it is read and reported). GIVE_WAY: called every 256 entries. The
    temporary files a killed writer left next to note files are removed (`temp_files`): note
    writes do not list the directory for them, so that their cost does not grow with it."""
    out: dict[str, Signature] = {}
    leftovers: set[str] = set()
    try:
        with os.scandir(directory) as entries:
            for n, entry in enumerate(entries):
                if give_way is not None and not n & 255:
                    give_way()
                if not is_note_file(entry.name):
                    if entry.name.startswith(".") and entry.name.endswith(".tmp"):
                        leftovers.add(entry.name[1:-4].rpartition(".")[0])  # `.<note file>.<random>.tmp`
                    continue
                try:
                    st = entry.stat()
                    out[entry.name] = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
                except OSError:
                    out[entry.name] = (0, 0, 0, 0)
    except OSError:
        return {}
    for fname in leftovers:
        if is_note_file(fname):
            sweep_temp_files(directory / fname)  # unless a writer is at work on it
    return out


def note_file_signature(directory: Path, fname: str) -> Signature | None:
    """(size, mtime_ns, inode, ctime_ns) of note file FNAME of DIRECTORY, as `list_note_files` gives it;
    None when there is none."""
    path = directory / fname
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return (0, 0, 0, 0) if os.path.islink(path) else None
    except OSError:
        return (0, 0, 0, 0)
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
