"""The `sqlite3` module, for every part of Memory Lens that opens a database: import it from here.

Importing this module the first time turns SQLite's memory statistics off in this process (the
setting SQLite itself recommends, `SQLITE_DEFAULT_MEMSTATUS=0`). With them on, every allocation
SQLite makes takes one process-wide mutex to count its bytes: a broad notes search allocates on
every matching row, so the notes index's two readers (`notes/halves.py`) queued on that mutex and
a half took as long as the whole search. Measured here: two threads each ranking a word found in
all 10,000 notes, 10.1-10.5 ms each with the statistics on, 7.5 ms each with them off (7.5-8.0 ms
alone). Nothing in Memory Lens, or in Python's `sqlite3`, reads the statistics.

SQLite accepts the setting only while it is shut down, and it may be shut down only when nothing
of it is in use, so the switch is made only when all of these hold, and skipped otherwise:

- Linux, with Python's `sqlite3` linked to the shared library `libsqlite3` (the copy in use is
  found in `/proc/self/maps` and opened with `RTLD_NOLOAD`, so it is that copy and not another);
- the statistics are on and count no bytes in use: no connection, statement or anything else of
  SQLite's is open anywhere in the process;
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
    """The shared SQLite library this process's `sqlite3` module already uses, or None."""
    if not sys.platform.startswith("linux") or not hasattr(os, "RTLD_NOLOAD"):
        return None
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = {line.split()[-1] for line in maps if "/libsqlite3" in line}
    except OSError:
        return None
    if len(paths) != 1:  # statically linked (none), or two copies: not ours to tell apart
        return None
    try:
        lib = ctypes.CDLL(paths.pop(), mode=os.RTLD_NOLOAD | os.RTLD_NOW)
    except OSError:
        return None
    lib.sqlite3_memory_used.restype = ctypes.c_int64
    lib.sqlite3_malloc.restype = ctypes.c_void_p
    lib.sqlite3_malloc.argtypes = [ctypes.c_int]
    lib.sqlite3_free.argtypes = [ctypes.c_void_p]
    return lib


def _nothing_in_use(lib: ctypes.CDLL) -> bool:
    """SQLite counts its bytes in use and counts none: nothing of it is open in this process.
    (With the statistics off the count is always 0, so it is checked that a byte is counted.)"""
    if lib.sqlite3_memory_used() != 0:
        return False
    probe = lib.sqlite3_malloc(1)
    if not probe:
        return False
    try:
        return lib.sqlite3_memory_used() > 0
    finally:
        lib.sqlite3_free(probe)


def _memstatus_off() -> bool:
    """Turn SQLite's memory statistics off when it is safe to (module docstring); True if done."""
    if os.environ.get(ENV_MEMSTATUS) == "1":
        return False
    try:
        lib = _library()
        if lib is None or not _nothing_in_use(lib):
            return False
        if lib.sqlite3_shutdown() != _OK:
            lib.sqlite3_initialize()
            return False
        done = lib.sqlite3_config(_CONFIG_MEMSTATUS, ctypes.c_int(0)) == _OK
        lib.sqlite3_initialize()  # what the next connection would do anyway
        return done
    except (AttributeError, OSError, ValueError):  # a library without these entry points
        return False


MEMSTATUS_OFF = _memstatus_off()
