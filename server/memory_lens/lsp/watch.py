"""workspace/didChangeWatchedFiles, plus the server's own watch on disk: the `Watcher`.

When the client supports it, the server registers watchers (dynamically) for the memory
filenames, `.git` markers and ignore files. Because the global directory lies outside the
workspace, and because some clients watch nothing, the server also watches from its side: every
known memory file, the global files, and every candidate memory file and `.git` marker of the
chains of open documents and workspace folders. It asks the system for notifications on their
directories (`notify.py`) and polls them, off the event loop: every 0.1 s or so when
notifications are not available, now and then as a safety net when they are. A change shows up
within a second either way, in a few tens of milliseconds with notifications. A poll waits for
the client to be quiet for 50 ms, at most four of its periods (`poll_ready`): a request is not
answered while one runs.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from memory_lens.core.discovery import GIT_MARKER, find_project_root, local_dirs
from memory_lens.core.file_identity import file_identity, stat_identity
from memory_lens.core.files import real_dir
from memory_lens.core.gemini_settings import GEMINI_DIR, SETTINGS_FILE, TRUSTED_FOLDERS_FILE
from memory_lens.core.scan import GEMINI_IGNORE, GIT_IGNORE
from memory_lens.core.similar import AGENT_FILES, sibling_agent_files
from memory_lens.core.stale import PROJECT_FILES
from memory_lens.lsp.convert import path_to_uri, uri_to_path
from memory_lens.lsp.diagnostics import is_instruction_file
from memory_lens.lsp.notify import NativeWatcher

if TYPE_CHECKING:
    from memory_lens.lsp.server import MemoryLensServer

log = logging.getLogger("memory_lens.lsp")
REGISTRATION_ID = "memory-lens-watched-files"
POLL_MIN_SECONDS = 0.1  # a change on disk shows in ~50 ms on average where the poll is cheap
RESCAN_MIN_SECONDS = 0.75
RESCAN_COST_FACTOR = 10
POLL_COST_FACTOR = 20  # sleep at least 20x what one poll costs: the poll stays under ~5% of a core
SAFETY_POLL_SECONDS = 1.0  # the poll's period while the system's notifications flow
# A poll waits until the client has sent nothing for IDLE_SECONDS (its stats hold the interpreter
# between system calls, and a request answered meanwhile waits), but never more than
# POLL_DEFER_PERIODS of its period past its time: under a constant stream of requests a change
# still shows within a few periods.
IDLE_SECONDS = 0.05
POLL_DEFER_PERIODS = 4
MARKER_NAMES = (GIT_MARKER, GIT_IGNORE, GEMINI_IGNORE)  # a change of one of these means a full rescan
# Gemini's settings.json (user or project) and its folder trust rules: which names are memory
# where, the roots, the import format. A change of one means a full rescan too.
SETTINGS_NAMES = (SETTINGS_FILE, TRUSTED_FOLDERS_FILE)
# What `stale` checks scripts and package managers against (core/stale.py): a change of one
# re-checks the memory files at and below its directory.
PROJECT_NAMES = tuple(sorted(PROJECT_FILES))


class Watcher:
    """The one owner of watching: the client's file watchers, the system's notifications, the
    disk poller and the workspace rescan, and the state they share. `build_server` makes it;
    `lifecycle.py` calls its hooks (`start`, `on_config_change`, `stop`); the
    `workspace/didChangeWatchedFiles` handler hands it the client's events (`on_client_change`).
    Every change it sees goes to `deliver`, which updates the store and asks the `LiveEngine`
    (`live.py`) to recheck and publish.

    For readers that cache what they compute from disk:

    - `generation` (int) goes up each time the watcher delivers any change (a client event, a
      system notification, a poll finding, a rescan finding), right after the store has taken it
      in (cached reads of the changed paths dropped), and again when the live engine has applied
      the change to the known files (after any job of the engine, a save's or new settings' too:
      a spare step costs a reader one recomputation, never a stale answer). A reader that sees
      the same generation twice knows that nothing the watcher reports changed in between. The
      store is replaced when the settings change: key a cache on `ls.store` too.
    - `covers(path)` is True when the system's notifications are running and watching the
      directory PATH is in, for PATH's name (memory filenames, `.git`, `.gitignore`,
      `.geminiignore`), so that any change of PATH reaches `generation` as an event, within the
      notifications' delay (about a tenth of a second after the write). Notifications watch each directory
      one level deep: a path in a subdirectory of a watched directory is not covered. A watched
      directory that is itself renamed or replaced is noticed by the safety poll (within
      `SAFETY_POLL_SECONDS`), not by an event. False whenever notifications are off, failed, or
      being pointed at a new set of directories.

    State: `client_watches` (the client accepted our file watchers), `notifier` (the system's
    notifications), the poller's snapshot (each watched path's last seen state), the key of the
    set of directories the notifications were last pointed at, and the poll and rescan tasks.
    """

    def __init__(self, ls: MemoryLensServer) -> None:
        self.ls = ls
        self.generation = 0
        self.client_watches = False
        self.notifier = NativeWatcher(self._notified, native=not ls.settings.poll_watcher)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._snapshot: dict[Path, object] = {}  # path -> `path_state` when last polled or reported
        self._notify_key: object = None
        self._poll_task: asyncio.Task | None = None
        self._rescan_task: asyncio.Task | None = None
        self._registered_names: frozenset[str] = frozenset()  # the memory names of the client's watchers
        ls.live.on_applied(self._bump)
        ls.live.on_applied(self._names_changed)

    # Hooks -------------------------------------------------------------------------------------

    async def start(self) -> None:
        """After `initialized`: start the poller and the rescan, register the client's watchers."""
        self._loop = asyncio.get_running_loop()
        if self._poll_task is None or self._poll_task.done():
            self._poll_task = asyncio.ensure_future(self._poll_forever())
        if self._rescan_task is None or self._rescan_task.done():
            self._rescan_task = asyncio.ensure_future(self._rescan_forever())
        await self.register_client_watchers()

    async def on_config_change(self) -> None:
        """New settings (other memory filenames, another global directory): register anew."""
        await self.register_client_watchers()

    def stop(self) -> None:
        """On `shutdown`: nothing is watched or reported after this."""
        self.notifier.close()
        for task in (self._poll_task, self._rescan_task):
            if task is not None:
                task.cancel()
        self._poll_task = self._rescan_task = None

    def on_client_change(self, paths: set[Path]) -> None:
        """`workspace/didChangeWatchedFiles`: the client saw PATHS change."""
        self.deliver(paths)

    def covers(self, path: str) -> bool:
        """Whether a change of PATH reaches `generation` through a notification (see the class)."""
        return self.notifier.covers(path)

    # Delivering changes ------------------------------------------------------------------------

    def deliver(self, paths: set[Path]) -> None:
        """React to changes on disk, from whichever watch saw them first (on the event loop)."""
        ls = self.ls
        for p in paths:
            self._snapshot[p] = path_state(p)
        ls.store.invalidate(paths)
        self._bump()
        memory, full = split_changes(ls, paths)
        if full:
            ls.live.request_full()
        elif memory:
            ls.live.request_paths(memory)
        # An open instruction file that is neither memory nor an enabled agent's (a `.cursorrules`):
        # its `not-loaded` follows the disk (itself, the rules beside it), as a memory file's findings do.
        from memory_lens.lsp.documents import check_open_document
        for path in open_instruction_files(ls):
            asyncio.ensure_future(check_open_document(ls, path_to_uri(path)))

    def _bump(self) -> None:
        self.generation += 1

    def _names_changed(self) -> None:
        """After a job: when a scan found other memory names (a project's settings.json added
        AGENTS.md, say), ask the client to watch those too."""
        if self.client_watches and self.ls.store.memory_names() != self._registered_names:
            asyncio.ensure_future(self.register_client_watchers())

    def _notified(self, paths: set[Path]) -> None:
        """Changes reported by the system's notifications (called from their thread)."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._deliver_notified, paths)

    def _deliver_notified(self, paths: set[Path]) -> None:
        log.debug("disk changes notified by the system: %s", sorted(map(str, paths)))
        try:
            self.deliver(paths)
        except Exception:
            log.exception("handling a file notification failed")

    # The client's watchers ---------------------------------------------------------------------

    async def register_client_watchers(self) -> None:
        """(Re)register file watchers with the client, when it supports dynamic registration."""
        ls = self.ls
        if not ls.supports("workspace.did_change_watched_files.dynamic_registration"):
            return
        try:
            if self.client_watches:
                await asyncio.wait_for(ls.client_unregister_capability_async(types.UnregistrationParams(
                    unregisterations=[types.Unregistration(id=REGISTRATION_ID,
                                                           method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES)])), 10)
            self._registered_names = ls.store.memory_names()
            await asyncio.wait_for(ls.client_register_capability_async(types.RegistrationParams(registrations=[
                types.Registration(
                    id=REGISTRATION_ID,
                    method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                    register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=client_watchers(ls)),
                )])), 10)
            self.client_watches = True
            self._names_changed()  # a scan that ended meanwhile found other names: register them too
        except Exception as err:
            ls.warn_once(f"the client did not accept file watchers ({err}); watching from the server only")

    # The poller and the notifications ----------------------------------------------------------

    def _unseen_change(self, path: Path) -> bool | None:
        """For a path the poller has not seen before: True when it is a memory file whose current
        state the server has not checked (new in a chain, or changed since the check), False when
        its state can be the baseline, None to decide later (a job is running and will check it).

        Without this, a file that joins the watch set after a change (a file found by the first
        scan and written right after it; a file created in the chain of a newly opened document)
        would take its changed state as the baseline, and the change would never show."""
        ls = self.ls
        if path.name in SETTINGS_NAMES or not ls.is_memory_path(path) or not os.path.lexists(path):
            return False
        checked, ident = ls.store.checked_identity(path)
        if checked and ident == file_identity(path):
            return False
        return None if ls.live.busy else True

    def _poll_once(self, doc_dirs: list[Path]) -> set[Path]:
        """Compare every watched path with the last poll; return those that changed."""
        snapshot = self._snapshot
        changed: set[Path] = set()
        # A newly open instruction file (an enabled agent's too) may have changed since it was
        # checked: check it again. A poll waits for a quiet client, so it may first see a file
        # just opened only after it was written; an agent's file is not checked from disk when
        # opened, so `_unseen_change` cannot tell.
        fresh = open_instruction_files(self.ls, agents=True)
        for p in watch_set(self.ls, doc_dirs):
            state = path_state(p)
            if p in snapshot:
                if snapshot[p] != state:
                    changed.add(p)
            else:
                unseen = p in fresh or self._unseen_change(p)
                if unseen is None:
                    continue
                if unseen:
                    changed.add(p)
            snapshot[p] = state
        return changed

    def _poll_costed(self, doc_dirs: list[Path]) -> tuple[set[Path], float]:
        """`_poll_once` and the CPU time it took. Not the wall time: a poll that waits for the
        interpreter while a check runs costs no more, and must not put the next poll seconds away."""
        started = time.thread_time()
        changed = self._poll_once(doc_dirs)
        return changed, time.thread_time() - started

    def _notify_key_now(self, doc_dirs: list[Path]) -> object:
        """What decides where the notifications point: the known files, the documents'
        directories, the settings. Cheap: checked on the event loop before any hop to a thread."""
        ls = self.ls
        return ls.store.known_version, tuple(doc_dirs), ls.settings, ls.store.memory_names()

    def _point_notifications(self, doc_dirs: list[Path], key: object) -> bool:
        """Point the system's notifications at the directories of what the poller watches (worked
        out again only when KEY, `_notify_key_now`, changes). True when they were pointed anew."""
        ls = self.ls
        if key == self._notify_key and self.notifier.active:
            return False
        paths = watch_set(ls, doc_dirs)
        self.notifier.watch({p.parent for p in paths},
                            {*ls.store.memory_names(), *MARKER_NAMES, *SETTINGS_NAMES, *PROJECT_NAMES, *AGENT_FILES,
                             *(p.name for p in open_instruction_files(ls))})
        self._notify_key = key
        return True

    async def _poll_forever(self) -> None:
        """Every POLL_MIN_SECONDS: keep the notifications on the right directories, and poll when
        they are not flowing, or every SAFETY_POLL_SECONDS when they are (both at most ~5% of a core),
        once the client is quiet (`poll_ready`)."""
        notifier = self.notifier
        next_poll, period = 0.0, POLL_MIN_SECONDS
        gap = False  # the notifications were pointed anew: poll once they flow, for what changed meanwhile
        while True:
            try:
                doc_dirs = document_dirs(self.ls)
                if notifier.failed is None:
                    key = self._notify_key_now(doc_dirs)
                    if key != self._notify_key or not notifier.active:
                        gap = await asyncio.to_thread(self._point_notifications, doc_dirs, key) or gap
                now = time.monotonic()
                if gap and notifier.active:
                    gap, next_poll = False, min(next_poll, now)
                if poll_ready(now, next_poll, period, self.ls.last_message_at):
                    changed, cost = await asyncio.to_thread(self._poll_costed, doc_dirs)
                    floor = SAFETY_POLL_SECONDS if notifier.active else POLL_MIN_SECONDS
                    period = max(floor, cost * POLL_COST_FACTOR)
                    next_poll = time.monotonic() + period
                    if changed:
                        log.debug("disk changes seen by polling: %s", sorted(map(str, changed)))
                        self.deliver(changed)
            except Exception:
                log.exception("polling failed")
                next_poll = time.monotonic() + POLL_MIN_SECONDS
            # While notifications flow, wake up often enough to point them at new directories.
            await asyncio.sleep(POLL_MIN_SECONDS if notifier.active or notifier.failed is None
                                else max(POLL_MIN_SECONDS, next_poll - time.monotonic()))

    # The rescan --------------------------------------------------------------------------------

    async def _rescan_forever(self) -> None:
        """For clients that watch no files: walk the workspace again now and then, so that a memory
        file an agent creates anywhere shows up. Every RESCAN_MIN_SECONDS, or 10x the walk's own cost
        on big trees, so the walk stays under ~10% of a core."""
        ls = self.ls
        while True:
            started = time.perf_counter()
            if not self.client_watches and not ls.live.busy:
                try:
                    changed = await asyncio.to_thread(created_or_deleted, ls, ls.folders())
                    if changed:
                        log.debug("memory files created or deleted: %s", sorted(map(str, changed)))
                        self.deliver(changed)
                except Exception:
                    log.exception("rescanning failed")
            cost = time.perf_counter() - started
            await asyncio.sleep(max(RESCAN_MIN_SECONDS, cost * RESCAN_COST_FACTOR))


def poll_ready(now: float, due: float, period: float, last_message: float) -> bool:
    """Whether a poll due at DUE (every PERIOD seconds) runs NOW, the client's last message having
    come at LAST_MESSAGE (all `time.monotonic()`): once the client has been quiet for IDLE_SECONDS,
    or at the latest POLL_DEFER_PERIODS periods late."""
    return now >= due and (now - last_message >= IDLE_SECONDS or now - due >= POLL_DEFER_PERIODS * period)


# What is watched: functions of the server's settings, store and documents, no state of their own.

def client_watchers(ls: MemoryLensServer) -> list[types.FileSystemWatcher]:
    """The file watchers the server asks the client for: the memory names of every project, the
    markers, and the projects' `.gemini/settings.json`; with relative patterns, the global files and
    the user's settings.json and folder trust rules too."""
    names = sorted(ls.store.memory_names())
    globs = [f"**/{n}" for n in (*names, *MARKER_NAMES, *PROJECT_NAMES)] + [f"**/{GEMINI_DIR}/{SETTINGS_FILE}"]
    watchers = [types.FileSystemWatcher(glob_pattern=g) for g in globs]
    if ls.supports("workspace.did_change_watched_files.relative_pattern_support"):
        base = path_to_uri(ls.settings.global_dir)
        watchers += [types.FileSystemWatcher(glob_pattern=types.RelativePattern(base_uri=base, pattern=n))
                     for n in names]
        user = path_to_uri(ls.store.settings_files(None)[0].parent)  # the user's ~/.gemini
        watchers += [types.FileSystemWatcher(glob_pattern=types.RelativePattern(base_uri=user, pattern=n))
                     for n in SETTINGS_NAMES]
    return watchers


