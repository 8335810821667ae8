"""Building the shortlists of broad terms (`shortlists`) beside the requests a server answers.

Each term's full ranking runs on a connection of its own, outside the index's lock, so a request
goes on meanwhile; the shortlist is then written on the index's connection under the lock, unless
the notes changed since it was measured (the index's generation moved: the next round measures
again). An index in memory has no second connection: there the ranking runs on the index's own,
under the lock.
"""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from typing import Iterator

from memory_lens.core.notes import shortlists
from memory_lens.core.notes.search import IndexSearch, SearchedIndex, shortlists_on
from memory_lens.core.sqlite_setup import sqlite3
from memory_lens.core.sqlite_wal import close_quietly

log = logging.getLogger("memory_lens.notes")


class ShortlistBuilder:
    """Builds the shortlists of one index; its searches (SEARCH) say which broad terms they met
    without one."""

    def __init__(self, index: SearchedIndex, search: IndexSearch) -> None:
        self._index = index
        self._search = search
        self._con: sqlite3.Connection | None = None  # the reading connection, opened at first use
        self._building = threading.Lock()

    def prepare(self, discover: bool = True) -> int:
        """Build the shortlists of the broad terms searched since the last call, of those worn by
        changes and, with DISCOVER, of every broad term without one; the number built."""
        index = self._index
        if not shortlists_on(index):
            return 0
        with self._building:
            with index.lock:
                if index.closed:
                    return 0
                wanted, self._search.wanted = list(self._search.wanted), set()
            try:
                with self._reading() as reader:
                    todo = list(dict.fromkeys([*wanted, *shortlists.worn(reader)]))
                    if discover:
                        todo += [t for t in shortlists.broad_terms(reader) if t not in todo]
                built = 0
                for term in todo:
                    if index.stopping.is_set():
                        break
                    with self._reading() as reader:
                        result = shortlists.measure(reader, term, index.generation)
                    if result is not None and self._store(result):
                        built += 1
                return built
            except sqlite3.Error as err:  # a busy, closed or replaced index: the next round tries again
                log.info("notes: building search shortlists stopped: %s", err)
                self._close()
                return 0

    def close(self) -> None:
        """Close the reading connection (after a round under way, which stops at its next term
        once the index is closing)."""
        with self._building:
            self._close()

    def _store(self, result: shortlists.Built) -> bool:
        index = self._index
        with index.lock:
            if index.closed:
                return False

            def write() -> bool:
                con = index.connection
                con.execute("BEGIN IMMEDIATE")
                try:
                    if index.generation(con) != result.generation:
                        con.execute("ROLLBACK")
                        return False  # the notes changed since it was measured: next round
                    shortlists.store(con, result)
                    con.execute("COMMIT")
                except BaseException:
                    con.execute("ROLLBACK")
                    raise
                return True
            return bool(index.guard(write))

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """The connection to read with: one of its own to the index's database, used without the
        lock (opened again when the index was rebuilt since); for an index in memory, the index's
        own, under the lock."""
        index = self._index
        if index.db_path is None:
            with index.lock:
                if index.closed:
                    raise sqlite3.ProgrammingError("the notes index is closed")
                yield index.connection
            return
        if self._con is not None and not index.is_current(self._con):
            self._close()
        if self._con is None:
            self._con = index.open_reader()
        yield self._con

    def _close(self) -> None:
        con, self._con = self._con, None
        close_quietly(con)

