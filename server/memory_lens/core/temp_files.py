"""Temporary files of atomic writes: made next to the file they will replace, and removed when
a killed writer (kill -9, a power cut) left them behind.

They are named `.<name>.ml<pid>-<random>.tmp` (and `…_old.tmp` for the file a replace displaced,
kept for a moment: `guarded_replace`). Every writer holds the file's write lock (`writer.lock_for`)
from before it makes such a file until it has removed it, so a writer holding that lock knows
that any such file of the same name is an orphan, on every system, without asking whether its
process still runs. Versions before this naming used `.<name>.<random>.tmp`; those are removed
once they have been left untouched for an hour.
"""

from __future__ import annotations

import os
import re
import stat
import time
from pathlib import Path

LEGACY_STALE_SECONDS = 3600.0


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
        remove_temp(tmp)
        raise
    return tmp


def remove_temp(tmp: Path) -> None:
    """Remove TMP, a temporary file this writer made and no longer needs; one gone already, or
    held open elsewhere (Windows), is left to the next writer's sweep (`remove_stale_temp_files`)."""
    try:
        os.unlink(tmp)
    except OSError:
        pass


def remove_stale_temp_files(target: Path) -> list[str]:
    """Delete the temporary files of TARGET that a killed writer left: every
    `.<name>.ml<pid>-<random>.tmp` of TARGET's name (the caller holds TARGET's write lock, so no
    live writer has one), and those of older versions (`.<name>.<random>.tmp`) untouched for an
    hour. Returns their names."""
    name = re.escape(f".{target.name}.")
    ours, legacy = re.compile(name + r"ml\d+-\w+\.tmp"), re.compile(name + r"[a-z0-9_]{8}\.tmp")
    removed = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            if ours.fullmatch(entry.name) or (
                    legacy.fullmatch(entry.name)
                    and now - entry.stat(follow_symlinks=False).st_mtime > LEGACY_STALE_SECONDS):
                os.unlink(entry.path)
                removed.append(entry.name)
        except OSError:
            continue
    return removed
