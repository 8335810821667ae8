"""A persistent cache of parsed entries, so that a restarted language server re-parses only the
memory files that changed: what `markdown.entry_keys` found in a text (each entry's normalised
form, first and last line), in SQLite in the user cache directory (`entries-1.sqlite3`); and,
what `secrets.find_secrets` found in a text (`EntryCache.secrets`: each secret's kind, line and
column, never the secret itself); and the near copies found between a file's entries and those of
the files loaded before it (`EntryCache.near`: for the same texts, the same pairs).

Keyed by the text itself (a 128-bit BLAKE2b digest of it), not by the file's identity. The checks
read every text anyway, and hashing one costs about 1% of parsing it; a key made of device, inode,
size and modification time would miss what that tuple cannot see: a file rewritten with the same
size within one tick of a coarse clock (1-2 s on FAT, HFS+, some network file systems), a
modification time set back (`touch -d`, `rsync -t`, an editor or a backup tool that keeps it), an
inode reused after a delete, a tree restored from a snapshot. A digest of the text gives the same
answer as parsing it, whatever happened to the file. The parser's version, Python's Unicode
database (normalising uses NFKC and case folding) and the byte order of the line arrays go into
the digest, so a newer parser never reads an older one's rows.

Never in the way: a database that cannot be created, opened or written (read-only directory,
full disk, corrupted, another schema) is replaced by one in memory for this process, a corrupted
one is removed so that the next start builds it again, and a database locked by another process
for longer than `BUSY_SECONDS` makes that lookup a miss. Every row carries a checksum of its
payload, checked on every read, so damage SQLite itself does not notice is a miss too, never a
wrong finding. Several servers share the file (WAL journal, busy timeout). Rows are written in
batches of `FLUSH_AT` (and at exit); rows unused for `MAX_AGE_DAYS` go, and beyond `MAX_BYTES` of
payload the least recently used go first.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import struct
import sys
import threading
import time
import unicodedata
import weakref
import zlib
from array import array
from functools import lru_cache
from pathlib import Path
from typing import Any, Container, Sequence

from memory_lens.core.checks import FileEntries, NearPairs, file_entries, near_pairs
from memory_lens.core.markdown import entry_keys
from memory_lens.core.secrets import DETECTORS, Secret, find_secrets

log = logging.getLogger("memory_lens.entry_cache")

SCHEMA = 1  # the table layout (PRAGMA user_version); part of the file name
PARSER = 1  # raise when `entry_keys` or `normalize` change what they return
FILE_NAME = f"entries-{SCHEMA}.sqlite3"
BUSY_SECONDS = 0.2  # how long a lookup or a write waits for another process's lock
OPEN_SECONDS = 2.0  # how long opening waits for another server opening the same new file
FLUSH_AT = 64  # rows per write transaction
FLUSH_AFTER = 2.0  # seconds a row may wait for its batch before the next lookup writes it
MAX_BYTES = 64 * 1024 * 1024  # of stored payload: ~5,000 files of the large tree (13 KB each)
MAX_AGE_DAYS = 30
EVICT_EVERY = 1024  # rows written between two evictions

_FORMAT = f"memory-lens entries {PARSER} unicode {unicodedata.unidata_version} {sys.byteorder}\n".encode()
_COUNT = struct.Struct("<I")
_SCHEMA_SQL = (
    "CREATE TABLE IF NOT EXISTS entries (digest BLOB PRIMARY KEY, payload BLOB NOT NULL, "
    "checksum BLOB NOT NULL, size INTEGER NOT NULL, used INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS entries_used ON entries (used)",
)

Parsed = tuple[list[str], "array[int]", "array[int]"]  # what `entry_keys` returns, lines as arrays


@lru_cache(maxsize=None)
def _secrets_format() -> bytes:
    """The digest prefix of a text's secret findings: the detectors' versions."""
    from importlib.metadata import version

    return f"memory-lens secrets {DETECTORS} detect-secrets {version('detect-secrets')}\n".encode()


@lru_cache(maxsize=None)
def _near_format() -> bytes:
    """The digest prefix of a chain's near copies: the parser's (`_FORMAT`), the search's bounds
    and rapidfuzz's version."""
    from importlib.metadata import version

    from memory_lens.core import similar

    return _FORMAT + (f"near {similar.CUTOFF} {similar.MIN_CHARS} {similar.ANCHOR} "
                      f"rapidfuzz {version('rapidfuzz')}\n").encode()


