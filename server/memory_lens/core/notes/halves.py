"""A second reader of the notes index, on a thread of its own, so a broad search ranks half of its
matches beside the calling thread.

FTS5's `bm25()` costs about 0.8 µs a match (it walks the match's positions and looks up its
length), so a word found in all of 10,000 notes takes ~8 ms to rank. Exact BM25 needs every match
scored; what can change is how many cores score them. Python's `sqlite3` lets go of the
interpreter lock while SQLite runs a statement, so two connections to one database rank two rowid
ranges at once: the calling thread ranks the lower half, this reader the upper half, and the
index merges the two ordered halves. Scores are the same either way: `bm25()` takes its statistics (row count, average
length, how many rows hold each phrase) from the whole table, not from the rows a statement visits.

The reader never writes. It is opened at its first use and closed with the index; a reader that
fails is closed and not used again (the calling thread then ranks every match itself)."""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Callable, TypeVar

from memory_lens.core.sqlite_setup import sqlite3
from memory_lens.core.sqlite_wal import close_quietly

log = logging.getLogger("memory_lens.notes")
T = TypeVar("T")


class SecondReader:
    """A read-only connection to the index at PATH (set up by SETUP, as the index sets up its own;
    its statements wait up to TIMEOUT seconds for another process's lock) and the one thread that
    uses it. SAME_DATABASE(connection) tells whether the connection opened the database the
    index's own connection has open (a file replaced in between is another one)."""

    def __init__(self, path: Path, setup: Callable[[sqlite3.Connection], None],
                 same_database: Callable[[sqlite3.Connection], bool], timeout: float) -> None:
        self._path = path
        self._timeout = timeout
        self._setup = setup
        self._same_database = same_database
        self._con: sqlite3.Connection | None = None
        self._pool: ThreadPoolExecutor | None = None
        self.failed = False

    def submit(self, work: Callable[[sqlite3.Connection], T]) -> Future[T] | None:
        """WORK(the reader's connection), started on the reader's thread; None when this reader
        cannot be used (it failed, or could not open the database the index has open)."""
        if self.failed:
            return None
        try:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memory-lens-notes-rank")
            return self._pool.submit(self._run, work)
        except RuntimeError:  # the interpreter is shutting down: no new threads
            return None

    def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        if self._con is None:
            con = sqlite3.connect(str(self._path), timeout=self._timeout, isolation_level=None,
                                  check_same_thread=False)
            try:
                self._setup(con)
                con.execute("PRAGMA query_only=1")
                if not self._same_database(con):
                    raise sqlite3.DatabaseError("the index file was replaced since it was opened")
            except BaseException:
                con.close()
                raise
            self._con = con
        return work(self._con)

    def fail(self, err: BaseException) -> None:
        """WORK failed on the reader: log it, close the reader and use it no more."""
        log.info("notes: the second reader of the search index stops: %s", err)
        self.failed = True
        self.close()

    def close(self) -> None:
        """Close the connection and end the thread (after the work under way, if any)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)
        con, self._con = self._con, None
        close_quietly(con)
