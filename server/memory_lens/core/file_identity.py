"""What tells one version of a file from the next, for caches and for writers that must notice a
file changed under them: inode, device, size, modification and change times, from one `stat`.

The language server's caches and watcher and the guarded replace all compare these tuples; they
take them from here so that "the same file, unchanged" means one thing everywhere.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

Identity = tuple[int, int, int, int, int]

NOTHING: Identity = (0, 0, -1, 0, 0)  # the identity of a path with nothing at all there


def stat_identity(st: os.stat_result) -> Identity:
    """The identity of the file ST describes."""
    return (st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def file_identity(path: str | os.PathLike[str]) -> Identity | None:
    """The identity of the file PATH names (symlinks followed), or None when it cannot be stat'ed."""
    try:
        return stat_identity(os.stat(path))
    except OSError:
        return None


def quick_identity(path: Path) -> Identity | None:
    """`file_identity` in one system call for the common cases (a regular file; nothing there, which
    is most candidate paths of a chain): `NOTHING` when the path does not exist, not even as a
    link; None when it cannot be stat'ed otherwise."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return NOTHING
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return file_identity(path)
    return stat_identity(st)
