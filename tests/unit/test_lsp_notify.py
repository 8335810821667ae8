"""The system's file notifications (`lsp/notify.py`), with the real watcher on real directories."""

from __future__ import annotations

import queue
import time
from pathlib import Path

import pytest

from memory_lens.lsp.notify import NativeWatcher

NAMES = {"GEMINI.md", ".git"}
TIMEOUT = 10.0


class Recorder:
    def __init__(self) -> None:
        self.events: queue.Queue[set[Path]] = queue.Queue()

    def __call__(self, paths: set[Path]) -> None:
        self.events.put(paths)

    def next(self, timeout: float = TIMEOUT) -> set[Path]:
        return self.events.get(timeout=timeout)

    def quiet(self, seconds: float = 0.4) -> bool:
        try:
            self.events.get(timeout=seconds)
        except queue.Empty:
            return True
        return False


def wait_active(watcher: NativeWatcher) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not watcher.active:
        assert watcher.failed is None, watcher.failed
        assert time.monotonic() < deadline, "the watch never started"
        time.sleep(0.01)


def wait_retired(watcher: NativeWatcher) -> None:
    deadline = time.monotonic() + TIMEOUT
    while watcher.retiring:
        assert time.monotonic() < deadline, "the earlier watch never ended"
        time.sleep(0.01)


@pytest.fixture
def watcher(monkeypatch: pytest.MonkeyPatch):
    pytest.importorskip("watchfiles")
    recorder = Recorder()
    w = NativeWatcher(recorder)
    w.recorder = recorder  # type: ignore[attr-defined]
    yield w
    w.close()


def test_reports_writes_creations_and_deletions_of_watched_names(watcher: NativeWatcher, tmp_path: Path) -> None:
    target = tmp_path / "GEMINI.md"
    watcher.watch([tmp_path], NAMES)
    wait_active(watcher)
    target.write_text("- one\n")
    assert target in watcher.recorder.next()
    with open(target, "a") as fh:  # in place, as an agent appends: the directory itself is unchanged
        fh.write("- two\n")
    assert target in watcher.recorder.next()
    target.unlink()
    assert target in watcher.recorder.next()
    (tmp_path / ".git").mkdir()
    assert tmp_path / ".git" in watcher.recorder.next()


def test_other_names_and_subdirectories_are_not_reported(watcher: NativeWatcher, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    watcher.watch([tmp_path], NAMES)
    wait_active(watcher)
    (tmp_path / "notes.md").write_text("x")
    (tmp_path / "sub" / "GEMINI.md").write_text("- deeper, not watched\n")
    assert watcher.recorder.quiet()


def test_a_new_set_of_directories_replaces_the_old(watcher: NativeWatcher, tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir(), second.mkdir()
    watcher.watch([first], NAMES)
    wait_active(watcher)
    watcher.watch([second, tmp_path / "missing"], NAMES)  # a missing directory is left out
    wait_active(watcher)
    wait_retired(watcher)
    (first / "GEMINI.md").write_text("- old\n")
    (second / "GEMINI.md").write_text("- new\n")
    assert watcher.recorder.next() == {second / "GEMINI.md"}
    assert watcher.recorder.quiet()


def test_no_change_is_lost_while_the_watch_is_pointed_anew(watcher: NativeWatcher, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A file written while the watch is pointed at a new set of directories (a document was
    opened, say) is reported, by the earlier watch or the new one: there is no gap between the
    two. Setting up a watch is made slow here (0.3 s, as on a busy machine with many
    directories) so that writes land while the new watch is not yet in place."""
    from watchfiles import _rust_notify

    real = _rust_notify.RustNotify

    def slow_rust_notify(*args: object) -> object:
        time.sleep(0.3)
        return real(*args)

    monkeypatch.setattr(_rust_notify, "RustNotify", slow_rust_notify)
    memory = tmp_path / "GEMINI.md"
    watcher.watch([tmp_path], NAMES)
    wait_active(watcher)
    for round in range(3):
        other = tmp_path / f"dir{round}"
        other.mkdir()
        watcher.watch([tmp_path, other], NAMES)  # a new set: the watch is pointed anew
        memory.write_text(f"- round {round}\n")  # before the new watch is in place
        assert not watcher.active
        while memory not in watcher.recorder.next():
            pass  # recorder.next raises queue.Empty when nothing comes within TIMEOUT
        wait_active(watcher)
        wait_retired(watcher)
        while not watcher.recorder.events.empty():  # the write may have been seen twice
            watcher.recorder.events.get_nowait()


def test_closed_watcher_reports_nothing(watcher: NativeWatcher, tmp_path: Path) -> None:
    watcher.watch([tmp_path], NAMES)
    wait_active(watcher)
    watcher.close()
    assert not watcher.active
    (tmp_path / "GEMINI.md").write_text("- after close\n")
    assert watcher.recorder.quiet()


def test_poll_only_when_asked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    w = NativeWatcher(Recorder(), native=False)
    w.watch([tmp_path], NAMES)
    assert not w.active and w.failed == "MEMORY_LENS_WATCHER=poll"


def test_without_watchfiles_the_poller_takes_over(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "watchfiles._rust_notify", None)  # makes the import fail
    w = NativeWatcher(Recorder())
    w.watch([tmp_path], NAMES)
    deadline = time.monotonic() + TIMEOUT
    while w.failed is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert w.failed == "the watchfiles package is not installed" and not w.active


def test_covers_exactly_the_watched_directories_and_names(watcher: NativeWatcher, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    memory = tmp_path / "GEMINI.md"
    assert not watcher.covers(str(memory))  # nothing watched yet
    watcher.watch([tmp_path], NAMES)
    wait_active(watcher)
    assert watcher.covers(str(memory)) and watcher.covers(tmp_path / ".git")
    assert not watcher.covers(str(tmp_path / "notes.md"))  # a name that is not reported
    assert not watcher.covers(str(tmp_path / "sub" / "GEMINI.md"))  # one level deep only
    assert not watcher.covers(str(tmp_path.parent / "GEMINI.md"))
    watcher.close()
    assert not watcher.covers(str(memory))


def test_covers_nothing_when_polling(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    w = NativeWatcher(Recorder(), native=False)
    w.watch([tmp_path], NAMES)
    assert not w.covers(str(tmp_path / "GEMINI.md"))
