"""The background refresh of a long-running process's notes index (`NotesIndex.start_refresh`):
files edited in place are picked up and reported off the request path, requests list only a
directory that changed, and closing stops the thread."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from notes_fixtures import NotesSandbox, note_data, sandbox  # noqa: F401

from memory_lens.core.discovery import Scope
from memory_lens.core.notes import index as index_module

WAIT = 60.0  # generous: the machine may be busy; a pass never waits this long


def test_an_in_place_edit_is_picked_up_by_the_background_refresh_and_reported(sandbox: NotesSandbox) -> None:
    store = sandbox.store(freshness=3600)  # requests alone would not look again for an hour
    store.create("one", "alpha")
    path = sandbox.project_dir() / "one.json"
    assert store.index.take_changes() == set()  # the baseline
    changed = threading.Event()
    store.index.start_refresh(on_change=changed.set, interval=0.05)
    try:
        before = os.stat(path.parent).st_mtime_ns
        sandbox.write_note(path.parent, "one.json", note_data("one", "omega, edited in place by hand"))
        assert os.stat(path.parent).st_mtime_ns == before  # the directory did not change
        assert changed.wait(WAIT), "the background refresh did not report the edit"
        assert store.index.take_changes() == {(Scope.PROJECT, "one")}
        assert store.search("omega").total == 1
        assert store.search("alpha").total == 0
    finally:
        store.close()


def test_with_the_refresh_running_requests_list_only_a_directory_that_changed(
        sandbox: NotesSandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    store = sandbox.store(freshness=1e-9)  # without the refresh, every request would list again
    store.create("one", "alpha")
    store.create("elsewhere", "alpha", scope="global")
    store.index.sync(force=True)
    store.index.start_refresh(interval=3600)  # its first round is an hour away
    listed: list[Path] = []
    real = index_module.list_note_files

    def counting(directory: Path) -> dict[str, tuple[int, int, int]]:
        listed.append(directory)
        return real(directory)

    monkeypatch.setattr(index_module, "list_note_files", counting)
    try:
        for _ in range(3):
            assert store.search("alpha").total == 2
        assert listed == []
        project = sandbox.project_dir()
        sandbox.write_note(project, "two.json", note_data("two", "alpha beta"))
        stamp = os.stat(project).st_mtime_ns + 5_000_000_000  # a directory change, whatever the clock's grain
        os.utime(project, ns=(stamp, stamp))
        assert store.search("alpha").total == 3  # seen by the request that came next
        assert listed == [project]
    finally:
        store.close()


def test_close_stops_the_refresh_thread_and_a_later_refresh_does_nothing(sandbox: NotesSandbox) -> None:
    store = sandbox.store(freshness=3600)
    store.create("one", "alpha")
    rounds = threading.Event()
    store.index.start_refresh(on_change=rounds.set, interval=0.01)
    thread = store.index._refresher
    assert thread is not None and thread.is_alive()
    sandbox.write_note(sandbox.project_dir(), "two.json", note_data("two", "beta"))
    assert rounds.wait(WAIT)  # it ran at least one round that changed the index
    store.close()
    assert not thread.is_alive()
    assert store.index.refresh() == 0
    store.index.start_refresh(interval=0.01)  # after close: no new thread
    assert store.index._refresher is thread


def test_the_refresh_needs_a_positive_interval(sandbox: NotesSandbox) -> None:
    store = sandbox.store()  # the CLI's freshness: 0
    try:
        with pytest.raises(ValueError, match="above 0 seconds"):
            store.index.start_refresh()
        assert store.index._refresher is None
    finally:
        store.close()
