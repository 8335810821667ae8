"""Writes racing other programs: an editor saving in place, appending, or renaming its own file
into place while Memory Lens replaces the same memory file; temp files left by a kill -9.

Each interleaving is made deterministic with a hook on `os.fsync`: the writer flushes the new
content to its temporary file before the replace, and flushes the directory right after it, so
"another program writes now" can be placed exactly before or after the replace.
"""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

import pytest

from memory_lens.core import guarded_replace
from memory_lens.core.guarded_replace import replace_keeping_others
from memory_lens.core.temp_files import remove_stale_temp_files
from memory_lens.core.writer import MemoryFileError, update_memory_file
from sandbox import MEMORY_LENS, Workspace

ORIGINAL = "# Project notes\n\nHand-written introduction.\n"


@pytest.fixture
def base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = Path(os.path.realpath(tmp_path))
    monkeypatch.setenv("HOME", str(root / "home"))
    monkeypatch.setenv("MEMORY_LENS_LOCK_DIR", str(root / "locks"))
    (root / "home").mkdir()
    return root


def add_mine(text: str) -> tuple[str, None]:
    return text + "- mine\n", None


def on_fsync(monkeypatch: pytest.MonkeyPatch, when: str, action: Callable[[], None]) -> list[bool]:
    """Run ACTION once: at the first fsync of a file ("before-replace": the temporary file is
    written, the original not yet replaced) or of a directory ("after-replace")."""
    real = os.fsync
    fired: list[bool] = []

    def fsync(fd: int) -> None:
        real(fd)
        is_dir = stat.S_ISDIR(os.fstat(fd).st_mode)
        if not fired and is_dir == (when == "after-replace"):
            fired.append(True)
            action()

    monkeypatch.setattr(os, "fsync", fsync)
    return fired


def temp_files(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.endswith(".tmp"))


# An editor saving in place (truncate, then write) ---------------------------------------------


