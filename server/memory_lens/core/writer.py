"""Safe writes of a user's memory file.

Every write follows the same steps: resolve symlinks (a linked memory file is written through to
its target), take a cross-process lock kept outside the repository (in the user cache
directory), re-read the file under the lock, compute the new content from what is really there,
write it to a temporary file in the same directory, fsync it, and atomically replace the
original (keeping its permissions). Programs that do not use the lock (editors) lose nothing
either: `guarded_replace` reads the file only once it has settled, and applies the change again
on top of whatever such a program wrote into the file before or during the replace.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable, TypeVar

from memory_lens.core.files import BOM, DEFAULT_MAX_FILE_BYTES, FileStatus, decode_memory_bytes, read_memory_file, realpath
from memory_lens.core.guarded_replace import (
    ChangedIntoLinkError,
    StillChangingError,
    UnusableFileError,
    replace_keeping_others,
)
from memory_lens.core.temp_files import remove_stale_temp_files, remove_temp, write_temp
from memory_lens.core.write_policy import OutsideWriteError, WriteArea, check_target

if TYPE_CHECKING:
    import filelock

# filelock, platformdirs, tempfile and hashlib are imported where a write needs them, so that
# read-only commands (show, list, check: often a pre-commit hook) start without paying for them.

T = TypeVar("T")
LOCK_TIMEOUT_SECONDS = 30.0
_BOM_BYTES = BOM.encode("utf-8")


class MemoryFileError(OSError):
    """A memory file cannot be written (the message says which file and why)."""


class OutsideLinkError(MemoryFileError):
    """The write would go through a link to a file outside its area (see `write_policy`)."""


def allowed_target(path: Path, area: WriteArea | None) -> Path:
    """The final target of a write to PATH, checked against AREA (`write_policy.check_target`)."""
    try:
        return check_target(path, area)
    except OutsideWriteError as err:
        raise OutsideLinkError(str(err)) from None
    except OSError:  # realpath before Python 3.13: a link at its lstat was a file at its readlink
        raise MemoryFileError(f"{path}: changed from a link into a file while being written; not written") from None


def lock_dir() -> Path:
    """Where lock files live: `$MEMORY_LENS_LOCK_DIR`, else the user cache dir, else a temp dir."""
    import tempfile

    import platformdirs

    from memory_lens.core.settings import lock_dir_override

    override = lock_dir_override()
    candidates = [override] if override else []
    candidates.append(Path(platformdirs.user_cache_dir("memory-lens", appauthor=False)) / "locks")
    candidates.append(Path(tempfile.gettempdir()) / f"memory-lens-locks-{os.getuid() if hasattr(os, 'getuid') else 'user'}")
    for directory in candidates:
        try:
            directory.mkdir(parents=True, exist_ok=True)
            if os.access(directory, os.W_OK):
                return directory
        except OSError:
            continue
    raise MemoryFileError("no writable directory for lock files: set MEMORY_LENS_LOCK_DIR to one")


def lock_for(real_path: Path) -> filelock.FileLock:
    """The cross-process lock guarding writes to REAL_PATH."""
    import hashlib

    import filelock

    digest = hashlib.sha256(os.fsencode(real_path)).hexdigest()[:32]
    return filelock.FileLock(str(lock_dir() / f"{digest}.lock"), timeout=LOCK_TIMEOUT_SECONDS)


def sweep_temp_files(path: Path) -> None:
    """Remove the temporary files a killed writer left next to PATH (`temp_files`), for a caller
    that does not hold PATH's lock: only when no writer holds it now (its files are in use then)."""
    from filelock import Timeout as LockTimeout

    lock = lock_for(Path(realpath(path)))
    try:
        lock.acquire(timeout=0)
    except LockTimeout:
        return
    try:
        remove_stale_temp_files(path)
    finally:
        lock.release()


