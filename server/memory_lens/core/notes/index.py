"""The search index of notes: a SQLite database in the user cache directory, rebuilt from the
note files whenever they change.

The JSON files are the truth; the index is a cache of them. Each sync lists a notes directory
and compares every `*.json` file's (size, mtime_ns, inode) with what the index holds: new and
changed files are read again, vanished ones dropped. So a note edited by hand, pulled by git or
deleted shows up at the next sync. A short-lived process (the CLI) lists every time. A
long-running one (the language server, the MCP server) skips the listing while the directory
itself is unchanged (a file created, renamed or deleted in it changes its mtime) and its last
listing is younger than `freshness` seconds; with `start_refresh` (what both servers do) the
periodic listing moves to a background thread instead, so a request only lists a directory that
changed, and a file edited in place is picked up by the next background listing (and reported
through `on_change`).

With FTS5 (SQLite's full-text search, in the standard library's `sqlite3` on almost every
build) the tokens of each note go into an FTS5 table ranked by `bm25()`. Without it, the same
tokens go into a plain table and `fulltext` scans them, with the same matches and the same scores.
A database that is corrupt or of another schema version is rebuilt; when the cache directory
cannot be written, the index lives in memory for the process.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
import unicodedata
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence, TypeVar

from memory_lens.core.cpus import usable_cpus
from memory_lens.core.discovery import Scope
from memory_lens.core.notes import fulltext, shortlists
from memory_lens.core.notes.disk import read_note_files
from memory_lens.core.notes.halves import SecondReader
from memory_lens.core.notes.locations import Location
from memory_lens.core.notes.model import Note, NoteError, tag_key
from memory_lens.core.notes.naming import candidate_filenames, is_note_file
from memory_lens.core.sqlite_setup import sqlite3
from memory_lens.core.sqlite_wal import close_quietly, is_busy, use_wal

SCHEMA_VERSION = "4"
log = logging.getLogger("memory_lens.notes")
T = TypeVar("T")
ENV_FTS = "MEMORY_LENS_NOTES_FTS"  # "0" forces the plain scan (for tests and troubleshooting)
ENV_SPLIT = "MEMORY_LENS_NOTES_SPLIT"  # "0": broad searches ranked on one thread (`_in_halves`)
ENV_SHORTLISTS = "MEMORY_LENS_NOTES_SHORTLISTS"  # "0": no shortlists used or built (`shortlists`)
_TOKENIZER = "unicode61 remove_diacritics 0 categories 'L* N* Co M* Cn'"


class IndexBusyError(NoteError):
    """Another process kept the index locked for too long."""


def fts5_available() -> bool:
    """True when this SQLite has FTS5 (and `$MEMORY_LENS_NOTES_FTS` is not `0`)."""
    if os.environ.get(ENV_FTS, "").strip() == "0":
        return False
    return _probe_fts5()


_fts5_probe: list[bool] = []


def _probe_fts5() -> bool:
    if not _fts5_probe:
        try:
            con = sqlite3.connect(":memory:")
            con.execute(f"CREATE VIRTUAL TABLE t USING fts5(a, tokenize=\"{_TOKENIZER}\")")
            con.close()
            _fts5_probe.append(True)
        except sqlite3.Error:
            _fts5_probe.append(False)
    return _fts5_probe[0]


def name_key(name: str) -> str:
    """How names sort: case-insensitively, then exactly."""
    return unicodedata.normalize("NFKC", name).casefold()


def default_index_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("memory-lens", appauthor=False)) / "notes-index"


@dataclass(frozen=True)
class Row:
    """One valid, visible note as the index knows it."""

    id: int
    scope: Scope
    path: Path
    name: str
    tags: tuple[str, ...]
    created_at: str
    updated_at: str
    content: str
    revision: str


@dataclass
class _DirState:
    signature: tuple[int, int] | None
    swept_at: float


# A search of every note (both scopes, no tag filter) with at least RANK_AHEAD_FROM matches, for
# a page ending by RANK_AHEAD_MAX, ranks from the FTS table alone first (`_best_first`). With a
# filter the full query is cheaper: SQLite applies it before computing `bm25()`.
RANK_AHEAD_FROM = 500
RANK_AHEAD_MAX = 1000
RANK_AHEAD_FACTOR, RANK_AHEAD_EXTRA = 2, 32  # it takes FACTOR × the page's end + EXTRA matches
# A search whose query matches at least SPLIT_FROM notes (whatever its filters), for a page ending
# by SPLIT_PAGE_MAX, is ranked in two rowid halves at once: this thread's and a second reader's
# (`halves`). Below it, handing half the work to another thread costs more than it saves.
SPLIT_FROM = 2000
SPLIT_PAGE_MAX = 1000
_FILE_COLUMNS = ("f.id, f.scope, f.fname, f.name, f.tags, f.created_at, f.updated_at, "
                 "(SELECT content FROM bodies b WHERE b.id = f.id), f.revision")
# SQLite's page cache per connection (negative: KiB). The files table and the FTS index of
# 10,000 notes take about 15 MB; the default (2 MB) made every search read pages again.
_CACHE_KIB = 32 * 1024
_ORDER = "CASE f.scope WHEN 'project' THEN 0 ELSE 1 END, f.name_key, f.name"
_WEIGHTS = ", ".join(str(w) for w in fulltext.WEIGHTS)
# The best matches of an FTS5 query by score alone, (rowid, score); {part}: a condition on the rowid.
_BEST_SQL_PART = f"SELECT rowid, bm25(fts, {_WEIGHTS}) AS score FROM fts WHERE fts MATCH ?{{part}} ORDER BY score LIMIT ?"
_BEST_SQL = _BEST_SQL_PART.format(part="")
# The first matches of an FTS5 query in the order of a search's pages: score, then the listing
# order; (id, score, and the three keys of `_ORDER`, to merge two halves in the same order).
_RANKED_SQL = (f"SELECT f.id, bm25(fts, {_WEIGHTS}) AS score, CASE f.scope WHEN 'project' THEN 0 ELSE 1 END, "
               f"f.name_key, f.name FROM fts JOIN files f ON f.id = fts.rowid WHERE fts MATCH ?{{part}}{{where}} "
               f"ORDER BY score, {_ORDER} LIMIT ? OFFSET ?")
# The background thread looks for broad terms without a shortlist at most this often (and only
# when the notes changed since): listing the FTS vocabulary reads the whole index (`shortlists`).
SHORTLIST_DISCOVERY_SECONDS = 60.0
_BUSY_SECONDS = 15.0  # how long a statement waits for another process's lock on the index
REFRESH_GIVE_WAY_MAX = 0.5  # seconds a background listing waits for requests, at most, per round


class NotesIndex:
    """The index of one project's and the global notes directories (see the module docstring).
    Thread-safe: one lock serialises every use of the connection (the background refresh's too)."""

    def __init__(self, locations: Sequence[Location], index_dir: Path | None = None,
                 fts: bool | None = None, freshness: float = 0.0) -> None:
        self.locations = list(locations)
        self.fts = fts5_available() if fts is None else (fts and _probe_fts5())
        self.freshness = freshness
        self._lock = threading.RLock()
        self._closed = False
        self._stop = threading.Event()
        self._refresher: threading.Thread | None = None
        self._dirs: dict[Scope, _DirState] = {}
        self._snapshot: dict[tuple[str, str], tuple[Any, ...]] | None = None
        self._snapshot_version = -1
        self._dirty = False  # this connection changed rows (data_version only counts other connections)
        self._known: dict[Scope, dict[str, tuple[int, int, int]]] = {}  # see `_signatures`
        self._known_version = -1
        self._requests = 0  # see `request`
        self._requests_lock = threading.Lock()
        self._scan_cache: tuple[int, dict[int, tuple[list[str], list[list[str]]]]] | None = None
        self._second: SecondReader | None = None  # see `_in_halves`
        self._builder_con: sqlite3.Connection | None = None  # see `prepare_shortlists`
        self._building = threading.Lock()
        self._wanted: set[fulltext.Phrase] = set()  # broad terms searched without a shortlist
        self.shortlisted = 0  # searches answered from a shortlist (for tests and benchmarks)
        self.db_path: Path | None = None
        directory = _usable_dir(index_dir if index_dir is not None else default_index_dir())
        if directory is not None:
            self.db_path = directory / self._db_name(SCHEMA_VERSION, self.fts)
            for version in range(1, int(SCHEMA_VERSION)):  # what older versions left behind
                for fts in (True, False):
                    _remove_db(directory / self._db_name(str(version), fts))
        self._con = self._open()

    # Opening ----------------------------------------------------------------------------------

    def _db_name(self, version: str, fts: bool) -> str:
        """The database file of these locations, index schema VERSION and search engine."""
        key = "\0".join([version, "fts" if fts else "scan",
                         *(f"{loc.scope.value}={loc.directory}" for loc in self.locations)])
        return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:24] + ".sqlite3"

    def _open(self) -> sqlite3.Connection:
        if self.db_path is not None:
            for _ in range(2):
                con = None
                try:
                    con = self._connect(str(self.db_path))
                    if self._schema_ok(con):
                        return con
                except sqlite3.DatabaseError as err:
                    if is_busy(err):  # another process held it all this time: its index, not a bad one
                        log.warning("notes: the search index %s stayed locked (%s): indexing in memory",
                                    self.db_path, err)
                        close_quietly(con)
                        break
                close_quietly(con)
                _remove_db(self.db_path)  # corrupt, or another schema: rebuild from the files
        self.db_path = None
        con = self._connect(":memory:")
        self._schema_ok(con)
        return con

    def _connect(self, target: str) -> sqlite3.Connection:
        con = sqlite3.connect(target, timeout=_BUSY_SECONDS, isolation_level=None, check_same_thread=False)
        try:
            self._set_up(con, target)
        except BaseException:
            con.close()
            raise
        return con

    def _set_up(self, con: sqlite3.Connection, target: str) -> None:
        _tune(con)
        if target != ":memory:":
            use_wal(con, _BUSY_SECONDS)
            # The note files are the truth: a commit does not wait for the disk. A process killed
            # mid-write loses nothing (WAL); a machine crash may lose the last commits (the next
            # sync finds those files changed and reads them again) or damage the database (it is
            # rebuilt from the files when SQLite reports it).
            con.execute("PRAGMA synchronous=OFF")
            # A full build passes 30 MB through the write-ahead log: give the space back after.
            con.execute("PRAGMA journal_size_limit=4194304")

    def _schema_ok(self, con: sqlite3.Connection) -> bool:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
        if "meta" in tables:
            row = con.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            return row is not None and row[0] == SCHEMA_VERSION
        con.execute("BEGIN IMMEDIATE")
        try:
            self._create_schema(con)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return True

    def _create_schema(self, con: sqlite3.Connection) -> None:
        con.execute("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID")
        # One small row per file; the content apart, in `bodies`: every search joins its matches
        # with their files rows, and with the content inline 10,000 of them spread over 14 MB of
        # pages instead of 2 (5 ms against 0.8 ms for a word in every note). `tags`: the note's
        # tags, one per line (a tag has no control characters); `tag_keys`: their `tag_key`s, each
        # on its own line between newlines, for a search's tag filter.
        con.execute("""CREATE TABLE IF NOT EXISTS files(
            id INTEGER PRIMARY KEY, scope TEXT NOT NULL, shadow INTEGER NOT NULL DEFAULT 0, error TEXT,
            fname TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, ino INTEGER NOT NULL,
            name TEXT, name_key TEXT, tags TEXT, tag_keys TEXT, created_at TEXT, updated_at TEXT, revision TEXT,
            tokens INTEGER, UNIQUE(scope, fname))""")
        con.execute("CREATE TABLE IF NOT EXISTS bodies(id INTEGER PRIMARY KEY, content TEXT NOT NULL)")
        con.execute("CREATE INDEX IF NOT EXISTS files_name ON files(name, scope)")
        con.execute("CREATE INDEX IF NOT EXISTS files_order ON files(scope, name_key, name)")
        # A sync compares every file's signature with these, read from the index alone.
        con.execute("CREATE INDEX IF NOT EXISTS files_signature ON files(scope, fname, size, mtime_ns, ino)")
        # Every first page reports the problem files: found through this index, not a table scan.
        con.execute("CREATE INDEX IF NOT EXISTS files_problems ON files(scope, fname) "
                    "WHERE error IS NOT NULL OR shadow=1")
        con.execute("CREATE TABLE IF NOT EXISTS tags(tag TEXT NOT NULL, id INTEGER NOT NULL, "
                    "PRIMARY KEY(tag, id)) WITHOUT ROWID")
        con.execute("CREATE INDEX IF NOT EXISTS tags_id ON tags(id)")
        if self.fts:
            con.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(name, tags, content, "
                        f"tokenize=\"{_TOKENIZER}\", prefix='2 3')")
            shortlists.create_schema(con)
        else:
            con.execute("CREATE TABLE IF NOT EXISTS fts(rowid INTEGER PRIMARY KEY, name TEXT, tags TEXT, content TEXT)")
        con.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
        # Which database this is: a second reader checks it opened the same one (`halves`).
        con.execute("INSERT OR IGNORE INTO meta VALUES ('build', ?)", (os.urandom(8).hex(),))
        # Which state of the notes: changed by every commit of `_apply` (a shortlist built on a
        # snapshot is written only if nothing changed since).
        con.execute("INSERT OR IGNORE INTO meta VALUES ('generation', '')")

    def close(self) -> None:
        """Stop the background refresh (waiting for a listing under way) and close the database."""
        self._stop.set()
        thread = self._refresher
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=30.0)  # it re-checks `_closed` under the lock before any query
        with self._lock:
            self._closed = True
            self._close_second()
            close_quietly(self._con)
        with self._building:  # a round under way sees `_closed` before its next write
            self._close_builder()

    # The background refresh ------------------------------------------------------------------

    def start_refresh(self, on_change: Callable[[], None] | None = None, interval: float | None = None) -> None:
        """List the directories every INTERVAL seconds (default: `freshness`) on a background
        thread, bringing in step the files that changed without changing their directory (edited
        in place); ON_CHANGE (called on that thread) when a listing changed the index. From then
        on, `sync` lists a directory only when it changed. Stopped by `close`."""
        period = self.freshness if interval is None else interval
        if period <= 0:
            raise ValueError("the background refresh needs an interval above 0 seconds")
        with self._lock:
            if self._closed or self._refresher is not None:
                return
            self._refresher = threading.Thread(target=self._refresh_loop, args=(period, on_change),
                                               name="memory-lens-notes-refresh", daemon=True)
            self._refresher.start()

    def _refresh_loop(self, period: float, on_change: Callable[[], None] | None) -> None:
        discovered: str | None = None  # the generation of the notes when broad terms were last looked for
        discovered_at = -SHORTLIST_DISCOVERY_SECONDS
        while not self._stop.wait(period):
            try:
                changed = self.refresh()
                with self._lock:
                    generation = None if self._closed else _generation(self._con)
                now = time.monotonic()
                discover = generation != discovered and now - discovered_at >= SHORTLIST_DISCOVERY_SECONDS
                self.prepare_shortlists(discover)
                if discover:
                    discovered, discovered_at = generation, now
            except Exception as err:  # a bad round (a busy index, a directory gone) is retried next time
                log.warning("notes: refreshing the search index failed: %s", err)
                continue
            if changed and on_change is not None and not self._stop.is_set():
                try:
                    on_change()
                except Exception as err:
                    log.warning("notes: reporting changed notes failed: %s", err)

    @contextmanager
    def request(self) -> Iterator[None]:
        """Mark a request under way (the store's operations): the background refresh pauses its
        listing meanwhile, at most REFRESH_GIVE_WAY_MAX seconds a round. Both threads run Python
        code, and a request waiting for the interpreter lock behind the listing's 10,000 `stat`
        calls lost up to 5 ms (the interpreter's switch interval) at each SQLite call it made."""
        with self._requests_lock:
            self._requests += 1
        try:
            yield
        finally:
            with self._requests_lock:
                self._requests -= 1

    def refresh(self) -> int:
        """List every directory and bring the index in step, as `sync(force=True)` does, but with
        the listing (a `stat` per file) done outside the lock, so the requests of other threads
        are not held up by it; the number of files read again or dropped."""
        changed = 0
        waited = [0.0]

        def give_way() -> None:
            while self._requests and waited[0] < REFRESH_GIVE_WAY_MAX and not self._stop.is_set():
                time.sleep(0.002)
                waited[0] += 0.002

        for loc in self.locations:
            if self._stop.is_set():
                break
            signature = _dir_signature(loc.directory)  # before the listing: a change during it is seen
            disk = _list_directory(loc.directory, give_way)
            with self._lock:
                if self._closed:
                    return changed
                changed += self._guard(lambda: self._bring_in_step(loc, disk, signature, time.monotonic()))
        return changed

    # Syncing with the files ---------------------------------------------------------------------

    def sync(self, force: bool = False) -> int:
        """Bring the index in step with the note files; the number of files read again or
        dropped. FORCE lists every directory even when it looks unchanged."""
        with self._lock:
            changed = 0
            for loc in self.locations:
                changed += self._guard(lambda: self._sync_location(loc, force))
            return changed

    def _guard(self, action: Any) -> Any:
        """Run ACTION; a corrupt database is rebuilt once, a locked one is a clear error."""
        for attempt in range(2):
            try:
                return action()
            except sqlite3.OperationalError as err:
                if is_busy(err):
                    raise IndexBusyError("the notes search index is busy (another Memory Lens process "
                                         "holds it); try again") from None
                if attempt:
                    raise
                self._rebuild()
            except sqlite3.DatabaseError:
                if attempt:
                    raise
                self._rebuild()
        raise AssertionError("unreachable")

    def _rebuild(self) -> None:
        self._close_second()
        self._wanted.clear()
        close_quietly(self._con)
        if self.db_path is not None:
            _remove_db(self.db_path)
        self._dirs.clear()
        self._known.clear()
        self._scan_cache = None
        self._con = self._open()
        for loc in self.locations:
            self._sync_location(loc, True)

    def _sync_location(self, loc: Location, force: bool) -> int:
        signature = _dir_signature(loc.directory)
        state = self._dirs.get(loc.scope)
        now = time.monotonic()
        if (not force and state is not None and state.signature == signature
                and (self._refresher is not None or now - state.swept_at < self.freshness)):
            return 0
        return self._bring_in_step(loc, _list_directory(loc.directory), signature, now)

    def _bring_in_step(self, loc: Location, disk: dict[str, tuple[int, int, int]],
                       signature: tuple[int, int] | None, now: float) -> int:
        """Make the index's files of LOC those of DISK (a listing of its directory)."""
        known = self._signatures(loc.scope)
        stale = [f for f, sig in disk.items() if known.get(f) != sig]
        gone = [f for f in known if f not in disk]
        if stale or gone:
            self._apply(loc, disk, stale, gone + [f for f in stale if f in known])
        self._dirs[loc.scope] = _DirState(signature, now)
        return len(stale) + len(gone)

    def _signatures(self, scope: Scope) -> dict[str, tuple[int, int, int]]:
        """The (size, mtime_ns, inode) the index holds for each file of SCOPE: read once, then
        kept in step with this connection's changes, and read again after another process
        changed the index (`data_version`), so a sync with nothing to do reads nothing."""
        version = self._con.execute("PRAGMA data_version").fetchone()[0]
        if version != self._known_version:
            self._known.clear()
            self._known_version = version
        known = self._known.get(scope)
        if known is None:
            known = {r[0]: (r[1], r[2], r[3]) for r in self._con.execute(
                "SELECT fname, size, mtime_ns, ino FROM files WHERE scope=?", (scope.value,))}
            self._known[scope] = known
        return known

    def _apply(self, loc: Location, disk: dict[str, tuple[int, int, int]], stale: list[str], dropped: list[str]) -> None:
        """Drop the rows of the files DROPPED, read the files STALE (of DISK) and insert them, in
        one transaction: each table filled by one `executemany` (a full build is one of these)."""
        parsed = list(read_note_files(loc.directory, loc.scope, stale))  # before the write lock
        con = self._con
        scope = loc.scope.value
        con.execute("BEGIN IMMEDIATE")
        try:
            if con.execute("PRAGMA data_version").fetchone()[0] != self._known_version:
                dropped = list(dict.fromkeys([*dropped, *stale]))  # another process wrote since: any may be there
            names: set[str] = set()
            for fname in dropped:
                row = con.execute("SELECT id, name FROM files WHERE scope=? AND fname=?", (scope, fname)).fetchone()
                if row is not None:
                    self._drop(row[0])
                    if row[1] is not None:
                        names.add(row[1])
            next_id = con.execute("SELECT coalesce(max(id), 0) + 1 FROM files").fetchone()[0]
            files, bodies, tags, texts, broken, tokens = [], [], [], [], [], []
            for rowid, (fname, result) in enumerate(parsed, next_id):
                size, mtime_ns, ino = disk[fname]
                if isinstance(result, str):
                    broken.append((rowid, scope, fname, size, mtime_ns, ino, result))
                    continue
                note, revision = result
                names.add(note.name)
                keys = {tag_key(t) for t in note.tags}
                columns = _index_columns(note)
                split = [c.split() for c in columns]
                files.append((rowid, scope, fname, size, mtime_ns, ino, note.name, name_key(note.name),
                              "\n".join(note.tags), "".join(f"\n{k}\n" for k in sorted(keys)),
                              note.created_at, note.updated_at, revision, sum(map(len, split))))
                bodies.append((rowid, note.content))
                tags.extend((k, rowid) for k in keys)
                texts.append((rowid, *columns))
                tokens.append((rowid, split))
            con.executemany("INSERT INTO files(id, scope, fname, size, mtime_ns, ino, error) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?)", broken)
            con.executemany("INSERT INTO files(id, scope, fname, size, mtime_ns, ino, name, name_key, tags, "
                            "tag_keys, created_at, updated_at, revision, tokens) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", files)
            con.executemany("INSERT INTO bodies(id, content) VALUES (?, ?)", bodies)
            con.executemany("INSERT INTO tags(tag, id) VALUES (?, ?)", tags)
            con.executemany("INSERT INTO fts(rowid, name, tags, content) VALUES (?, ?, ?, ?)", texts)
            if self.fts and tokens:
                shortlists.note_added(con, shortlists.Terms(con), tokens)
            con.execute("UPDATE meta SET value=? WHERE key='generation'", (os.urandom(8).hex(),))
            self._update_shadows(loc.scope, names)
            con.execute("COMMIT")
        except BaseException:
            self._known.clear()
            con.execute("ROLLBACK")
            raise
        known = self._known.get(loc.scope)
        if known is not None:
            for fname in dropped:
                known.pop(fname, None)
            known.update((fname, disk[fname]) for fname in stale)
        self._scan_cache = None
        self._dirty = True

    def _drop(self, rowid: int) -> None:
        if self.fts:
            shortlists.forget(self._con, rowid)
        for table, key in (("files", "id"), ("bodies", "id"), ("tags", "id"), ("fts", "rowid")):
            self._con.execute(f"DELETE FROM {table} WHERE {key}=?", (rowid,))

    def _update_shadows(self, scope: Scope, names: set[str]) -> None:
        """Of several files of one directory holding the same name, the one named after it (else
        the first by file name) is the note; the others are reported and left out. NAMES: the
        names whose files changed; only rows whose flag changes are written."""
        if not names:
            return
        holders: dict[str, list[tuple[int, str, int]]] = {}
        for rid, fname, name, shadow in self._con.execute(
                "SELECT id, fname, name, shadow FROM files WHERE name IN (SELECT value FROM json_each(?)) "
                "AND scope=? AND error IS NULL", (json.dumps(sorted(names)), scope.value)):
            holders.setdefault(name, []).append((rid, fname, shadow))
        flips = []
        for name, rows in holders.items():
            if len(rows) == 1:
                winner = rows[0][0]
            else:
                rows.sort(key=lambda r: r[1])
                by_file = {r[1]: r[0] for r in rows}
                winner = next((by_file[f] for f in candidate_filenames(name) if f in by_file), rows[0][0])
            flips += [(int(rid != winner), rid) for rid, _, shadow in rows if shadow != int(rid != winner)]
        self._con.executemany("UPDATE files SET shadow=? WHERE id=?", flips)

    def record(self, loc: Location, fname: str) -> None:
        """Index file FNAME of LOC again right away (after Memory Lens wrote or deleted it)."""
        with self._lock:
            def action() -> None:
                disk = _list_entry(loc.directory, fname)
                if disk is None:
                    self._apply(loc, {}, [], [fname])
                else:
                    self._apply(loc, {fname: disk}, [fname], [fname])
            self._guard(action)

    def take_changes(self) -> set[tuple[Scope, str | None]]:
        """The (scope, note name) of every note that changed in the index since the last call,
        by this process or another one sharing the database; a None name: a file that is not a
        usable note changed. The first call sets the baseline and reports nothing."""
        with self._lock:
            def snapshot() -> tuple[int, dict[tuple[str, str], tuple[Any, ...]]] | None:
                version = self._con.execute("PRAGMA data_version").fetchone()[0]
                if self._snapshot is not None and version == self._snapshot_version and not self._dirty:
                    return None
                rows = self._con.execute("SELECT scope, fname, name, revision, error, shadow FROM files").fetchall()
                return version, {(r[0], r[1]): tuple(r[2:]) for r in rows}

            taken = self._guard(snapshot)
            if taken is None:
                return set()
            version, current = taken
            previous, self._snapshot, self._snapshot_version, self._dirty = self._snapshot, current, version, False
            if previous is None:
                return set()
            changes: set[tuple[Scope, str | None]] = set()
            for key in previous.keys() | current.keys():
                before, after = previous.get(key), current.get(key)
                if before != after:
                    for row in (before, after):
                        if row is not None:
                            changes.add((Scope(key[0]), row[0] if row[2] is None else None))
            return changes

    # Questions ---------------------------------------------------------------------------------

    def _row(self, r: Sequence[Any]) -> Row:
        loc = self._location(Scope(r[1]))
        return Row(r[0], Scope(r[1]), loc.directory / r[2], r[3], tuple(r[4].split("\n")) if r[4] else (),
                   r[5], r[6], r[7], r[8])

    def _location(self, scope: Scope) -> Location:
        return next(loc for loc in self.locations if loc.scope is scope)

    def find(self, scope: Scope, name: str) -> Row | None:
        """The visible note NAME of SCOPE, as of the last sync."""
        with self._lock:
            r = self._guard(lambda: self._con.execute(
                f"SELECT {_FILE_COLUMNS} FROM files f WHERE scope=? AND name=? AND error IS NULL AND shadow=0",
                (scope.value, name)).fetchone())
            return self._row(r) if r else None

    def visible_names(self, scope: Scope, names: Iterable[str]) -> set[str]:
        """Which of NAMES are visible notes of SCOPE, as of the last sync (one query for a page)."""
        wanted = sorted(set(names))
        if not wanted:
            return set()
        with self._lock:
            return {r[0] for r in self._guard(lambda: self._con.execute(
                "SELECT name FROM files WHERE name IN (SELECT value FROM json_each(?)) AND scope=? "
                "AND error IS NULL AND shadow=0", (json.dumps(wanted, ensure_ascii=False), scope.value)).fetchall())}

    def holders(self, scope: Scope, name: str) -> list[str]:
        """Every file of SCOPE holding NAME (visible or not)."""
        with self._lock:
            return sorted(r[0] for r in self._guard(lambda: self._con.execute(
                "SELECT fname FROM files WHERE scope=? AND name=? AND error IS NULL",
                (scope.value, name)).fetchall()))

    def rows(self, ids: Sequence[int]) -> list[Row]:
        """The rows of IDS, in that order."""
        if not ids:
            return []
        with self._lock:
            marks = ",".join("?" * len(ids))
            found = {r[0]: self._row(r) for r in self._guard(lambda: self._con.execute(
                f"SELECT {_FILE_COLUMNS} FROM files f WHERE id IN ({marks})", list(ids)).fetchall())}
            return [found[i] for i in ids if i in found]

    def problems(self, scopes: Sequence[Scope]) -> list[tuple[Scope, Path, str]]:
        """Files that are not usable notes, and duplicates of a name, with the reason."""
        with self._lock:
            out: list[tuple[Scope, Path, str]] = []
            rows = self._guard(lambda: self._con.execute(
                "SELECT scope, fname, error, name FROM files WHERE error IS NOT NULL OR shadow=1 "
                "ORDER BY CASE scope WHEN 'project' THEN 0 ELSE 1 END, fname").fetchall())
            for scope, fname, error, name in rows:
                s = Scope(scope)
                if s not in scopes:
                    continue
                loc = self._location(s)
                if error is None:
                    holder = self.find(s, name)
                    other = holder.path.name if holder else "another file"
                    error = f"holds the same name {name!r} as {other}; rename or remove one of them"
                out.append((s, loc.directory / fname, error))
            return out

    def _filters(self, scopes: Sequence[Scope], tags: Sequence[str], fts_first: bool = True) -> tuple[str, list[Any]]:
        """The WHERE conditions (on `files f`) of SCOPES and TAGS. FTS_FIRST: in a join with the
        FTS table, whose matches must drive it: a plain `f.scope=?` lets SQLite walk every file
        of the scope through an index and look each one up in the FTS table instead (65 ms for a
        search of 10,000 notes in one scope, against 0.4 ms), so the scope test is written `+f.scope`,
        which no index serves."""
        sql = " AND f.error IS NULL AND f.shadow=0"
        args: list[Any] = []
        if len(scopes) == 1:
            sql += " AND +f.scope=?" if fts_first else " AND f.scope=?"
            args.append(scopes[0].value)
        for tag in tags:  # read from the row the join fetches anyway, not looked up in `tags` per match
            sql += " AND instr(f.tag_keys, ?)"
            args.append(f"\n{tag_key(tag)}\n")
        return sql, args

    def list_ids(self, scopes: Sequence[Scope], tags: Sequence[str], offset: int, limit: int,
                 query: fulltext.Query | None = None) -> tuple[list[int], int]:
        """A page of note ids in listing order (project first, then by name), and the total;
        with QUERY, only the notes it matches."""
        with self._lock:
            if query is not None and not query.empty and not self.fts:
                scored = self._scan(query, scopes, tags)
                ordered = [i for i, _ in sorted(scored, key=lambda s: s[1][1:])]
                return ordered[offset:offset + limit], len(ordered)
            if query is None or query.empty:
                return self._guard(lambda: self._list_in_order(scopes, tags, offset, limit))
            where, args = self._filters(scopes, tags)

            def run() -> tuple[list[int], int]:
                text = query.fts()
                if self._everywhere(scopes, tags) and self._nothing_hidden():
                    total = self._fts_count(text)
                else:
                    total = self._count_matches(text, where, args)
                ids = [r[0] for r in self._con.execute(
                    f"SELECT f.id FROM fts JOIN files f ON f.id = fts.rowid WHERE fts MATCH ?{where} "
                    f"ORDER BY {_ORDER} LIMIT ? OFFSET ?", [text, *args, limit, offset])]
                return ids, total
            return self._guard(run)

    def _count_matches(self, text: str, where: str, args: list[Any], con: sqlite3.Connection | None = None,
                       part: tuple[str, list[Any]] = ("", [])) -> int:
        """How many visible notes pass WHERE (with ARGS: `_filters`) among the matches of TEXT (an
        FTS5 query), of the rowids PART (a condition on `fts.rowid` and its arguments) only."""
        return (con or self._con).execute(
            f"SELECT count(*) FROM fts JOIN files f ON f.id = fts.rowid WHERE fts MATCH ?{part[0]}{where}",
            [text, *part[1], *args]).fetchone()[0]

    def _fts_count(self, text: str) -> int:
        """How many rows of the FTS table match TEXT (an FTS5 query), visible notes or not."""
        return self._con.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", [text]).fetchone()[0]

    def _everywhere(self, scopes: Sequence[Scope], tags: Sequence[str]) -> bool:
        """SCOPES and TAGS filter nothing out: every scope of this index, no tag."""
        return not tags and set(scopes) == {loc.scope for loc in self.locations}

    def _nothing_hidden(self) -> bool:
        """No note is hidden by another file of its name: then every FTS row is a visible note
        (files that are not notes have none), and FTS5 counts the matches of both scopes alone."""
        # `shadow=1`, with the condition of the partial index `files_problems` so that SQLite uses it.
        return self._con.execute(
            "SELECT 1 FROM files WHERE (error IS NOT NULL OR shadow=1) AND shadow=1 LIMIT 1").fetchone() is None

    def _list_in_order(self, scopes: Sequence[Scope], tags: Sequence[str], offset: int,
                       limit: int) -> tuple[list[int], int]:
        """A page of every visible note of SCOPES having TAGS, in listing order: one scope after
        the other, each walked along its (scope, name_key, name) index, so a page costs what it
        holds, not a sort of every note."""
        ordered = sorted(scopes, key=lambda s: 0 if s is Scope.PROJECT else 1)
        has_tag = " AND f.id IN (SELECT id FROM tags WHERE tag=?)"
        tag_sql = has_tag * len(tags)
        tag_args = [tag_key(t) for t in tags]
        if tags:  # driven by the first tag's rows, not by every note of the scope
            counted = self._con.execute(
                "SELECT f.scope, count(*) FROM tags t CROSS JOIN files f ON f.id = t.id WHERE t.tag=? "
                f"AND f.error IS NULL AND f.shadow=0{has_tag * (len(tags) - 1)} GROUP BY f.scope",
                tag_args).fetchall()
        else:
            counted = self._con.execute("SELECT scope, count(*) FROM files WHERE error IS NULL AND shadow=0 "
                                        "GROUP BY scope").fetchall()
        counts = dict(counted)
        ids: list[int] = []
        skip = offset
        for scope in ordered:
            here = counts.get(scope.value, 0)
            if skip >= here:
                skip -= here
                continue
            want = limit - len(ids)
            if want <= 0:
                break
            ids += [r[0] for r in self._con.execute(
                f"SELECT f.id FROM files f WHERE f.scope=? AND f.error IS NULL AND f.shadow=0{tag_sql} "
                "ORDER BY f.name_key, f.name LIMIT ? OFFSET ?", [scope.value, *tag_args, want, skip])]
            skip = 0
        return ids, sum(counts.get(s.value, 0) for s in ordered)

    def search_ids(self, query: fulltext.Query, scopes: Sequence[Scope], tags: Sequence[str],
                   offset: int, limit: int) -> tuple[list[tuple[int, float]], int]:
        """A page of (note id, bm25 score) best first, and the total number of matches."""
        with self._lock:
            if query.empty:
                return [], 0
            if not self.fts:
                scored = sorted(self._scan(query, scopes, tags), key=lambda s: s[1])
                return [(i, key[0]) for i, key in scored[offset:offset + limit]], len(scored)
            where, args = self._filters(scopes, tags)
            text = query.fts()
            everywhere = self._everywhere(scopes, tags)

            def run() -> tuple[list[tuple[int, float]], int]:
                matches = self._fts_count(text)
                total = matches if everywhere and self._nothing_hidden() else None
                if matches >= shortlists.BROAD:
                    page = self._shortlisted(query, matches, where, args, offset, limit)
                    if page is not None:
                        return page, total if total is not None else self._count_matches(text, where, args)
                if matches >= SPLIT_FROM and offset + limit <= SPLIT_PAGE_MAX:
                    answer = self._search_in_halves(text, where, args, offset, limit, total, everywhere)
                    if answer is not None:
                        return answer
                if total is None:
                    total = self._count_matches(text, where, args)
                if everywhere and total >= RANK_AHEAD_FROM and offset + limit <= RANK_AHEAD_MAX:
                    best = self._con.execute(_BEST_SQL, [text, _ahead(offset + limit) + 1]).fetchall()
                    page = self._best_first(best, where, args, offset, limit)
                    if page is not None:
                        return page, total
                rows = self._con.execute(_RANKED_SQL.format(part="", where=where),
                                         [text, *args, limit, offset]).fetchall()
                return [(r[0], r[1]) for r in rows], total
            return self._guard(run)

    def _shortlisted(self, query: fulltext.Query, matches: int, where: str, args: list[Any],
                     offset: int, limit: int) -> list[tuple[int, float]] | None:
        """The page of a broad search of one term from its shortlist (`shortlists`); None when it
        cannot be had that way. A broad term without a shortlist is built one next time
        `prepare_shortlists` runs (the servers' background thread)."""
        term = shortlists.term_of(query)
        if term is None or not self._shortlists_on():
            return None
        page = shortlists.page(self._con, term, matches, where, args, _ORDER, offset, limit)
        if page is not None:
            self.shortlisted += 1
        elif not shortlists.has(self._con, term):
            self._wanted.add(term)
        return page

    def _shortlists_on(self) -> bool:
        return self.fts and os.environ.get(ENV_SHORTLISTS) != "0"

    def prepare_shortlists(self, discover: bool = True) -> int:
        """Build the shortlists (`shortlists`) of the broad terms searched since the last call,
        of those worn by changes and, with DISCOVER, of every broad term without one; the number
        built. Each term's full ranking runs on a connection of its own, outside the lock (a
        request goes on meanwhile); its shortlist is written under the lock, unless the notes
        changed in between. What the servers' background thread does after each listing."""
        if not self._shortlists_on():
            return 0
        with self._building:
            with self._lock:
                if self._closed:
                    return 0
                wanted, self._wanted = list(self._wanted), set()
            try:
                with self._reading() as reader:
                    todo = list(dict.fromkeys([*wanted, *shortlists.worn(reader)]))
                    if discover:
                        todo += [t for t in shortlists.broad_terms(reader, lambda term: _match_count(reader, term))
                                 if t not in todo]
                built = 0
                for term in todo:
                    if self._stop.is_set():
                        break
                    with self._reading() as reader:
                        result = shortlists.measure(reader, term, _generation)
                    if result is not None and self._store_shortlist(result):
                        built += 1
                return built
            except sqlite3.Error as err:  # a busy or replaced index: the next round tries again
                log.info("notes: building search shortlists stopped: %s", err)
                self._close_builder()
                return 0

    def _store_shortlist(self, result: shortlists.Built) -> bool:
        with self._lock:
            if self._closed:
                return False

            def write() -> bool:
                con = self._con
                con.execute("BEGIN IMMEDIATE")
                try:
                    if _generation(con) != result.generation:
                        con.execute("ROLLBACK")
                        return False  # the notes changed since it was measured: next round
                    shortlists.store(con, result)
                    con.execute("COMMIT")
                except BaseException:
                    con.execute("ROLLBACK")
                    raise
                return True
            return bool(self._guard(write))

    @contextmanager
    def _reading(self) -> Iterator[sqlite3.Connection]:
        """The connection `prepare_shortlists` reads with: one of its own to the same database
        (opened at first use), used without the lock; for an index in memory, the index's own,
        under the lock."""
        if self.db_path is None:
            with self._lock:
                if self._closed:
                    raise sqlite3.ProgrammingError("the index is closed")
                yield self._con
            return
        with self._lock:
            if self._closed:
                raise sqlite3.ProgrammingError("the index is closed")
            build = _build_id(self._con)
        if self._builder_con is not None and _build_id(self._builder_con) != build:
            self._close_builder()  # the index was rebuilt since: another file
        if self._builder_con is None:
            con = sqlite3.connect(str(self.db_path), timeout=_BUSY_SECONDS, isolation_level=None,
                                  check_same_thread=False)
            try:
                _tune(con)
                if _build_id(con) != build:
                    raise sqlite3.DatabaseError("the index file was replaced since it was opened")
            except BaseException:
                con.close()
                raise
            self._builder_con = con
        yield self._builder_con

    def _close_builder(self) -> None:
        con, self._builder_con = self._builder_con, None
        if con is not None and con is not self._con:
            close_quietly(con)

    def _search_in_halves(self, text: str, where: str, args: list[Any], offset: int, limit: int,
                          total: int | None, everywhere: bool) -> tuple[list[tuple[int, float]], int] | None:
        """`search_ids`'s answer with the matches counted and ranked in two halves at once
        (`_in_halves`), each half's best merged; None when it cannot be had that way. TOTAL: the
        count, when already known. EVERYWHERE: both scopes without tags (`_best_first` may serve)."""
        need = offset + limit
        ahead = _ahead(need) if everywhere and need <= RANK_AHEAD_MAX else None

        def half(con: sqlite3.Connection, part: str, part_args: list[Any]) -> tuple[int | None, list[Any]]:
            count = self._count_matches(text, where, args, con, (part, part_args)) if total is None else None
            if ahead is not None:
                return count, con.execute(_BEST_SQL_PART.format(part=part), [text, *part_args, ahead + 1]).fetchall()
            return count, con.execute(_RANKED_SQL.format(part=part, where=where),
                                      [text, *part_args, *args, need, 0]).fetchall()

        halves = self._in_halves(half)
        if halves is None:
            return None
        (low_count, low), (high_count, high) = halves
        if total is None:
            assert low_count is not None and high_count is not None
            total = low_count + high_count
        if ahead is not None:
            best = sorted(low + high, key=lambda r: r[1])[:ahead + 1]
            page = self._best_first(best, where, args, offset, limit)
            if page is not None:
                return page, total
            rows = self._con.execute(_RANKED_SQL.format(part="", where=where), [text, *args, need, 0]).fetchall()
        else:
            # In the full query's order: score, then the listing order (`_ORDER`'s three keys).
            rows = sorted(low + high, key=lambda r: r[1:])
        return [(r[0], r[1]) for r in rows[offset:need]], total

    def _in_halves(self, work: Callable[[sqlite3.Connection, str, list[Any]], T]) -> tuple[T, T] | None:
        """WORK(connection, a condition on `fts.rowid`, its arguments) for the lower half of the
        rowids on this thread and for the upper half on the second reader's thread (`halves`),
        both at once: the two answers; None when there is no second reader to be had (an index in
        memory, one CPU, a reader that failed, `$MEMORY_LENS_NOTES_SPLIT` set to `0`) or another
        process changed the index meanwhile (the halves could have seen two versions of it)."""
        if self.db_path is None or _cpus() < 2 or os.environ.get(ENV_SPLIT) == "0":
            return None
        if self._second is None:
            build = _build_id(self._con)
            self._second = SecondReader(self.db_path, _tune, lambda con: _build_id(con) == build, _BUSY_SECONDS)
        # Two subqueries: each is one step of the rowid b-tree; `min(id), max(id)` in one scans it.
        low, high = self._con.execute("SELECT (SELECT min(id) FROM files), (SELECT max(id) FROM files)").fetchone()
        if low is None or low == high:
            return None
        middle = (low + high) // 2
        version = self._con.execute("PRAGMA data_version").fetchone()[0]
        second = self._second
        future = second.submit(lambda con: work(con, " AND fts.rowid > ?", [middle]))
        if future is None:
            return None
        theirs: T | None = None
        try:
            mine = work(self._con, " AND fts.rowid <= ?", [middle])
        finally:  # the reader's half is waited for even when this one failed
            try:
                theirs = future.result()
            except sqlite3.Error as err:
                second.fail(err)
        if second.failed or self._con.execute("PRAGMA data_version").fetchone()[0] != version:
            return None
        return mine, theirs  # type: ignore[return-value]

    def _close_second(self) -> None:
        second, self._second = self._second, None
        if second is not None:
            second.close()

    def _best_first(self, best: list[Any], where: str, args: list[Any],
                    offset: int, limit: int) -> list[tuple[int, float]] | None:
        """The page of a broad search, exactly as the full query orders it, without joining every
        match with its file row (2 of 10 ms with 10,000 matches): BEST, the FTS table's best
        `_ahead(offset + limit) + 1` matches by score, (rowid, score), best first (fewer: every
        match); those scoring strictly better than the first one left out are every match of
        those scores, so when enough of them are visible notes, the page is among them, in the
        same order (score, then the listing order). None when it cannot tell."""
        need = offset + limit
        ahead = _ahead(need)
        every = len(best) <= ahead
        if not every:
            cut = best[ahead][1]
            best = [r for r in best[:ahead] if r[1] < cut]
            if len(best) < need:
                return None
        if not best:
            return []
        values = ",".join("(?, ?)" for _ in best)
        visible = self._con.execute(
            f"WITH c(id, score) AS (VALUES {values}) SELECT f.id, c.score FROM c JOIN files f ON f.id = c.id "
            f"WHERE 1=1{where} ORDER BY c.score, {_ORDER}", [x for r in best for x in r] + args).fetchall()
        if len(visible) < need and not every:
            return None  # notes left out by the filters left too few: the full query decides
        return [(r[0], r[1]) for r in visible[offset:need]]

    # The plain scan (no FTS5) ----------------------------------------------------------------------

    def _scan(self, query: fulltext.Query, scopes: Sequence[Scope],
              tags: Sequence[str]) -> list[tuple[int, tuple[float, int, str, str]]]:
        """(id, (score, scope order, name key, name)) of every visible match, by a scan of the
        tokens with FTS5's bm25 formula and statistics (every indexed note counts)."""
        generation = self._con.execute("PRAGMA data_version").fetchone()[0]
        if self._scan_cache is None or self._scan_cache[0] != generation:
            docs = {}
            for r in self._con.execute("SELECT rowid, name, tags, content FROM fts"):
                texts = [r[1], r[2], r[3]]
                docs[r[0]] = (texts, [t.split() for t in texts])
            self._scan_cache = (generation, docs)
        docs = self._scan_cache[1]
        n_rows = len(docs)
        if not n_rows:
            return []
        total_tokens = sum(sum(len(c) for c in cols) for _, cols in docs.values())
        avgdl = total_tokens / n_rows
        hits = [0] * len(query.phrases)
        matches: list[tuple[int, list[list[int]], int]] = []
        for doc_id, (texts, columns) in docs.items():
            raw = fulltext.raw_counts(query, columns, texts)
            for i, per_column in enumerate(raw):
                if any(per_column):
                    hits[i] += 1
            counts = fulltext.phrase_counts(query, raw)
            if counts is not None:
                matches.append((doc_id, counts, sum(len(c) for c in columns)))
        idfs = [fulltext.idf(n_rows, h) for h in hits]
        where, args = self._filters(scopes, tags, fts_first=False)
        visible = {r[0]: (r[1], r[2], r[3]) for r in self._con.execute(
            f"SELECT f.id, f.scope, f.name_key, f.name FROM files f WHERE 1=1{where}", args)}
        out = []
        for doc_id, counts, size in matches:
            meta = visible.get(doc_id)
            if meta is None:
                continue
            score = fulltext.bm25_score(counts, idfs, size, avgdl)
            out.append((doc_id, (score, 0 if meta[0] == "project" else 1, meta[1], meta[2])))
        return out


