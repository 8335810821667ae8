"""core/sqlite_setup.py: SQLite's memory statistics are turned off only when nothing of SQLite is
in use, in the copy of SQLite that Python's `sqlite3` really uses. Each case runs in a new process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SERVER = Path(__file__).resolve().parents[2] / "server"

PROBE = """
import ctypes, json, os, sys
{before}
from memory_lens.core import sqlite_setup
con = sqlite3.connect(":memory:") if "con" not in dir() else con
con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS t USING fts5(a)")
con.executemany("INSERT INTO t VALUES (?)", [("word %d" % i,) for i in range(200)])
rows = con.execute("SELECT count(*) FROM t WHERE t MATCH 'word'").fetchone()[0]
maps = [l.split()[-1] for l in open("/proc/self/maps") if "/libsqlite3" in l]
used = None
if maps:
    lib = ctypes.CDLL(maps[0], mode=os.RTLD_NOLOAD | os.RTLD_NOW)
    lib.sqlite3_memory_used.restype = ctypes.c_int64
    used = lib.sqlite3_memory_used()
print(json.dumps({{"off": sqlite_setup.MEMSTATUS_OFF, "rows": rows, "shared": bool(maps), "used": used}}))
"""


def probe(before: str = "import sqlite3", env: dict[str, str] | None = None) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE.format(before=before)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(SERVER), **(env or {})}, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the switch is made on Linux only")


def test_statistics_are_off_when_nothing_of_sqlite_is_open() -> None:
    answer = probe()
    assert answer["rows"] == 200
    if not answer["shared"]:
        pytest.skip("this Python's sqlite3 has SQLite linked in statically: nothing is switched")
    assert answer["off"] is True
    assert answer["used"] == 0  # SQLite counts nothing any more, with a connection and a table open


def test_an_open_connection_leaves_sqlite_alone() -> None:
    answer = probe("import sqlite3\ncon = sqlite3.connect(':memory:')\ncon.execute('SELECT 1')")
    assert answer["off"] is False and answer["rows"] == 200
    if answer["shared"]:
        assert answer["used"] > 0


def test_a_closed_connection_does_not_stop_the_switch() -> None:
    answer = probe("import sqlite3\nsqlite3.connect(':memory:').close()")
    assert answer["off"] is answer["shared"]


def test_the_variable_keeps_the_statistics_on() -> None:
    answer = probe(env={"MEMORY_LENS_SQLITE_MEMSTATUS": "1"})
    assert answer["off"] is False and answer["rows"] == 200
    if answer["shared"]:
        assert answer["used"] > 0


def test_every_module_takes_sqlite3_from_sqlite_setup() -> None:
    """A module importing `sqlite3` itself could open a connection before the switch is tried."""
    offenders = []
    for path in (SERVER / "memory_lens").rglob("*.py"):
        if path.name == "sqlite_setup.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip() in ("import sqlite3", "from sqlite3 import *") or line.strip().startswith("from sqlite3 "):
                offenders.append(f"{path.relative_to(SERVER)}:{number}")
    assert offenders == []
