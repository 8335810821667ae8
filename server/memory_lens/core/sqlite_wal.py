"""SQLite databases that several processes open at once: the switch to write-ahead logging,
telling a busy database from a damaged one, and closing a connection that may be broken."""

from __future__ import annotations

import sqlite3
import time

_BUSY, _LOCKED = 5, 6  # SQLITE_BUSY, SQLITE_LOCKED (the low byte of an extended result code)


def is_busy(err: sqlite3.Error) -> bool:
    """ERR says another connection holds a lock (it may work later), not that the file is bad."""
    code = getattr(err, "sqlite_errorcode", None)  # Python 3.11 and later
    if isinstance(code, int):
        return code & 0xFF in (_BUSY, _LOCKED)
    text = str(err)
    return "locked" in text or "busy" in text


def close_quietly(con: sqlite3.Connection | None) -> None:
    """Close CON (if any), ignoring SQLite's errors: it is being given up, broken or not."""
    if con is not None:
        try:
            con.close()
        except sqlite3.Error:
            pass


def use_wal(con: sqlite3.Connection, patience: float) -> None:
    """Put CON's database in WAL mode, waiting up to PATIENCE seconds for other processes.

    Two processes opening a database that is not in WAL mode yet (a new one) both need its
    exclusive lock for the switch. The second one, already holding a shared lock, cannot wait for
    the first without a deadlock, so SQLite answers it "database is locked" at once, without its
    busy timeout; the first one switches the file. That answer is retried here, with short pauses,
    until the switch goes through (or the file is found switched) or PATIENCE runs out."""
    deadline = time.monotonic() + patience
    pause = 0.002
    while True:
        try:
            con.execute("PRAGMA journal_mode=WAL").fetchall()
            return
        except sqlite3.OperationalError as err:
            if not is_busy(err) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