def split_changes(ls: MemoryLensServer, paths: set[Path]) -> tuple[set[Path], bool]:
    """Split changed PATHS into memory files to re-check, and whether a full rescan is needed: a
    marker, or Gemini's settings.json (user or project) or its folder trust rules, which decide
    which names are memory where. A project file `stale` reads (a package.json, a lock file)
    re-checks the known memory files in its directory and below."""
    full = any(p.name in MARKER_NAMES or (p.name in SETTINGS_NAMES and p.parent.name == GEMINI_DIR) for p in paths)
    known = ls.store.known()
    agent_files = known | ls.store.agent_files()
    memory = {p for p in paths if p.name not in SETTINGS_NAMES and (p in agent_files or ls.is_memory_path(p))}
    for project_file in (p for p in paths if p.name in PROJECT_FILES and p not in memory):
        memory.update(k for k in known if k.parent == project_file.parent or project_file.parent in k.parents)
    # An agent's file changed: the `drift` of the other agents' files beside it may have too.
    memory.update(s for p in list(memory) if p.name in AGENT_FILES for s in sibling_agent_files(p) if s in agent_files)
    return memory, full


def path_state(path: Path) -> object:
    """What the poller compares from one poll to the next for PATH."""
    if path.name == GIT_MARKER:
        return os.path.exists(path)  # only presence matters: git rewrites .git all the time
    try:
        st = os.lstat(path)  # one system call for what most watched paths are: files or nothing
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return file_identity(path) if os.path.exists(path) else "dangling"
    return stat_identity(st)  # = file_identity(path)