# Files on disk ---------------------------------------------------------------------------------


def _ahead(need: int) -> int:
    """How many of the FTS table's best matches `_best_first` takes for a page ending at NEED."""
    return RANK_AHEAD_FACTOR * need + RANK_AHEAD_EXTRA


@lru_cache(maxsize=1)
def _cpus() -> int:
    return usable_cpus()


def _tune(con: sqlite3.Connection) -> None:
    """What every connection to the index sets: its page cache, temporary tables in memory."""
    con.execute(f"PRAGMA cache_size=-{_CACHE_KIB}")
    con.execute("PRAGMA temp_store=MEMORY")


def _generation(con: sqlite3.Connection) -> str | None:
    row = con.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
    return row[0] if row else None


def _match_count(con: sqlite3.Connection, term: str) -> int:
    return con.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (term,)).fetchone()[0]


def _build_id(con: sqlite3.Connection) -> str | None:
    row = con.execute("SELECT value FROM meta WHERE key='build'").fetchone()
    return row[0] if row else None


def _usable_dir(directory: Path) -> Path | None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
        return directory if os.access(directory, os.W_OK) else None
    except OSError:
        return None


def _remove_db(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(f"{path}{suffix}")
        except OSError:
            pass


def _dir_signature(directory: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(directory)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ino)


def _list_directory(directory: Path, give_way: Callable[[], None] | None = None) -> dict[str, tuple[int, int, int]]:
    """(size, mtime_ns, inode) of every note file of DIRECTORY (symlinks followed; a dangling
    one gets zeros, so it is read and reported). GIVE_WAY: called every 256 entries."""
    out: dict[str, tuple[int, int, int]] = {}
    try:
        with os.scandir(directory) as entries:
            for n, entry in enumerate(entries):
                if give_way is not None and not n & 255:
                    give_way()
                if not is_note_file(entry.name):
                    continue
                try:
                    st = entry.stat()
                    out[entry.name] = (st.st_size, st.st_mtime_ns, st.st_ino)
                except OSError:
                    out[entry.name] = (0, 0, 0)
    except OSError:
        return {}
    return out


def _list_entry(directory: Path, fname: str) -> tuple[int, int, int] | None:
    path = directory / fname
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return (0, 0, 0) if os.path.islink(path) else None
    except OSError:
        return (0, 0, 0)
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def _index_columns(note: Note) -> tuple[str, str, str]:
    """The name, tags and content of NOTE as the full-text table holds them (`fulltext`)."""
    return (fulltext.index_text(note.name), fulltext.index_text(" ".join(note.tags)),
            fulltext.index_text(note.content))