def default_path() -> Path:
    """Where the cache lives: the user cache directory (`$XDG_CACHE_HOME/memory-lens` on Linux)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("memory-lens", appauthor=False)) / FILE_NAME


def digest(text: str, kind: bytes = _FORMAT) -> bytes:
    """The key of TEXT's row (KIND: what the row holds, and made by which version)."""
    h = hashlib.blake2b(kind, digest_size=16)
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.digest()


def encode(keys: list[str], lines: Any, end_lines: Any) -> bytes | None:
    """The payload of a row, or None when KEYS cannot be stored (a key with a line break, which
    `normalize` never returns)."""
    joined = "\n".join(keys)
    if joined.count("\n") != max(len(keys) - 1, 0):
        return None
    starts, ends = array("I", lines), array("I", end_lines)
    return _COUNT.pack(len(keys)) + starts.tobytes() + ends.tobytes() + joined.encode("utf-8", "surrogatepass")


def decode(payload: bytes) -> Parsed | None:
    """What `encode` stored, or None when the payload does not hold together."""
    try:
        (n,) = _COUNT.unpack_from(payload)
        width, view = n * 4, memoryview(payload)
        starts, ends = array("I"), array("I")
        starts.frombytes(view[4:4 + width])
        ends.frombytes(view[4 + width:4 + 2 * width])
        keys = payload[4 + 2 * width:].decode("utf-8", "surrogatepass").split("\n") if n else []
    except (struct.error, ValueError, TypeError):
        return None
    if len(keys) != n or len(starts) != n or len(ends) != n:
        return None
    return keys, starts, ends


def checksum(payload: bytes) -> bytes:
    """What tells a row's payload is the one written (accidental damage, not tampering)."""
    return zlib.crc32(payload).to_bytes(4, "little")


