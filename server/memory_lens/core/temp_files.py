"""Temporary files of atomic writes: made next to the file they will replace, and removed when
a killed writer (kill -9, a power cut) left them behind.

They are named `.<name>.ml<pid>-<random>.tmp`: hidden, and carrying the writer's process id, so
a later write can tell a file whose writer is gone (removed) from one a live writer may still be
using (kept). Versions before this naming used `.<name>.<random>.tmp`; those are removed once
they have been left untouched for an hour.
"""

from __future__ import annotations

import os
import re
import stat
import time
from pathlib import Path

LEGACY_STALE_SECONDS = 3600.0

_OURS = re.compile(r"\..+\.ml(\d+)-[a-z0-9_]{8}\.tmp")


def temp_prefix(target: Path) -> str:
    """The start of this process's temporary file names next to TARGET."""
    return f".{target.name}.ml{os.getpid()}-"


def write_temp(target: Path, data: bytes) -> Path:
    """DATA in a new temporary file next to TARGET, flushed to disk, with TARGET's mode and
    owner (or the mode a new file gets); the caller renames or removes it."""
    import tempfile

    try:
        like = os.stat(target)
        mode, owner = stat.S_IMODE(like.st_mode), like
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode, owner = 0o666 & ~umask, None
    fd, name = tempfile.mkstemp(prefix=temp_prefix(target), suffix=".tmp", dir=target.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        if owner is not None and hasattr(os, "chown"):
            try:
                os.chown(tmp, owner.st_uid, owner.st_gid)
            except OSError:
                pass
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return tmp


def remove_stale_temp_files(target: Path) -> list[str]:
    """Delete the temporary files next to TARGET that a killed writer left: ours
    (`.<name>.ml<pid>-<random>.tmp`) whose process no longer exists, and TARGET's own of older
    versions (`.<target name>.<random>.tmp`) untouched for an hour. Returns their names."""
    legacy = re.compile(re.escape(f".{target.name}.") + r"[a-z0-9_]{8}\.tmp")
    removed = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        name = entry.name
        if not (name.startswith(".") and name.endswith(".tmp")):
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            ours = _OURS.fullmatch(name)
            if ours:
                stale = not _process_exists(int(ours.group(1)))
            else:
                stale = bool(legacy.fullmatch(name)) and now - entry.stat(follow_symlinks=False).st_mtime > LEGACY_STALE_SECONDS
            if stale:
                os.unlink(entry.path)
                removed.append(name)
        except OSError:
            continue
    return removed


def _process_exists(pid: int) -> bool:
    """Whether process PID exists (this process included: another thread may be writing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):
        return True  # someone else's process, or a number no process can have: keep the file
    return True