def watch_set(ls: MemoryLensServer, doc_dirs: list[Path]) -> set[Path]:
    """Every path the poller looks at (see the module docstring)."""
    settings = ls.settings
    # The enabled agents' own files too (CLAUDE.md, AGENTS.md): their `drift` follows the other's changes.
    paths = set(ls.store.known()) | ls.store.agent_files() | set(settings.global_files()) | set(ls.store.settings_found())
    paths.update(ls.store.settings_files(None))  # the user's settings.json and folder trust rules
    dirs: set[Path] = set()
    for directory in doc_dirs:
        if directory in dirs:
            continue
        root = find_project_root(directory)
        chain = local_dirs(directory, root)
        dirs.update(chain)
        # A `.git` appearing anywhere up the tree changes the project root.
        dirs.update(d for d in (directory, *directory.parents))
    for d in dirs:
        paths.add(d / GIT_MARKER)
    paths |= open_instruction_files(ls)
    names = ls.store.memory_names()
    for d in dirs:
        paths.update(d / n for n in (*names, *PROJECT_NAMES))
        paths.add(d / GEMINI_DIR / SETTINGS_FILE)
    return paths


def open_instruction_files(ls: MemoryLensServer, agents: bool = False) -> set[Path]:
    """The open documents that are instruction files some agent reads but neither memory files nor
    an enabled agent's (a `.cursorrules` while Cursor is not enabled, or Cursor's when it is): they
    get only `not-loaded` (lsp/documents.py), from the disk. AGENTS: the open enabled agents'
    files too (`is_agent_path`)."""
    try:
        uris = list(ls.workspace.text_documents.keys())
    except RuntimeError:
        return set()
    paths = {p for uri in uris if (p := uri_to_path(uri)) is not None}
    return {p for p in paths if not ls.is_memory_path(p) and (
        (agents and ls.is_agent_path(p)) or (not ls.is_agent_path(p) and is_instruction_file(p, ls.settings)))}


def document_dirs(ls: MemoryLensServer) -> list[Path]:
    """The workspace folders and the directories of the open documents, resolved. A document
    whose directory the system cannot resolve is left out: it must not stop the watch."""
    dirs = list(ls.folders())
    try:
        uris = list(ls.workspace.text_documents.keys())
    except RuntimeError:
        uris = []
    for uri in uris:
        p = uri_to_path(uri)
        d = real_dir(p.parent) if p is not None else None
        if d is not None and d not in dirs:
            dirs.append(d)
    return dirs


def created_or_deleted(ls: MemoryLensServer, folders: list[Path]) -> set[Path]:
    """Memory files created or deleted under FOLDERS since the store last knew them."""
    # One process: a background check may take its time, and should cost one core at most.
    found, _ = ls.store.find_memory(folders, parallel=False)
    known = {p for p in ls.store.known() if any(p.is_relative_to(f) for f in folders)}
    return found ^ known


def register(server: MemoryLensServer) -> None:
    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: MemoryLensServer, params: types.DidChangeWatchedFilesParams) -> None:
        ls.watcher.on_client_change({p for c in params.changes if (p := uri_to_path(c.uri)) is not None})