def _today() -> int:
    return int(time.time() // 86400)


def _is_corrupt(err: Exception) -> bool:
    """A database that is damaged or not a database at all (not one that is busy or read-only)."""
    try:
        import sqlite3
    except ImportError:
        return False
    return type(err) is sqlite3.DatabaseError


def _remove_database(path: Path) -> None:
    for name in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            os.unlink(name)
        except OSError:
            pass


class EntryCache:
    """The parsed entries of texts seen before (see the module docstring). Thread-safe; no method
    raises because of the database. PATH None: in memory only."""

    def __init__(self, path: Path | None = None) -> None:
        self._lock = threading.Lock()
        self._pending: dict[bytes, tuple[bytes, bytes]] = {}  # digest -> (payload, checksum)
        self._pending_since = 0.0
        self._touched: set[bytes] = set()
        self._written = 0
        self._evicted = False
        self.path = path
        self._con = self._open(path)
        self.persistent = self._con is not None and path is not None and self._on_disk
        _open_caches.add(self)

    # Opening ---------------------------------------------------------------------------------

    def _open(self, path: Path | None) -> Any:
        self._on_disk = False
        if path is not None:
            for attempt in range(2):
                try:
                    con = _connect(path)
                    self._on_disk = True
                    return con
                except Exception as err:  # sqlite3.Error, OSError: the disk cache is unusable
                    if attempt == 0 and _is_corrupt(err):
                        log.warning("entry cache %s is damaged (%s): building it again", path, err)
                        _remove_database(path)
                        continue
                    log.info("entry cache %s unusable (%s): keeping parsed entries in memory", path, err)
                    break
        try:
            return _connect(None)
        except Exception as err:  # no SQLite at all: every lookup is a miss
            log.warning("no entry cache (%s)", err)
            return None

    def _fail(self, err: Exception) -> None:
        """After an error in use: a damaged database is removed and replaced by one in memory;
        a busy or read-only one is left as it is (this lookup or write is lost)."""
        if not _is_corrupt(err) or not self._on_disk:
            log.info("entry cache: %s", err)
            return
        log.warning("entry cache %s is damaged (%s): removed; in memory until the next start", self.path, err)
        try:
            self._con.close()
        except Exception:
            pass
        if self.path is not None:
            _remove_database(self.path)
        self._pending.clear()
        self._touched.clear()
        self._con = self._open(None)
        self.persistent = False

    # Use -------------------------------------------------------------------------------------

    def entries(self, path: Path, text: str) -> FileEntries:
        """`checks.index_entries(PATH, TEXT)`, from the cache when TEXT was parsed before."""
        key = digest(text)
        found = self.get(key)
        if found is None:
            found = entry_keys(text)
            self.put(key, *found)
        return file_entries(path, text, *found)

    def secrets(self, text: str) -> list[Secret]:
        """`secrets.find_secrets(TEXT)`, from the cache when TEXT was checked before: stored as
        rows of their own (the kinds as keys, the lines and columns as the line arrays), under a
        digest that holds detect-secrets' version and `secrets.DETECTORS`, so a newer detector
        never reads an older one's findings."""
        key = digest(text, _secrets_format())
        found = self.get(key)
        if found is not None:
            return [Secret(kind, line, column) for kind, line, column in zip(*found)]
        secrets = find_secrets(text)
        self.put(key, [s.kind for s in secrets], [s.line for s in secrets], [s.column for s in secrets])
        return secrets

    def near(self, own: FileEntries, general: Sequence[FileEntries], exact: Container[str]) -> NearPairs:
        """`checks.near_pairs(OWN, GENERAL, EXACT)` (EXACT follows from the texts), from the cache
        when the same texts were compared before: a row of its own under a digest of the texts'
        digests in order, each pair as two keys (the entry, its near copy) with the other file's
        index and the score as the line arrays. The search cost a warm check of the large benchmark
        tree ~0.9 s of its ~2.5 s (docs/performance.md)."""
        if not general:
            return {}
        h = hashlib.blake2b(_near_format(), digest_size=16)
        for entries in (own, *general):
            h.update(entries.digest)
        key = h.digest()
        found = self.get(key)
        if found is not None:
            keys, index, score = found
            return {keys[j]: (index[j], keys[j + 1], score[j]) for j in range(0, len(keys) - 1, 2)}
        pairs = near_pairs(own, general, exact)
        keys, index, score = [], [], []
        for mine, (i, theirs, points) in pairs.items():
            keys += (mine, theirs)
            index += (i, i)
            score += (points, points)
        self.put(key, keys, index, score)
        return pairs

    def get(self, key: bytes) -> Parsed | None:
        """The parsed entries stored under KEY (a `digest`), or None."""
        with self._lock:
            if self._con is None:
                return None
            pending = self._pending.get(key)
            if pending is not None:
                return decode(pending[0])
            try:
                if self._pending and time.monotonic() - self._pending_since > FLUSH_AFTER:
                    self._flush()
                row = self._con.execute("SELECT payload, checksum, used FROM entries WHERE digest = ?",
                                        (key,)).fetchone()
            except Exception as err:
                self._fail(err)
                return None
            if row is None:
                return None
            payload, check, used = row
            found = decode(payload) if checksum(payload) == check else None
            if found is None:
                log.info("entry cache: a damaged row, parsing again")
                return None
            if used != _today():
                self._touched.add(key)
            return found

    def contains(self, key: bytes, wanted: str) -> bool | None:
        """Whether some entry of the text whose digest is KEY normalises to a text containing
        WANTED (itself normalised, so without line breaks); None when that text is not cached.
        Reads the stored keys as bytes, no parsing: the workspace-symbol search over every file."""
        if "\n" in wanted:
            return False if self.get(key) is not None else None
        needle = wanted.encode("utf-8", "surrogatepass")
        with self._lock:
            if self._con is None:
                return None
            pending = self._pending.get(key)
            try:
                row = (pending if pending is not None else
                       self._con.execute("SELECT payload, checksum FROM entries WHERE digest = ?", (key,)).fetchone())
            except Exception as err:
                self._fail(err)
                return None
        if row is None or checksum(row[0]) != row[1]:
            return None
        payload = row[0]
        try:
            (n,) = _COUNT.unpack_from(payload)
        except struct.error:
            return None
        start = 4 + 8 * n
        if n == 0 or len(payload) < start:
            return False if n == 0 else None
        # Keys are joined by line breaks and WANTED has none: a match lies inside one key (UTF-8
        # never matches in the middle of a character).
        return payload.find(needle, start) >= 0

    def put(self, key: bytes, keys: list[str], lines: Any, end_lines: Any) -> None:
        """Store the parsed entries of the text whose digest is KEY (written in batches)."""
        payload = encode(keys, lines, end_lines)
        if payload is None:
            return
        with self._lock:
            if self._con is None:
                return
            if not self._pending:
                self._pending_since = time.monotonic()
            self._pending[key] = (payload, checksum(payload))
            if len(self._pending) >= FLUSH_AT:
                self._flush()

    def flush(self) -> None:
        """Write the rows still waiting for their batch."""
        with self._lock:
            if self._con is not None:
                self._flush()

    def close(self) -> None:
        with self._lock:
            if self._con is None:
                return
            self._flush()
            try:
                self._con.close()
            except Exception:
                pass
            self._con = None
        _open_caches.discard(self)

    def _flush(self) -> None:
        if not self._pending and not self._touched:
            return
        today = _today()
        rows = [(key, payload, check, len(payload), today) for key, (payload, check) in self._pending.items()]
        touched = [(today, key) for key in self._touched]
        try:
            with _transaction(self._con):
                self._con.executemany("INSERT OR REPLACE INTO entries (digest, payload, checksum, size, used) "
                                      "VALUES (?, ?, ?, ?, ?)", rows)
                self._con.executemany("UPDATE entries SET used = ? WHERE digest = ?", touched)
                self._written += len(rows)
                if not self._evicted or self._written >= EVICT_EVERY:
                    self._evict(today)
        except Exception as err:
            self._pending.clear()  # lost: parsed again next time
            self._touched.clear()
            self._fail(err)
            return
        self._pending.clear()
        self._touched.clear()

    def _evict(self, today: int) -> None:
        """Drop rows unused for `MAX_AGE_DAYS`, then the least recently used beyond `MAX_BYTES`."""
        self._evicted, self._written = True, 0
        con = self._con
        con.execute("DELETE FROM entries WHERE used < ?", (today - MAX_AGE_DAYS,))
        total = con.execute("SELECT coalesce(sum(size), 0) FROM entries").fetchone()[0]
        if total <= MAX_BYTES:
            return
        excess, doomed = total - MAX_BYTES, []
        for rowid, size in con.execute("SELECT rowid, size FROM entries ORDER BY used, rowid"):
            doomed.append((rowid,))
            excess -= size
            if excess <= 0:
                break
        con.executemany("DELETE FROM entries WHERE rowid = ?", doomed)

    def count(self) -> int:
        """How many rows are stored (written ones; for tests and the benchmark)."""
        with self._lock:
            if self._con is None:
                return 0
            try:
                return self._con.execute("SELECT count(*) FROM entries").fetchone()[0]
            except Exception as err:
                self._fail(err)
                return 0


class _transaction:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error) on an autocommit connection."""

    def __init__(self, con: Any) -> None:
        self.con = con

    def __enter__(self) -> None:
        self.con.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: Any, *rest: Any) -> None:
        if kind is None:
            self.con.execute("COMMIT")
        else:
            try:
                self.con.execute("ROLLBACK")
            except Exception:
                pass


def _connect(path: Path | None) -> Any:
    """An open, checked connection to the cache at PATH (None: in memory), the tables in place."""
    import sqlite3

    from memory_lens.core.sqlite_wal import use_wal

    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(":memory:" if path is None else str(path), timeout=BUSY_SECONDS,
                          isolation_level=None, check_same_thread=False)
    try:
        if path is not None:
            use_wal(con, OPEN_SECONDS)
            # No fsync, not even at checkpoints: after a system crash the file may be damaged,
            # which `_open` and `_fail` notice (and each row's checksum), and it is only a cache.
            con.execute("PRAGMA synchronous=OFF")
        if con.execute("PRAGMA user_version").fetchone()[0] != SCHEMA:
            with _transaction(con):  # re-read under the write lock: another server may be here first
                if con.execute("PRAGMA user_version").fetchone()[0] != SCHEMA:
                    con.execute("DROP TABLE IF EXISTS entries")  # another layout: built again
                    for statement in _SCHEMA_SQL:
                        con.execute(statement)
                    con.execute(f"PRAGMA user_version = {SCHEMA}")
        con.execute("SELECT digest FROM entries LIMIT 1").fetchall()
    except BaseException:
        con.close()
        raise
    return con


_shared: list[EntryCache] = []
_shared_lock = threading.Lock()
_open_caches: weakref.WeakSet[EntryCache] = weakref.WeakSet()


def shared_cache() -> EntryCache:
    """The process's cache at `default_path()`, opened on first use."""
    with _shared_lock:
        if not _shared:
            try:
                path: Path | None = default_path()
            except Exception as err:  # no user cache directory to be found
                log.info("entry cache in memory: %s", err)
                path = None
            _shared.append(EntryCache(path))
        return _shared[0]


@atexit.register
def _flush_all() -> None:
    for cache in list(_open_caches):
        cache.flush()
