"""The operating system's file notifications (inotify, FSEvents, ReadDirectoryChangesW), through
`watchfiles`: a memory file written by another program reaches the server in milliseconds,
without polling.

The server watches, one level deep, the directories the poller looks at (see `watch.py`): those
holding the known memory files, the global directory, and the chain directories (and their
ancestors, for `.git`) of open documents and workspace folders. When that set changes, the watch
is restarted on the new set. While notifications flow, the poller only runs now and then as a
safety net (a file changed through a network filesystem, a change made while the watch
restarted). Where notifications are not available (watchfiles not installed, no inotify, the
system's watch limit reached) or `MEMORY_LENS_WATCHER=poll` is set, the poller does the whole
job, as it always could.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Callable, Iterable

from memory_lens.core.settings import ENV_WATCHER
from memory_lens.lsp.compat import rust_notify

log = logging.getLogger("memory_lens.lsp")

STEP_MS = 20  # how often the watch thread looks for events (it sleeps without the GIL in between)
DEBOUNCE_MS = 100  # the longest a burst of events is held back before being reported
RETIRE_MS = 250  # how often an idle watch looks whether a newer one has replaced it


class NativeWatcher:
    """Watches a set of directories (not recursively) in a background thread and calls
    ON_CHANGE with the changed paths whose name is in NAMES, from that thread.

    Pointing it at a new set never leaves a gap: the earlier watch goes on until the new one is
    in place, then retires, reporting what it has already caught before it ends."""

    def __init__(self, on_change: Callable[[set[Path]], None], native: bool = True) -> None:
        """NATIVE False (`Settings.poll_watcher`, MEMORY_LENS_WATCHER=poll): never start, the poller does it all."""
        self._on_change = on_change
        self._names: frozenset[str] = frozenset()
        self._dirs: frozenset[str] = frozenset()
        self._current: _Watch | None = None
        self._earlier: list[_Watch] = []  # still running until a newer watch is in place
        self._lock = threading.Lock()
        self.failed: str | None = None if native else f"{ENV_WATCHER}=poll"
        self._generation = 0
        self._active_generation = -1

    @property
    def active(self) -> bool:
        """Whether notifications currently flow for the last set of directories asked for."""
        return self.failed is None and self._active_generation == self._generation

    def covers(self, path: str | os.PathLike[str]) -> bool:
        """Whether a change of PATH is reported: notifications flow for the last set of
        directories asked for, PATH's directory is one of them (as given: one level deep, no
        symlink resolved) and PATH's name is one of the names reported."""
        directory, name = os.path.split(os.fspath(path))
        with self._lock:
            return self.active and name in self._names and directory in self._dirs

    @property
    def retiring(self) -> bool:
        """Whether an earlier watch is still running (it may still report a change it caught)."""
        with self._lock:
            return any(w.thread.is_alive() for w in self._earlier)

    def watch(self, dirs: Iterable[Path], names: Iterable[str]) -> None:
        """Watch exactly DIRS (those that exist) from now on, for paths named NAMES."""
        if self.failed is not None:
            return
        wanted = frozenset(s for d in dirs if os.path.isdir(s := os.fspath(d)))
        self._names = frozenset(names)
        with self._lock:
            current = self._current
            if wanted == self._dirs and current is not None and current.thread.is_alive():
                return
            self._dirs = wanted
            self._generation += 1
            self._earlier = [w for w in self._earlier if w.thread.is_alive()]
            if current is not None:
                self._earlier.append(current)
            self._current = None
            if not wanted:
                self._stop_all_locked()
                return
            watch = _Watch(self._generation)
            watch.thread = threading.Thread(target=self._run, args=(sorted(wanted), watch, tuple(self._earlier)),
                                            name="memory-lens-notify", daemon=True)
            self._current = watch
            watch.thread.start()

    def close(self) -> None:
        """Stop every watch at once; nothing is reported after this."""
        with self._lock:
            self._stop_all_locked()
            self._dirs = frozenset()
            self._generation += 1

    def _stop_all_locked(self) -> None:
        for w in (*self._earlier, *([self._current] if self._current else [])):
            w.stop.set()
        self._earlier = []
        self._current = None

    def _run(self, dirs: list[str], watch: _Watch, earlier: tuple[_Watch, ...]) -> None:
        try:
            notify_class = rust_notify()
        except ImportError:
            self._fail("the watchfiles package is not installed")
            return
        try:
            notify = notify_class(dirs, False, False, 0, False, True)  # the watches are in place on return
        except FileNotFoundError:  # a directory went away meanwhile: the next set will do
            log.debug("a watched directory disappeared; the poller covers it")
            return  # the earlier watches go on meanwhile
        except Exception as err:  # no inotify, the system's watch limit reached, ...
            self._fail(f"{type(err).__name__}: {err}")
            return
        for w in earlier:
            w.retire.set()
        with notify:
            if watch.generation == self._generation:
                self._active_generation = watch.generation
            log.debug("system notifications on for %d directories: %s", len(dirs), dirs)
            try:
                while not watch.stop.is_set() and not watch.retire.is_set():
                    changes = notify.watch(DEBOUNCE_MS, STEP_MS, RETIRE_MS, watch.stop)
                    if not isinstance(changes, set):
                        continue  # "stop" ends the loop; "signal" and "timeout" do not concern us
                    names = self._names
                    paths = {Path(p) for _, p in changes if os.path.basename(p) in names}
                    if paths and not watch.stop.is_set():
                        self._on_change(paths)
            except Exception as err:
                if not watch.stop.is_set():
                    self._fail(f"{type(err).__name__}: {err}")
            finally:
                if self._active_generation == watch.generation:
                    self._active_generation = -1

    def _fail(self, reason: str) -> None:
        self.failed = reason
        with self._lock:
            self._stop_all_locked()
        log.info("no file notifications from the system (%s); polling instead", reason)


class _Watch:
    """One watch of NativeWatcher: its thread, and the events that end it (`stop`: at once;
    `retire`: once the change it is waiting on, if any, is reported)."""

    def __init__(self, generation: int) -> None:
        self.generation = generation
        self.stop = threading.Event()
        self.retire = threading.Event()
        self.thread: threading.Thread = threading.Thread()
