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

log = logging.getLogger("memory_lens.lsp")

WATCHER_ENV = "MEMORY_LENS_WATCHER"  # "auto" (default): OS notifications when available; "poll"
STEP_MS = 20  # how often the watch thread looks for events (it sleeps without the GIL in between)
DEBOUNCE_MS = 100  # the longest a burst of events is held back before being reported


def native_wanted() -> bool:
    return os.environ.get(WATCHER_ENV, "auto").strip().lower() != "poll"


class NativeWatcher:
    """Watches a set of directories (not recursively) in a background thread and calls
    ON_CHANGE with the changed paths whose name is in NAMES, from that thread."""

    def __init__(self, on_change: Callable[[set[Path]], None]) -> None:
        self._on_change = on_change
        self._names: frozenset[str] = frozenset()
        self._dirs: frozenset[str] = frozenset()
        self._stop: threading.Event | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.failed: str | None = None if native_wanted() else f"{WATCHER_ENV}=poll"
        self._generation = 0
        self._active_generation = -1

    @property
    def active(self) -> bool:
        """Whether notifications currently flow for the last set of directories asked for."""
        return self.failed is None and self._active_generation == self._generation

    def watch(self, dirs: Iterable[Path], names: Iterable[str]) -> None:
        """Watch exactly DIRS (those that exist) from now on, for paths named NAMES."""
        if self.failed is not None:
            return
        wanted = frozenset(s for d in dirs if os.path.isdir(s := os.fspath(d)))
        self._names = frozenset(names)
        with self._lock:
            if wanted == self._dirs and self._thread is not None and self._thread.is_alive():
                return
            self._stop_locked()
            self._dirs = wanted
            self._generation += 1
            if not wanted:
                return
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._run, args=(sorted(wanted), self._stop, self._generation),
                                            name="memory-lens-notify", daemon=True)
            self._thread.start()

    def close(self) -> None:
        with self._lock:
            self._stop_locked()
            self._dirs = frozenset()
            self._generation += 1

    def _stop_locked(self) -> None:
        if self._stop is not None:
            self._stop.set()
        self._stop = self._thread = None

    def _run(self, dirs: list[str], stop: threading.Event, generation: int) -> None:
        try:
            from watchfiles._rust_notify import RustNotify  # watchfiles' documented low-level API
        except ImportError:
            self._fail("the watchfiles package is not installed")
            return
        try:
            notify = RustNotify(dirs, False, False, 0, False, True)  # the watches are in place on return
        except FileNotFoundError:  # a directory went away meanwhile: the next set will do
            log.debug("memory-lens: a watched directory disappeared; the poller covers it")
            return
        except Exception as err:  # no inotify, the system's watch limit reached, ...
            self._fail(f"{type(err).__name__}: {err}")
            return
        with notify:
            if generation == self._generation:
                self._active_generation = generation
            log.debug("memory-lens: system notifications on for %d directories: %s", len(dirs), dirs)
            try:
                while not stop.is_set():
                    changes = notify.watch(DEBOUNCE_MS, STEP_MS, 0, stop)
                    if not isinstance(changes, set):
                        continue  # "stop" ends the loop; "signal" and "timeout" do not concern us
                    names = self._names
                    paths = {Path(p) for _, p in changes if os.path.basename(p) in names}
                    if paths and not stop.is_set():
                        self._on_change(paths)
            except Exception as err:
                if not stop.is_set():
                    self._fail(f"{type(err).__name__}: {err}")
            finally:
                if self._active_generation == generation:
                    self._active_generation = -1

    def _fail(self, reason: str) -> None:
        self.failed = reason
        log.info("memory-lens: no file notifications from the system (%s); polling instead", reason)