def test_a_file_read_while_an_editor_had_truncated_it_is_not_taken_for_its_content(
        base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = base / "GEMINI.md"
    p.write_text(ORIGINAL)
    with open(p, "r+b") as editor:
        editor.truncate(0)  # the editor is saving: truncated, not written yet

        def finish_save() -> None:
            editor.write(ORIGINAL.encode())
            editor.flush()

        fired = on_fsync(monkeypatch, "before-replace", finish_save)
        update_memory_file(p, add_mine)
    assert fired
    assert p.read_text() == ORIGINAL + "- mine\n"
    assert temp_files(base) == []


def test_an_editor_held_up_between_truncate_and_write_is_waited_for(
        base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file was emptied a moment ago and nothing moves: it is watched (for up to a second
    after the cut) and the change is computed from what the editor then writes."""
    p = base / "GEMINI.md"
    p.write_text(ORIGINAL)
    seen = []
    with open(p, "r+b") as editor:
        editor.truncate(0)

        class EditorWakesUp:
            monotonic = staticmethod(time.monotonic)
            time_ns = staticmethod(time.time_ns)

            @staticmethod
            def sleep(seconds: float) -> None:  # the editor sleeps through the short settle pauses
                if seconds > guarded_replace.SETTLE_SECONDS and editor.tell() == 0:
                    editor.write(ORIGINAL.encode())
                    editor.flush()

        monkeypatch.setattr(guarded_replace, "time", EditorWakesUp)
        update_memory_file(p, lambda text: (seen.append(text) or text + "- mine\n", None))
    assert seen == [ORIGINAL]
    assert p.read_text() == ORIGINAL + "- mine\n"


def test_an_editor_saving_into_the_replaced_file_while_it_is_checked_is_waited_for(
        base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The editor opened the file before the replace; it truncates it while the displaced file
    is being checked and writes it back later: the cut file is not taken for its content."""
    p = base / "GEMINI.md"
    p.write_text(ORIGINAL)
    seen = []
    with open(p, "r+b") as editor:  # opened before the replace

        class EditorSaves:
            monotonic = staticmethod(time.monotonic)
            time_ns = staticmethod(time.time_ns)
            cut = False

            @staticmethod
            def sleep(seconds: float) -> None:  # the editor sleeps through the short settle pauses
                if seconds == guarded_replace.LATE_WRITER_SECONDS and not EditorSaves.cut:
                    editor.truncate(0)
                    EditorSaves.cut = True
                elif seconds > guarded_replace.SETTLE_SECONDS and EditorSaves.cut and editor.tell() == 0:
                    editor.write(ORIGINAL.encode())
                    editor.flush()

        monkeypatch.setattr(guarded_replace, "time", EditorSaves)
        update_memory_file(p, lambda text: (seen.append(text) or text + "- mine\n", None))
    assert EditorSaves.cut
    assert seen == [ORIGINAL]
    assert p.read_text() == ORIGINAL + "- mine\n"


def test_an_in_place_save_into_the_replaced_file_is_applied_again(
        base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = base / "GEMINI.md"
    p.write_text(ORIGINAL)
    edited = ORIGINAL.replace("Hand-written", "Edited by hand")
    with open(p, "r+b") as editor:  # opened before the replace: it writes into the old file

        def save() -> None:
            editor.seek(0)
            editor.truncate()
            editor.write(edited.encode())
            editor.flush()

        fired = on_fsync(monkeypatch, "after-replace", save)
        update_memory_file(p, add_mine)
    assert fired
    assert p.read_text() == edited + "- mine\n"
    assert temp_files(base) == []


# An editor appending --------------------------------------------------------------------------


def test_lines_appended_after_the_read_are_kept(base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = base / "GEMINI.md"
    p.write_text(ORIGINAL)

    def append() -> None:
        with open(p, "a") as editor:
            editor.write("- editor line\n")

    fired = on_fsync(monkeypatch, "before-replace", append)
    update_memory_file(p, add_mine)
    assert fired
    assert p.read_text() == ORIGINAL + "- mine\n- editor line\n"


def test_lines_appended_to_the_replaced_file_after_the_replace_are_kept(
        base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = base / "GEMINI.md"
    p.write_text(ORIGINAL)
    monkeypatch.setattr(guarded_replace, "OPEN_WAIT_SECONDS", 0.0)  # it stays open past the wait
    with open(p, "ab") as editor:  # opened before the replace, written after it

        def append() -> None:
            editor.write(b"- editor line\n")
            editor.flush()

        fired = on_fsync(monkeypatch, "after-replace", append)
        update_memory_file(p, add_mine)
    assert fired
    assert p.read_text() == ORIGINAL + "- mine\n- editor line\n"
    assert temp_files(base) == []


def leases_work(directory: Path) -> bool:
    probe = directory / "lease-probe"
    probe.write_text("x")
    fd = os.open(probe, os.O_RDONLY)
    try:
        with open(probe, "a"):
            seen_open = guarded_replace._others_have_open(fd)
        return seen_open and not guarded_replace._others_have_open(fd)
    finally:
        os.close(fd)
        probe.unlink()


HOLDER = """
import sys
with open(sys.argv[1], "a") as f:
    print("open", flush=True)
    sys.stdin.readline()
    f.write("- appended by the holder\\n")
"""


def test_a_program_holding_the_file_open_is_waited_for_before_the_replace(
        base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An appending program that opened the file before the replace and writes after it would
    write into the displaced file: the replace waits until it has closed the file."""
    if not leases_work(base):
        pytest.skip("file leases are not available here")
    p = base / "GEMINI.md"
    p.write_text(ORIGINAL)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(p)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline() == "open\n"
        real_probe, real_swap = guarded_replace._others_have_open, guarded_replace._swap
        seen: list[bool] = []
        holder_running_at_swap: list[bool] = []

        def probe(fd: int) -> bool:
            found = real_probe(fd)
            seen.append(found)
            if found and holder.poll() is None:  # now it writes and closes
                holder.stdin.write("\n")
                holder.stdin.flush()
                holder.wait()
            return found

        def swap(tmp: Path, target: Path, victim: int | None) -> int:
            holder_running_at_swap.append(holder.poll() is None)
            return real_swap(tmp, target, victim)

        monkeypatch.setattr(guarded_replace, "_others_have_open", probe)
        monkeypatch.setattr(guarded_replace, "_swap", swap)
        update_memory_file(p, add_mine)
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    assert seen[:1] == [True]  # the holder was seen
    assert holder_running_at_swap == [False]
    assert p.read_text() == ORIGINAL + "- mine\n- appended by the holder\n"
    assert temp_files(base) == []


@pytest.mark.parametrize("err", [errno.EACCES, errno.EINVAL])
def test_without_leases_the_replace_goes_ahead(
        base: Path, monkeypatch: pytest.MonkeyPatch, err: int) -> None:
    """Another user's file (no CAP_LEASE) or a file system without leases: nothing can tell
    whether the file is open elsewhere, so the write is neither refused nor delayed."""
    p = base / "GEMINI.md"
    p.write_text(ORIGINAL)
    calls: list[int] = []

    def fcntl_call(fd: int, cmd: int, arg: int = 0) -> int:
        calls.append(cmd)
        if cmd == guarded_replace.F_SETLEASE:
            raise OSError(err, os.strerror(err))
        return 0

    monkeypatch.setattr(guarded_replace, "fcntl", SimpleNamespace(
        fcntl=fcntl_call, F_WRLCK=fcntl.F_WRLCK, F_UNLCK=fcntl.F_UNLCK))
    with open(p, "ab"), open(p, "rb") as reader:  # held open: with leases this would be waited for
        assert guarded_replace._others_have_open(reader.fileno()) is False
        update_memory_file(p, add_mine)
    assert guarded_replace.F_SETLEASE in calls
    assert p.read_text() == ORIGINAL + "- mine\n"


def test_a_file_that_never_stops_changing_is_refused_in_one_line(
        base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bounded: an editor appends during every pause the writer makes to let the file settle."""
    p = base / "GEMINI.md"
    p.write_text(ORIGINAL)

    class BusyEditorClock:
        monotonic = staticmethod(time.monotonic)
        time_ns = staticmethod(time.time_ns)

        @staticmethod
        def sleep(seconds: float) -> None:
            with open(p, "a") as editor:
                editor.write("- editor line\n")

    monkeypatch.setattr(guarded_replace, "time", BusyEditorClock)
    monkeypatch.setattr(guarded_replace, "SETTLE_TRIES", 5)
    with pytest.raises(MemoryFileError) as caught:
        update_memory_file(p, add_mine)
    assert str(caught.value) == (f"{p}: another program keeps changing it while it is being written; "
                                 "try again when it stops")
    assert p.read_text() == ORIGINAL + "- editor line\n" * 5
    assert temp_files(base) == []


# Another program replacing the file by rename -------------------------------------------------


@pytest.mark.parametrize(("theirs", "expected"), [
    (ORIGINAL + "- their line\n", ORIGINAL + "- mine\n- their line\n"),  # appended: carried over
    ("# Their rewrite\n", "# Their rewrite\n- mine\n"),  # rewritten: the change applied again
])
def test_a_file_renamed_into_place_after_the_read_is_kept(
        base: Path, monkeypatch: pytest.MonkeyPatch, theirs: str, expected: str) -> None:
    p = base / "GEMINI.md"
    p.write_text(ORIGINAL)

    def rename_theirs() -> None:
        other = base / "theirs.tmp-of-another-program"
        other.write_text(theirs)
        os.replace(other, p)

    fired = on_fsync(monkeypatch, "before-replace", rename_theirs)
    update_memory_file(p, add_mine)
    assert fired
    assert p.read_text() == expected


def test_a_file_created_after_the_read_is_not_overwritten(base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = base / "GEMINI.md"
    fired = on_fsync(monkeypatch, "before-replace", lambda: p.write_text("# Theirs\n"))
    update_memory_file(p, add_mine)
    assert fired
    assert p.read_text() == "# Theirs\n- mine\n"


def test_a_file_renamed_into_place_at_the_last_moment_is_not_discarded(base: Path) -> None:
    """The rename lands between the last check and the replace: the replace exchanges the two
    files, sees that what it displaced is not what it read, and applies the change to that."""
    p = base / "GEMINI.md"
    p.write_text(ORIGINAL)
    calls = []

    def rename_theirs() -> None:  # called before the temp file is written, then right before the replace
        calls.append(True)
        if len(calls) == 2:
            other = base / "theirs"
            other.write_text("# Theirs\n")
            os.replace(other, p)

    replace_keeping_others(p, lambda data: (data or b"") + b"- mine\n", rename_theirs)
    assert p.read_text() == "# Theirs\n- mine\n"
    assert len(calls) == 4  # a second round, on their file
    assert sorted(os.listdir(base)) == ["GEMINI.md", "home"]


# Temporary files left by a killed writer ------------------------------------------------------


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_stale_temp_files_are_removed_and_live_ones_kept(base: Path) -> None:
    p = base / "GEMINI.md"
    p.write_text(ORIGINAL)
    hour_ago = time.time() - 2 * 3600
    names = {
        "dead": f".GEMINI.md.ml{dead_pid()}-abcd_123.tmp",  # its writer was killed
        "live": f".GEMINI.md.ml{os.getppid()}-abcd_123.tmp",  # a live process's: kept
        "this-process": f".AGENTS.md.ml{os.getpid()}-abcd_123.tmp",  # another thread's, maybe: kept
        "old-style-old": ".GEMINI.md.k2j4_x9q.tmp",  # an older version's, untouched for 2 h
        "old-style-new": ".GEMINI.md.z8y7w6v5.tmp",  # an older version's, maybe in use: kept
        "old-style-other-file": ".notes.k2j4_x9q.tmp",  # not a memory file's: never ours to judge
        "user": ".GEMINI.md.backup.tmp",  # not our naming
    }
    for key, name in names.items():
        (base / name).write_text(key)
        if key in ("old-style-old", "old-style-other-file", "user"):
            os.utime(base / name, (hour_ago, hour_ago))
    update_memory_file(p, add_mine)
    assert temp_files(base) == sorted(names[k] for k in ("live", "this-process", "old-style-new",
                                                              "old-style-other-file", "user"))
    assert p.read_text() == ORIGINAL + "- mine\n"
    assert remove_stale_temp_files(p) == []


# kill -9 in the middle of a real `memory-lens add` --------------------------------------------

PAUSE_AT_FSYNC = """
import os, stat, time
_real = os.fsync
def _fsync(fd):
    _real(fd)
    if stat.S_ISREG(os.fstat(fd).st_mode):
        open(os.environ["PAUSED_MARKER"], "w").close()
        time.sleep(600)
os.fsync = _fsync
"""


def test_kill_9_during_add_leaves_the_file_whole_and_the_next_add_cleans_up(ws: Workspace) -> None:
    """The process is stopped right after it wrote its temporary file (its first fsync), then
    killed: the memory file is the old one, whole; the next add removes the orphan."""
    project = ws.project("p")
    memory = ws.write("p/GEMINI.md", ORIGINAL)
    hooks = ws.mkdir("hooks")
    (hooks / "sitecustomize.py").write_text(PAUSE_AT_FSYNC)
    marker = ws.path("paused")
    proc = subprocess.Popen([*MEMORY_LENS, "add", "first entry"], cwd=project, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=ws.env({"PYTHONPATH": str(hooks), "PAUSED_MARKER": str(marker)}))
    try:
        deadline = time.monotonic() + 60  # a safety net against a hang, not a timing assertion
        while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert marker.exists(), "the add never reached its first fsync"
        orphans = temp_files(project)
        assert len(orphans) == 1
        assert ws.path("p/" + orphans[0]).read_text().endswith("- first entry\n")  # the whole new content
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert memory.read_text() == ORIGINAL
    assert temp_files(project) == orphans

    ws.ok("add", "second entry", cwd=project)
    assert temp_files(project) == []
    assert memory.read_text() == ORIGINAL + "\n## Gemini Added Memories\n- second entry\n"
