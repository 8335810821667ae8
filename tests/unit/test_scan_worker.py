"""The scan's helper (`memory_lens.core.scan_worker`): what it writes for the subtrees it is given,
in its own process (`python -m`, as core/scan.py starts it) and called in this one."""

from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path

import pytest

from memory_lens.core import scan, scan_worker

NAMES = frozenset({"GEMINI.md"})


@pytest.fixture
def subtrees(tmp_path: Path) -> list[Path]:
    """Three subtrees: one named like a memory file, one with a .geminiignore, one missing."""
    (tmp_path / "a" / "GEMINI.md" / "x").mkdir(parents=True)
    (tmp_path / "a" / "GEMINI.md" / "x" / "GEMINI.md").write_text("- x\n", encoding="utf-8")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / ".geminiignore").write_text("drafts/\n", encoding="utf-8")
    (tmp_path / "b" / "notes.txt").write_text("not a memory file\n", encoding="utf-8")
    return [tmp_path / "a" / "GEMINI.md", tmp_path / "b", tmp_path / "missing"]


def tasks(subtrees: list[Path]) -> bytes:
    return b"".join(scan_worker.task_record(i, str(s)) for i, s in enumerate(subtrees))


def records(out: bytes, subtrees: list[Path]) -> list[list[bytes]]:
    """OUT split into each subtree's records: its number first, the empty record last."""
    *records, rest = out.split(b"\0")
    assert rest == b""  # every record is NUL-terminated
    runs: list[list[bytes]] = [[]]
    for record in records:
        if record:
            runs[-1].append(record)
        else:
            runs.append([])
    assert runs.pop() == [] and len(runs) == len(subtrees)
    assert [run[0] for run in runs] == [b"\x03%d" % i for i in range(len(subtrees))]
    return [run[1:] for run in runs]


def expect(found: list[list[bytes]], subtrees: list[Path]) -> None:
    assert found[0] == [b"/x/GEMINI.md"]  # relative; the subtree itself is not repeated
    assert found[1] == [b"/.geminiignore"]
    assert len(found[2]) == 1 and found[2][0].startswith(b"\x02") and str(subtrees[2]).encode() in found[2][0]


def test_serve_writes_each_subtrees_findings_then_an_empty_record(subtrees: list[Path]) -> None:
    pytest.importorskip("rignore")
    read_end, write_end = os.pipe()
    os.write(write_end, tasks(subtrees))
    os.close(write_end)
    out = io.BytesIO()
    scan_worker.serve(NAMES, read_end, out)
    os.close(read_end)
    expect(records(out.getvalue(), subtrees), subtrees)


def test_the_helper_process_as_the_scan_starts_it(subtrees: list[Path]) -> None:
    pytest.importorskip("rignore")
    command, cwd = scan.helper_command(NAMES)
    assert command[-4:] == ["-m", "memory_lens.core.scan_worker", command[-2], "GEMINI.md"]
    done = subprocess.run(command, cwd=cwd, input=tasks(subtrees),
                          capture_output=True, timeout=60, check=True)
    assert done.stderr == b""
    expect(records(done.stdout, subtrees), subtrees)


def test_a_skipped_part_is_named_by_its_full_path_after_a_walk_from_inside() -> None:
    err = OSError("IO error for operation on ./deep/ddd: File name too long (os error 36)")
    assert scan_worker._message(err, ".", "/ws/m") == (
        b"IO error for operation on /ws/m/deep/ddd: File name too long (os error 36)")
    assert scan_worker._message(OSError("./x: Permission denied"), ".", "/ws/m") == b"/ws/m/x: Permission denied"
    assert scan_worker._message(OSError("/ws/m/x: gone"), "/ws/m", "/ws/m") == b"/ws/m/x: gone"


def test_task_records_are_whole_or_refused(tmp_path: Path) -> None:
    assert scan_worker.task_record(3, "/" + "d" * scan_worker.RECORD) is None  # too long for a record
    read_end, write_end = os.pipe()
    os.write(write_end, scan_worker.task_record(7, "/ws/a/b") + scan_worker.task_record(8, "/ws/c/d"))
    os.close(write_end)
    assert scan_worker.read_task(read_end) == (7, "/ws/a/b")
    os.read(read_end, 1)  # something read part of the next record: the pipe is out of step
    with pytest.raises(ValueError):
        scan_worker.read_task(read_end)
    assert scan_worker.read_task(read_end) is None
    os.close(read_end)
