"""The search index of notes: a SQLite database in the user cache directory, rebuilt from the
note files whenever they change.

The JSON files are the truth; the index is a cache of them. Each sync lists a notes directory
and compares every `*.json` file's (size, mtime_ns, inode, ctime_ns) with what the index holds:
new and changed files are read again, vanished ones dropped. So a note edited by hand, pulled by git or
deleted shows up at the next sync. A short-lived process (the CLI) lists every time. A
long-running one (the language server, the MCP server) skips the listing while the directory
itself is unchanged (a file created, renamed or deleted in it changes its mtime) and its last
listing is younger than `freshness` seconds; with `start_refresh` (what both servers do) the
periodic listing moves to a background thread instead, so a request only lists a directory that
changed, and a file edited in place is picked up by the next background listing (and reported
through `on_change`).

The tokens of each note go into an FTS5 table (SQLite's full-text search), ranked by `bm25()`
(`search`). FTS5 is in the `sqlite3` of every Python Memory Lens supports as distributed
(python.org's Windows and macOS builds, Linux distributions, Homebrew, conda; docs/notes.md);
where it is missing the index cannot be opened and notes commands say so in one line.
A database that is corrupt or of another schema version is rebuilt; when the cache directory
cannot be written, the index lives in memory for the process.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
import unicodedata
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

from memory_lens.core.discovery import Scope
from memory_lens.core.notes import fulltext, search
from memory_lens.core.notes.disk import (
    Signature,
    directory_signature,
    list_note_files,
    note_file_signature,
    read_note_files,
)
from memory_lens.core.notes.locations import Location
from memory_lens.core.notes.model import Note, NoteError, Problem, folded_name, skeleton, tag_key
from memory_lens.core.notes.naming import candidate_filenames
from memory_lens.core.sqlite_wal import close_quietly, is_busy, use_wal
from memory_lens.core.write_policy import WriteArea

SCHEMA_VERSION = "6"
log = logging.getLogger("memory_lens.notes")
T = TypeVar("T")
_TOKENIZER = "unicode61 remove_diacritics 0 categories 'L* N* Co M* Cn'"
_NO_FTS5 = ("this Python's SQLite {version} has no FTS5 full-text search, which the notes index needs: "
            "use a Python from python.org, your system, Homebrew or conda (they all have it)")


class IndexBusyError(NoteError):
    """Another process kept the index locked for too long."""


name_key = folded_name  # how names sort: case-insensitively, then exactly


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


_FILE_COLUMNS = ("f.id, f.scope, f.fname, f.name, f.tags, f.created_at, f.updated_at, "
                 "(SELECT content FROM bodies b WHERE b.id = f.id), f.revision")
# SQLite's page cache per connection (negative: KiB). The files table and the FTS index of
# 10,000 notes take about 15 MB; the default (2 MB) made every search read pages again.
_CACHE_KIB = 32 * 1024
_BUSY_SECONDS = 15.0  # how long a statement waits for another process's lock on the index
REFRESH_GIVE_WAY_MAX = 0.5  # seconds a background listing waits for requests, at most, per round


class NotesIndex:
    """The index of one project's and the global notes directories (see the module docstring).
    Thread-safe: one lock serialises every use of the connection (the background refresh's too)."""

    def __init__(self, locations: Sequence[Location], index_dir: Path | None = None,
                 freshness: float = 0.0, areas: Mapping[Scope, WriteArea] | None = None) -> None:
        self.locations = list(locations)
        self.areas = dict(areas or {})  # where each scope's note files may lead (`disk.read_note_files`)
        self.freshness = freshness
        self._lock = threading.RLock()
        self._closed = False
        self._stop = threading.Event()
        self._refresher: threading.Thread | None = None
        self._dirs: dict[Scope, _DirState] = {}
        self._snapshot: dict[tuple[str, str], tuple[Any, ...]] | None = None
        self._snapshot_version = -1
        self._dirty = False  # this connection changed rows (data_version only counts other connections)
        self._known: dict[Scope, dict[str, Signature]] = {}  # see `_signatures`
        self._known_version = -1
        self._requests = 0  # see `request`
        self._requests_lock = threading.Lock()
        self.db_path: Path | None = None
        directory = _usable_dir(index_dir if index_dir is not None else default_index_dir())
        if directory is not None:
            self.db_path = directory / self._db_name(SCHEMA_VERSION)
            for version in range(1, int(SCHEMA_VERSION)):  # what older versions left behind
                for engine in ("fts", "scan"):
                    _remove_db(directory / self._db_name(str(version), engine))
        self._con = self._open()

    # Opening ----------------------------------------------------------------------------------

    def _db_name(self, version: str, engine: str = "fts") -> str:
        """The database file of these locations and index schema VERSION (before version 5 the
        file of each search ENGINE, `fts` or `scan`, had its own name)."""
        key = "\0".join([version, engine,
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
            con.execute(f"PRAGMA cache_size=-{_CACHE_KIB}")
            con.execute("PRAGMA temp_store=MEMORY")  # temporary tables in memory
            if target != ":memory:":
                use_wal(con, _BUSY_SECONDS)
                # The note files are the truth: a commit does not wait for the disk. A process killed
                # mid-write loses nothing (WAL); a machine crash may lose the last commits (the next
                # sync finds those files changed and reads them again) or damage the database (it is
                # rebuilt from the files when SQLite reports it).
                con.execute("PRAGMA synchronous=OFF")
                # A full build passes 30 MB through the write-ahead log: give the space back after.
                con.execute("PRAGMA journal_size_limit=4194304")
        except BaseException:
            con.close()
            raise
        return con

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
            ctime_ns INTEGER NOT NULL, look TEXT, UNIQUE(scope, fname))""")
        con.execute("CREATE TABLE IF NOT EXISTS bodies(id INTEGER PRIMARY KEY, content TEXT NOT NULL)")
        con.execute("CREATE INDEX IF NOT EXISTS files_name ON files(name, scope)")
        con.execute("CREATE INDEX IF NOT EXISTS files_order ON files(scope, name_key, name)")
        # `look`: the name's `model.skeleton`, so a new name finds the names it looks like at once.
        con.execute("CREATE INDEX IF NOT EXISTS files_look ON files(scope, look)")
        # A sync compares every file's signature with these, read from the index alone.
        con.execute("CREATE INDEX IF NOT EXISTS files_signature ON files(scope, fname, size, mtime_ns, ino, ctime_ns)")
        # Every first page reports the problem files: found through this index, not a table scan.
        con.execute("CREATE INDEX IF NOT EXISTS files_problems ON files(scope, fname) "
                    "WHERE error IS NOT NULL OR shadow=1")
        con.execute("CREATE TABLE IF NOT EXISTS tags(tag TEXT NOT NULL, id INTEGER NOT NULL, "
                    "PRIMARY KEY(tag, id)) WITHOUT ROWID")
        con.execute("CREATE INDEX IF NOT EXISTS tags_id ON tags(id)")
        try:  # `prefix`: FTS5 keeps an index of 2- and 3-character prefixes, for `de*`
            con.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(name, tags, content, "
                        f"tokenize=\"{_TOKENIZER}\", prefix='2 3')")
        except sqlite3.OperationalError as err:
            if "fts5" not in str(err):
                raise
            raise NoteError(_NO_FTS5.format(version=sqlite3.sqlite_version)) from None
        con.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
        # Which database this is (a database rebuilt by another process is another one).
        con.execute("INSERT OR IGNORE INTO meta VALUES ('build', ?)", (os.urandom(8).hex(),))

    def close(self) -> None:
        """Stop the background refresh (waiting for a listing under way) and close the database."""
        self._stop.set()
        thread = self._refresher
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=30.0)  # it re-checks `_closed` under the lock before any query
        with self._lock:
            self._closed = True
            close_quietly(self._con)

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
        while not self._stop.wait(period):
            try:
                changed = self.refresh()
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
            signature = directory_signature(loc.directory)  # before the listing: a change during it is seen
            disk = list_note_files(loc.directory, give_way)
            with self._lock:
                if self._closed:
                    return changed
                changed += self.guard(lambda: self._bring_in_step(loc, disk, signature, time.monotonic()))
        return changed

    # Syncing with the files ---------------------------------------------------------------------

    def sync(self, force: bool = False) -> int:
        """Bring the index in step with the note files; the number of files read again or
        dropped. FORCE lists every directory even when it looks unchanged."""
        with self._lock:
            changed = 0
            for loc in self.locations:
                changed += self.guard(lambda: self._sync_location(loc, force))
            return changed

    def guard(self, action: Callable[[], T]) -> T:
        """Run ACTION; a corrupt database is rebuilt once, a locked one is a clear error."""
        for attempt in range(2):
            try:
                return action()
            except sqlite3.DatabaseError as err:
                if isinstance(err, sqlite3.OperationalError) and is_busy(err):
                    raise IndexBusyError("the notes search index is busy (another Memory Lens process "
                                         "holds it); try again") from None
                if attempt:
                    raise
                self._rebuild()
        raise AssertionError("unreachable")

    def _rebuild(self) -> None:
        close_quietly(self._con)
        if self.db_path is not None:
            _remove_db(self.db_path)
        self._dirs.clear()
        self._known.clear()
        self._con = self._open()
        for loc in self.locations:
            self._sync_location(loc, True)

    def _sync_location(self, loc: Location, force: bool) -> int:
        signature = directory_signature(loc.directory)
        state = self._dirs.get(loc.scope)
        now = time.monotonic()
        if (not force and state is not None and state.signature == signature
                and (self._refresher is not None or now - state.swept_at < self.freshness)):
            return 0
        return self._bring_in_step(loc, list_note_files(loc.directory), signature, now)

    def _bring_in_step(self, loc: Location, disk: dict[str, Signature],
                       signature: tuple[int, int] | None, now: float) -> int:
        """Make the index's files of LOC those of DISK (a listing of its directory)."""
        known = self._signatures(loc.scope)
        stale = [f for f, sig in disk.items() if known.get(f) != sig]
        gone = [f for f in known if f not in disk]
        if stale or gone:
            self._apply(loc, disk, stale, gone + [f for f in stale if f in known])
        self._dirs[loc.scope] = _DirState(signature, now)
        return len(stale) + len(gone)

    def _signatures(self, scope: Scope) -> dict[str, Signature]:
        """The (size, mtime_ns, inode, ctime_ns) the index holds for each file of SCOPE: read once, then
        kept in step with this connection's changes, and read again after another process
        changed the index (`data_version`), so a sync with nothing to do reads nothing."""
        version = self._con.execute("PRAGMA data_version").fetchone()[0]
        if version != self._known_version:
            self._known.clear()
            self._known_version = version
        known = self._known.get(scope)
        if known is None:
            known = {r[0]: tuple(r[1:]) for r in self._con.execute(
                "SELECT fname, size, mtime_ns, ino, ctime_ns FROM files WHERE scope=?", (scope.value,))}
            self._known[scope] = known
        return known

    def _apply(self, loc: Location, disk: dict[str, Signature], stale: list[str], dropped: list[str]) -> None:
        """Drop the rows of the files DROPPED, read the files STALE (of DISK) and insert them, in
        one transaction: each table filled by one `executemany` (a full build is one of these)."""
        # Read before the write lock.
        parsed = list(read_note_files(loc.directory, loc.scope, stale, self.areas.get(loc.scope)))
        con = self._con
        scope = loc.scope.value
        con.execute("BEGIN IMMEDIATE")
        try:
            if con.execute("PRAGMA data_version").fetchone()[0] != self._known_version:
                dropped = list(dict.fromkeys([*dropped, *stale]))  # another process wrote since: any may be there
            names: set[str] = set()
            gone: list[int] = []
            for fname in dropped:
                row = con.execute("SELECT id, name FROM files WHERE scope=? AND fname=?", (scope, fname)).fetchone()
                if row is not None:
                    self._drop(row[0])
                    gone.append(row[0])
                    if row[1] is not None:
                        names.add(row[1])
            next_id = con.execute("SELECT coalesce(max(id), 0) + 1 FROM files").fetchone()[0]
            files, bodies, tags, texts, broken = [], [], [], [], []
            for rowid, (fname, result) in enumerate(parsed, next_id):
                if isinstance(result, str):
                    broken.append((rowid, scope, fname, *disk[fname], result))
                    continue
                note, revision = result
                names.add(note.name)
                keys = {tag_key(t) for t in note.tags}
                files.append((rowid, scope, fname, *disk[fname], note.name, name_key(note.name),
                              "\n".join(note.tags), "".join(f"\n{k}\n" for k in sorted(keys)),
                              note.created_at, note.updated_at, revision, skeleton(note.name)))
                bodies.append((rowid, note.content))
                tags.extend((k, rowid) for k in keys)
                texts.append((rowid, *_index_columns(note)))
            con.executemany("INSERT INTO files(id, scope, fname, size, mtime_ns, ino, ctime_ns, error) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", broken)
            con.executemany("INSERT INTO files(id, scope, fname, size, mtime_ns, ino, ctime_ns, name, name_key, "
                            "tags, tag_keys, created_at, updated_at, revision, look) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", files)
            con.executemany("INSERT INTO bodies(id, content) VALUES (?, ?)", bodies)
            con.executemany("INSERT INTO tags(tag, id) VALUES (?, ?)", tags)
            con.executemany("INSERT INTO fts(rowid, name, tags, content) VALUES (?, ?, ?, ?)", texts)
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
        self._dirty = True

    def _drop(self, rowid: int) -> None:
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
                disk = note_file_signature(loc.directory, fname)  # None: gone
                self._apply(loc, {} if disk is None else {fname: disk}, [] if disk is None else [fname], [fname])
            self.guard(action)

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

            taken = self.guard(snapshot)
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

    def _fetch(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return self.guard(lambda: self._con.execute(sql, args).fetchall())

    def visible_names(self, scope: Scope, names: Iterable[str]) -> set[str]:
        """Which of NAMES are visible notes of SCOPE, as of the last sync (one query for a page)."""
        wanted = sorted(set(names))
        return {r[0] for r in self._fetch(
            "SELECT name FROM files WHERE name IN (SELECT value FROM json_each(?)) AND scope=? AND error IS NULL "
            "AND shadow=0", (json.dumps(wanted, ensure_ascii=False), scope.value))} if wanted else set()

    def holders(self, scope: Scope, name: str) -> list[str]:
        """Every file of SCOPE holding NAME (visible or not)."""
        return sorted(r[0] for r in self._fetch("SELECT fname FROM files WHERE scope=? AND name=? AND error IS NULL",
                                                (scope.value, name)))

    def names(self, scope: Scope, look: str | None = None) -> dict[str, str]:
        """The file of every visible note of SCOPE, by name, as of the last sync; with LOOK,
        only the notes whose name has that `model.skeleton`."""
        where, args = ("", (scope.value,)) if look is None else (" AND look=?", (scope.value, look))
        return dict(self._fetch(f"SELECT name, fname FROM files WHERE scope=? AND error IS NULL AND shadow=0{where}", args))

    def rows(self, ids: Sequence[int]) -> list[Row]:
        """The rows of IDS, in that order."""
        found = {r[0]: self._row(r) for r in self._fetch(
            f"SELECT {_FILE_COLUMNS} FROM files f WHERE id IN ({','.join('?' * len(ids))})", ids)} if ids else {}
        return [found[i] for i in ids if i in found]

    def problems(self, scopes: Sequence[Scope]) -> list[Problem]:
        """Files that are not usable notes, and duplicates of a name, with the reason."""
        out = []
        for scope, fname, error, name in self._fetch(
                "SELECT scope, fname, error, name FROM files WHERE error IS NOT NULL OR shadow=1 "
                "ORDER BY CASE scope WHEN 'project' THEN 0 ELSE 1 END, fname"):
            if Scope(scope) not in scopes:
                continue
            if error is None:
                holder = self._fetch("SELECT fname FROM files WHERE scope=? AND name=? AND error IS NULL AND shadow=0",
                                     (scope, name))
                error = (f"holds the same name {name!r} as {holder[0][0] if holder else 'another file'}; "
                         "rename or remove one of them")
            out.append(Problem(Scope(scope), self._location(Scope(scope)).directory / fname, error))
        return out

    # Searching (`search`) ---------------------------------------------------------------------

    def list_ids(self, scopes: Sequence[Scope], tags: Sequence[str], offset: int, limit: int,
                 query: fulltext.Query | None = None) -> tuple[list[int], int]:
        """A page of note ids in listing order (project first, then by name), and the total;
        with QUERY, only the notes it matches."""
        with self._lock:
            return self.guard(lambda: search.list_ids(self._con, scopes, tags, offset, limit, query))

    def search_ids(self, query: fulltext.Query, scopes: Sequence[Scope], tags: Sequence[str],
                   offset: int, limit: int) -> tuple[list[tuple[int, float]], int]:
        """A page of (note id, score) best first (higher is better: `-bm25()`), and the total
        number of matches."""
        with self._lock:
            return self.guard(lambda: search.search_ids(self._con, query, scopes, tags, offset, limit))


# The database file and its connections ------------------------------------------------------


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


def _index_columns(note: Note) -> tuple[str, str, str]:
    """The name, tags and content of NOTE as the full-text table holds them (`fulltext`)."""
    return (fulltext.index_text(note.name), fulltext.index_text(" ".join(note.tags)),
            fulltext.index_text(note.content))
