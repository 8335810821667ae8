"""The `sqlite3` module, for every part of Memory Lens that opens a database: import it from here.

Importing this module the first time turns SQLite's memory statistics off in this process (the
setting SQLite itself recommends, `SQLITE_DEFAULT_MEMSTATUS=0`). With them on, every allocation
SQLite makes takes one process-wide mutex to count its bytes: a ranking allocates for every
matching row, so the notes index's two readers (`notes/halves.py`) queued on that mutex. Measured
here, a word found in all 10,000 notes ranked on two threads at once: 10.1-10.5 ms each with the
statistics on (8.0 ms alone), 7.5-7.6 ms each with them off (7.5 ms alone).
Nothing in Memory Lens, or in Python's `sqlite3`, reads the statistics.

SQLite accepts the setting only while it is shut down, and it may be shut down only when nothing
of it is in use, so the switch is made only when all of these hold, and skipped otherwise:

- Linux, with Python's `sqlite3` linked to the shared library `libsqlite3`: the one copy loaded
  (found in `/proc/self/maps`, opened with `RTLD_NOLOAD`) counts the bytes of a connection that
  `sqlite3` opens, so it is the copy Python uses and its statistics are on;
- it counts no bytes in use before that connection and after it is closed: no connection,
  statement or anything else of SQLite's is open anywhere in the process;
- `$MEMORY_LENS_SQLITE_MEMSTATUS` is not `1` (set it to keep the statistics on).

Skipping changes nothing but the speed of the notes search's second reader.
"""

from __future__ import annotations

import ctypes
import os
import sqlite3
import sys

__all__ = ["sqlite3", "MEMSTATUS_OFF"]

ENV_MEMSTATUS = "MEMORY_LENS_SQLITE_MEMSTATUS"
_CONFIG_MEMSTATUS = 9  # SQLITE_CONFIG_MEMSTATUS
_OK = 0


def _library() -> ctypes.CDLL | None:
    """The shared SQLite library loaded in this process (None: none, or more than one)."""
    if not sys.platform.startswith("linux") or not hasattr(os, "RTLD_NOLOAD"):
        return None
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            fields = (line.split(maxsplit=5) for line in maps)
            paths = {f[5].strip() for f in fields if len(f) == 6 and "/libsqlite3" in f[5]}
    except OSError:
        return None
    if len(paths) != 1:
        return None
    try:
        lib = ctypes.CDLL(paths.pop(), mode=os.RTLD_NOLOAD | os.RTLD_NOW)
    except OSError:  # not loaded after all, or the file was replaced since ("(deleted)")
        return None
    lib.sqlite3_memory_used.restype = ctypes.c_int64
    return lib


def _used_by_python_and_idle(lib: ctypes.CDLL) -> bool:
    """LIB counts no bytes in use, and counts those of a connection Python's `sqlite3` opens: it is
    the copy Python uses (not one linked into something else), its statistics are on (off, it
    counts nothing), and nothing of it is open in this process."""
    if lib.sqlite3_memory_used() != 0:
        return False
    probe = sqlite3.connect(":memory:")
    try:
        counted = lib.sqlite3_memory_used() > 0
    finally:
        probe.close()
    return counted and lib.sqlite3_memory_used() == 0


def _memstatus_off() -> bool:
    """Turn SQLite's memory statistics off when it is safe to (module docstring); True if done."""
    if os.environ.get(ENV_MEMSTATUS) == "1":
        return False
    try:
        lib = _library()
        if lib is None or not _used_by_python_and_idle(lib):
            return False
        if lib.sqlite3_shutdown() != _OK:
            lib.sqlite3_initialize()
            return False
        done = lib.sqlite3_config(_CONFIG_MEMSTATUS, ctypes.c_int(0)) == _OK
        lib.sqlite3_initialize()  # what the next connection would do anyway
        return done
    except (AttributeError, OSError, ValueError, sqlite3.Error):
        return False


MEMSTATUS_OFF = _memstatus_off()
