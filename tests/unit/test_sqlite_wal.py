"""Several processes opening one new SQLite database at the same moment (two editors' servers
starting together, two `memory-lens notes` commands run at once): the switch to write-ahead
logging has SQLite answer all but one "database is locked" at once, without its busy timeout.
Every process must end up on the shared file: the entry cache not falling back to memory, the
notes index neither falling back nor removing the file another process just built.

The race is real and timed, so a run without the retry fails only some of the time (about one
round in a hundred under load); each test runs many rounds of several processes started at the
same instant."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memory_lens.core.sqlite_wal import is_busy, use_wal

REPO = Path(__file__).resolve().parents[2]
PROCESSES, ROUNDS = 4, 6

_AT_ONCE = "import sys, time\nwhile time.time() < float(sys.argv[1]): time.sleep(0.0005)\n"


def _together(script: str, *args: str) -> list[str]:
    """SCRIPT run by PROCESSES processes, all released at the same instant; their outputs."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "server"))
    start = str(time.time() + 0.5)  # after every interpreter has started
    procs = [subprocess.Popen([sys.executable, "-c", _AT_ONCE + script, start, *args], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env, text=True) for _ in range(PROCESSES)]
    outs = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        outs.append(out.strip())
    return outs


def test_servers_opening_a_new_entry_cache_together_all_use_the_file(tmp_path: Path) -> None:
    script = ("from pathlib import Path\nfrom memory_lens.core.entry_cache import EntryCache\n"
              "cache = EntryCache(Path(sys.argv[2]))\nprint(cache.persistent)\ncache.close()\n")
    for round in range(ROUNDS):
        assert _together(script, str(tmp_path / f"entries-{round}.sqlite3")) == ["True"] * PROCESSES, round


def test_commands_opening_a_new_notes_index_together_share_one_database(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.json").write_text(json.dumps({
        "name": "a", "content": "alpha", "tags": [], "created_at": "2025-10-08T03:07:11Z",
        "updated_at": "2025-10-08T03:07:11Z", "scope": "global"}))
    script = ("import json\nfrom pathlib import Path\nfrom memory_lens.core.discovery import Scope\n"
              "from memory_lens.core.notes.locations import Layout, Location\n"
              "from memory_lens.core.notes.index import NotesIndex\n"
              "index = NotesIndex([Location(Scope.GLOBAL, Path(sys.argv[2]), Layout.MEMORY_LENS)], index_dir=Path(sys.argv[3]))\n"
              "index.sync()\n"
              "build = index._con.execute(\"SELECT value FROM meta WHERE key='build'\").fetchone()[0]\n"
              "print(json.dumps([index.db_path is not None, build]))\nindex.close()\n")
    for round in range(ROUNDS):
        index_dir = tmp_path / f"index-{round}"
        answers = [json.loads(out) for out in _together(script, str(notes), str(index_dir))]
        assert all(on_disk for on_disk, _ in answers), (round, answers)
        # One database built once: nobody removed the file another process had built.
        assert len({build for _, build in answers}) == 1, (round, answers)
        assert len(list(index_dir.glob("*.sqlite3"))) == 1


def test_a_database_locked_longer_than_the_patience_is_reported_not_waited_for_forever(tmp_path: Path) -> None:
    path = tmp_path / "held.sqlite3"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t(x)")
    holder.execute("BEGIN EXCLUSIVE")
    other = sqlite3.connect(path, timeout=0.05, isolation_level=None)
    started = time.monotonic()
    with pytest.raises(sqlite3.OperationalError) as caught:
        use_wal(other, 0.3)
    assert is_busy(caught.value) and 0.25 < time.monotonic() - started < 5
    holder.execute("ROLLBACK")
    use_wal(other, 0.3)
    assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    other.close()
    holder.close()


def test_a_notes_index_locked_by_another_process_is_left_alone(tmp_path: Path, monkeypatch) -> None:
    """An index another process keeps locked past the wait is that process's index, not a damaged
    one: this process indexes in memory and leaves the file as it is."""
    from memory_lens.core.discovery import Scope
    from memory_lens.core.notes import index as index_module
    from memory_lens.core.notes.locations import Layout, Location

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.json").write_text(json.dumps({
        "name": "a", "content": "alpha", "tags": [], "created_at": "2025-10-08T03:07:11Z",
        "updated_at": "2025-10-08T03:07:11Z", "scope": "global"}))
    locations = [Location(Scope.GLOBAL, notes, Layout.MEMORY_LENS)]
    first = index_module.NotesIndex(locations, index_dir=tmp_path / "index")
    first.sync()
    path = first.db_path
    assert path is not None
    build = _build_id(first._con)
    first.close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")  # in WAL mode, the one way to keep readers out
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT OR REPLACE INTO meta VALUES ('held', '1')")
    monkeypatch.setattr(index_module, "_BUSY_SECONDS", 0.2)
    second = index_module.NotesIndex(locations, index_dir=tmp_path / "index")
    assert second.db_path is None  # in memory for this process
    second.sync()
    assert second.names(Scope.GLOBAL) == {"a": "a.json"}
    second.close()
    holder.execute("ROLLBACK")
    assert path.exists() and _build_id(holder) == build
    holder.close()


def _build_id(con: sqlite3.Connection) -> str:
    """Which database CON has open: the notes index writes a random id when it creates one."""
    return con.execute("SELECT value FROM meta WHERE key='build'").fetchone()[0]