def atomic_write(path: Path, data: bytes) -> None:
    """Replace PATH's content with DATA atomically (temp file + fsync + rename), keeping its mode,
    under PATH's write lock. Temporary files a killed writer left next to PATH are removed first
    (see `temp_files`)."""
    with lock_for(Path(realpath(path))):
        remove_stale_temp_files(path)
        tmp = write_temp(path, data)
        try:
            os.replace(tmp, path)
        except BaseException:
            remove_temp(tmp)
            raise
    try:
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def update_memory_file(
    path: Path,
    change: Callable[[str], tuple[str | None, T]],
    create: bool = True,
    area: WriteArea | None = None,
    sweep: bool = True,
) -> T:
    """Apply CHANGE to the current text of memory file PATH, safely.

    CHANGE gets the file's text ("" for a missing file) and returns (new text or None to leave
    the file alone, result). Raises MemoryFileError when the file exists but is unusable, or is
    missing and CREATE is false, or cannot be written; OutsideLinkError when PATH's final target
    leaves AREA (by default PATH's own directory: see `write_policy`), checked before any
    directory is created and again under the lock, right before the file is replaced. SWEEP:
    first remove the temporary files a killed writer left in PATH's directory (`temp_files`),
    which lists it; the notes store sweeps when it lists its directories instead.
    """
    from filelock import Timeout as LockTimeout

    first = read_memory_file(path, DEFAULT_MAX_FILE_BYTES if area is None else area.max_file_bytes)
    if first.status is FileStatus.UNUSABLE:
        raise MemoryFileError(f"{path}: {first.reason}; fix or remove it, then try again")
    if first.status is FileStatus.MISSING and not create:
        raise MemoryFileError(f"{path}: does not exist")  # before any directory is made for it
    target = allowed_target(path, area)
    linked = target != Path(os.path.abspath(path))
    shown = f"{path} (-> {target})" if linked else f"{path}"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise MemoryFileError(f"{shown}: cannot create its directory: {err.strerror or err}") from None
    try:
        with lock_for(target):
            if sweep:
                remove_stale_temp_files(target)
            results: list[T] = []

            def compute(data: bytes | None) -> bytes | None:
                # Called once per round: again when another program changed the file meanwhile.
                if data is None and not create:
                    raise MemoryFileError(f"{shown}: does not exist")
                text, why = decode_memory_bytes(data) if data is not None else ("", "")
                if text is None:
                    raise MemoryFileError(f"{shown}: {why}; fix or remove it, then try again")
                new_text, result = change(text)
                results[:] = [result]
                if new_text is None or new_text == text:
                    return None
                had_bom = data is not None and data.startswith(_BOM_BYTES)
                return ((BOM if had_bom else "") + new_text).encode("utf-8")

            def before_publish() -> None:
                _require_writable(target, shown)
                if not linked and os.path.islink(path):
                    raise MemoryFileError(f"{shown}: changed into a link while being written; not written")
                if allowed_target(path, area) != target:
                    changed = "its link" if linked else "a directory on its path"
                    raise MemoryFileError(f"{shown}: {changed} changed while being written; not written")

            replace_keeping_others(target, compute, before_publish)
            return results[0]
    except ChangedIntoLinkError:
        raise MemoryFileError(f"{shown}: changed into a link while being written; not written") from None
    except UnusableFileError as err:
        raise MemoryFileError(f"{shown}: {err.strerror}; fix or remove it, then try again") from None
    except StillChangingError:
        raise MemoryFileError(f"{shown}: another program keeps changing it while it is being written; "
                              "try again when it stops") from None
    except LockTimeout:
        raise MemoryFileError(
            f"{shown}: another Memory Lens process holds its lock for over {LOCK_TIMEOUT_SECONDS:.0f}s; try again"
        ) from None
    except PermissionError as err:
        raise MemoryFileError(f"{shown}: cannot write: {err.strerror or 'permission denied'}") from None
    except MemoryFileError:
        raise
    except OSError as err:
        raise MemoryFileError(f"{shown}: cannot write: {err.strerror or err}") from None


def _require_writable(target: Path, shown: str) -> None:
    """The replace would succeed on a read-only file (it needs only the directory): respect the
    file's own permission, as editors do, and say which of the two is missing."""
    if os.path.exists(target) and not os.access(target, os.W_OK):
        raise MemoryFileError(f"{shown}: the file is read-only; make it writable (chmod u+w) and try again")
    if not os.access(target.parent, os.W_OK | os.X_OK):
        raise MemoryFileError(f"{shown}: its directory {target.parent} is not writable; "
                              "a memory file is replaced atomically, which needs write access to its directory")


def delete_file(path: Path, check: Callable[[str], T], area: WriteArea | None = None) -> T:
    """Delete file PATH under the same lock as writes to it, after CHECK approves its current text.

    CHECK gets the file's text, read again under the lock, and returns the result (or raises to
    keep the file). The link itself goes when PATH is a symlink; its target stays. Raises
    MemoryFileError when the file is missing, unusable or cannot be deleted; OutsideLinkError
    when PATH's directory, links resolved, leaves AREA (given: `write_policy`).
    """
    from filelock import Timeout as LockTimeout

    shown = f"{path}"
    if area is not None:
        allowed_target(path.parent, area)
    try:
        with lock_for(Path(realpath(path))):  # the file a write really changes
            if area is not None:
                allowed_target(path.parent, area)
            got = read_memory_file(path, DEFAULT_MAX_FILE_BYTES if area is None else area.max_file_bytes)
            if got.status is FileStatus.MISSING:
                raise MemoryFileError(f"{shown}: does not exist")
            if got.status is FileStatus.UNUSABLE:
                raise MemoryFileError(f"{shown}: {got.reason}; fix or remove it, then try again")
            result = check(got.text)
            if not os.access(path.parent, os.W_OK | os.X_OK):
                raise MemoryFileError(f"{shown}: its directory {path.parent} is not writable")
            os.unlink(path)
            return result
    except LockTimeout:
        raise MemoryFileError(
            f"{shown}: another Memory Lens process holds its lock for over {LOCK_TIMEOUT_SECONDS:.0f}s; try again"
        ) from None
    except MemoryFileError:
        raise
    except FileNotFoundError:
        raise MemoryFileError(f"{shown}: does not exist") from None
    except OSError as err:
        raise MemoryFileError(f"{shown}: cannot delete: {err.strerror or err}") from None
