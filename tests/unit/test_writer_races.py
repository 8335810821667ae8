"""Writes racing other programs: an editor saving in place, appending, or renaming its own file
into place while Memory Lens replaces the same memory file; temp files left by a kill -9.

Each interleaving is made deterministic with a hook on `os.fsync`: the writer flushes the new
content to its temporary file before the replace, and flushes the directory right after it, so
"another program writes now" can be placed exactly before or after the replace.
"""

from __future__ import annotations

import errno
import os
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
from memory_lens.core.write_policy import project_area
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


@pytest.fixture(params=[True, False], ids=["linux-calls", "portable"])
def linux_calls(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Both ways a replace is made: with the Linux-only calls (leases, RENAME_EXCHANGE) and
    without them, as on macOS and Windows (`guarded_replace.LINUX_CALLS`)."""
    if request.param and not guarded_replace.LINUX_CALLS:
        pytest.skip("the Linux-only calls are off here")
    monkeypatch.setattr(guarded_replace, "LINUX_CALLS", request.param)
    return request.param


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
        base: Path, monkeypatch: pytest.MonkeyPatch, linux_calls: bool) -> None:
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
        base: Path, monkeypatch: pytest.MonkeyPatch, linux_calls: bool) -> None:
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
        real_probe, real_swap = guarded_replace._others_have_open, guarded_replace._replace
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

        def swap(tmp: Path, target: Path, kept: Path) -> Path | None:
            holder_running_at_swap.append(holder.poll() is None)
            return real_swap(tmp, target, kept)

        monkeypatch.setattr(guarded_replace, "_others_have_open", probe)
        monkeypatch.setattr(guarded_replace, "_replace", swap)
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
    fcntl = pytest.importorskip("fcntl")
    monkeypatch.setattr(guarded_replace, "LINUX_CALLS", True)  # the lease is asked, and refused
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
        base: Path, monkeypatch: pytest.MonkeyPatch, theirs: str, expected: str, linux_calls: bool) -> None:
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


def test_a_file_renamed_into_place_at_the_last_moment_is_not_discarded(base: Path, linux_calls: bool) -> None:
    """The rename lands between the last check and the replace: the file displaced (exchanged,
    or kept by a hard link) is not what was read, and the change is applied to it."""
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


def test_no_descriptor_is_open_on_the_file_when_it_is_replaced(
        base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows refuses to replace a file that is open: none of ours is, at the replace."""
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc to list this process's descriptors")
    monkeypatch.setattr(guarded_replace, "LINUX_CALLS", False)
    p = base / "GEMINI.md"
    p.write_text(ORIGINAL)
    real_replace, open_at_replace = os.replace, []

    def replace(src: str, dst: str) -> None:
        open_at_replace.extend(fd for fd in os.listdir("/proc/self/fd")
                               if os.path.realpath(f"/proc/self/fd/{fd}") == str(p))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    update_memory_file(p, add_mine)
    assert open_at_replace == []
    assert p.read_text() == ORIGINAL + "- mine\n"


# A memory file swapped for a link while being written (a swap race) ---------------------------


@pytest.mark.parametrize("leads_to", ["outside.md", "proj/docs/other.md"])
def test_a_file_turned_into_a_link_while_being_written_is_refused_in_one_line(
        base: Path, monkeypatch: pytest.MonkeyPatch, linux_calls: bool, leads_to: str) -> None:
    """It was a file when resolved and is a link when read again: nothing is read through the
    link or written over it, and the message says what happened (it said the file was outside
    the project, or that its link changed)."""
    project = base / "proj"
    (project / "docs").mkdir(parents=True)
    p = project / "GEMINI.md"
    p.write_text(ORIGINAL)
    link_target = base / leads_to
    link_target.write_text("# Not this file\n")

    def swap() -> None:
        p.unlink()
        p.symlink_to(link_target)

    fired = on_fsync(monkeypatch, "before-replace", swap)
    with pytest.raises(MemoryFileError) as caught:
        update_memory_file(p, add_mine, area=project_area(project))
    assert fired
    assert str(caught.value) == f"{p}: changed into a link while being written; not written"
    assert p.is_symlink() and link_target.read_text() == "# Not this file\n"
    assert temp_files(project) == []


def test_a_file_turned_into_a_link_right_before_the_replace_is_refused_in_one_line(
        base: Path, monkeypatch: pytest.MonkeyPatch, linux_calls: bool) -> None:
    """The swap lands after the last read, before the final check of where the path leads."""
    project = base / "proj"
    project.mkdir()
    p = project / "GEMINI.md"
    p.write_text(ORIGINAL)
    outside = base / "outside.md"
    outside.write_text("# Not this file\n")

    def swap_after_the_last_read(path: Path, deadline: float) -> bool:
        if not p.is_symlink():
            p.unlink()
            p.symlink_to(outside)
        return False

    monkeypatch.setattr(guarded_replace, "_wait_until_closed", swap_after_the_last_read)
    with pytest.raises(MemoryFileError) as caught:
        update_memory_file(p, add_mine, area=project_area(project))
    assert str(caught.value) == f"{p}: changed into a link while being written; not written"
    assert outside.read_text() == "# Not this file\n"
    assert temp_files(project) == []


def test_a_link_turned_into_a_file_while_it_is_resolved_is_refused_in_one_line(
        base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A swap race: `os.path.realpath` found a link, and the file was back when it read the link
    (EINVAL, which escaped as `unexpected OSError: [Errno 22]` before Python 3.13)."""
    project = base / "proj"
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "memory.md").write_text(ORIGINAL)
    p = project / "GEMINI.md"
    p.symlink_to("docs/memory.md")
    real_readlink, swapped = os.readlink, []

    def readlink(path: str, *args, **kwargs) -> str:
        if os.fspath(path) == str(p) and not swapped:
            swapped.append(True)
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL), str(path))
        return real_readlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "readlink", readlink)
    with pytest.raises(MemoryFileError) as caught:
        update_memory_file(p, add_mine, area=project_area(project))
    assert swapped
    assert str(caught.value).startswith(f"{p}")
    assert str(caught.value).endswith(" while being written; not written")
    assert (project / "docs" / "memory.md").read_text() == ORIGINAL


def test_the_switch_turns_the_linux_only_calls_off() -> None:
    """`MEMORY_LENS_PORTABLE_WRITES=1` (how the write suite runs a second time) reaches the writer."""
    code = "from memory_lens.core import guarded_replace; print(guarded_replace.LINUX_CALLS)"
    env = dict(os.environ, MEMORY_LENS_PORTABLE_WRITES="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout == "False\n"


# Temporary files left by a killed writer ------------------------------------------------------


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_temp_files_of_the_file_are_removed_under_its_lock(base: Path) -> None:
    """Every writer holds the file's lock while its temporary files exist, so the next writer
    removes those it finds, whether their process still runs or not (no process is asked: the
    same on every system), and leaves other files' alone."""
    p = base / "GEMINI.md"
    p.write_text(ORIGINAL)
    hour_ago = time.time() - 2 * 3600
    names = {
        "dead": f".GEMINI.md.ml{dead_pid()}-abcd_123.tmp",  # its writer was killed
        "displaced": f".GEMINI.md.ml{dead_pid()}-abcd_123_old.tmp",  # the file a killed replace displaced
        "live": f".GEMINI.md.ml{os.getppid()}-abcd_123.tmp",  # a live process's, which holds no lock
        "other-file": f".AGENTS.md.ml{os.getpid()}-abcd_123.tmp",  # another file's: kept
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
    assert temp_files(base) == sorted(names[k] for k in ("other-file", "old-style-new",
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
        proc.kill()  # SIGKILL
        proc.wait()
    assert memory.read_text() == ORIGINAL
    assert temp_files(project) == orphans

    ws.ok("add", "second entry", cwd=project)
    assert temp_files(project) == []
    assert memory.read_text() == ORIGINAL + "\n## Gemini Added Memories\n- second entry\n"
