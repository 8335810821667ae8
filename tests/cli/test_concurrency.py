"""Several processes adding to the same memory file at once lose nothing.

The workers wait for a start signal so that they really overlap, then each saves its own entries
one `add` at a time. The file starts missing, so they also race to create it. The assertions are
about the result only (no timing): every entry present exactly once, each worker's entries in the
order it saved them, and a well-formed file (the header once, then one line per entry).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sandbox import Workspace

HEADER = "## Gemini Added Memories"
WAIT_FOR_GO = "while [ ! -e {go} ]; do sleep 0.01; done"

WORKER = """
import os, sys, time
from memory_lens.cli import main
go, worker, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
while not os.path.exists(go):
    time.sleep(0.01)
for i in range(count):
    if main(["add", f"worker {worker} entry {i}"]) != 0:
        sys.exit(1)
"""


def _start_and_wait(ws: Workspace, commands: list[list[str]], cwd: Path) -> None:
    go = ws.path("go")
    procs = [subprocess.Popen(cmd, cwd=cwd, env=ws.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for cmd in commands]
    go.touch()
    failures = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        if proc.returncode != 0 or out:
            failures.append((proc.returncode, out.decode(), err.decode()))
    assert not failures, failures


def _assert_all_saved_once(path: Path, workers: int, count: int) -> None:
    data = path.read_bytes().decode("utf-8")
    lines = data.split("\n")
    assert lines[0] == HEADER and lines[-1] == "", data[:500]
    entries = lines[1:-1]
    expected = {f"- worker {w} entry {i}" for w in range(workers) for i in range(count)}
    assert len(entries) == len(expected), "lost or doubled entries"
    assert set(entries) == expected
    for w in range(workers):
        mine = [e for e in entries if e.startswith(f"- worker {w} ")]
        assert mine == [f"- worker {w} entry {i}" for i in range(count)]


def test_many_processes_add_to_one_file(ws: Workspace) -> None:
    """8 processes, 12 entries each, through the CLI's entry point."""
    ws.project("p")
    workers, count = 8, 12
    commands = [[sys.executable, "-c", WORKER, str(ws.path("go")), str(w), str(count)]
                for w in range(workers)]
    _start_and_wait(ws, commands, ws.path("p"))
    _assert_all_saved_once(ws.path("p/GEMINI.md"), workers, count)
    listed = ws.json("list", cwd=ws.path("p"))
    assert len(listed) == workers * count
    assert ws.run("check", "--strict", cwd=ws.path("p")).rc == 0


def test_console_script_processes_add_at_once(ws: Workspace) -> None:
    """8 shells, each running the installed `memory-lens add` several times, to the global file."""
    ws.mkdir("home/work")
    workers, count = 8, 2
    script = " ".join(shlex.quote(part) for part in ws.command)
    commands = []
    for w in range(workers):
        adds = " && ".join(f"{script} add 'worker {w} entry {i}' --scope global" for i in range(count))
        commands.append(["sh", "-c", WAIT_FOR_GO.format(go=shlex.quote(str(ws.path("go")))) + "; " + adds])
    _start_and_wait(ws, commands, ws.path("home/work"))
    _assert_all_saved_once(ws.global_dir / "GEMINI.md", workers, count)
