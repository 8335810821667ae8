"""workspace/didChangeWatchedFiles, plus the server's own watch on disk.

When the client supports it, the server registers watchers (dynamically) for the memory
filenames, `.git` markers and ignore files. Because the global directory lies outside the
workspace, and because some clients watch nothing, the server also watches from its side: every
known memory file, the global files, and every candidate memory file and `.git` marker of the
chains of open documents and workspace folders. It asks the system for notifications on their
directories (`notify.py`) and polls them, off the event loop: every 0.1 s or so when
notifications are not available, now and then as a safety net when they are. A change shows up
within a second either way, in a few tens of milliseconds with notifications.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import time
from pathlib import Path

from lsprotocol import types

from memory_lens.core.discovery import GIT_MARKER, local_dirs, find_project_root
from memory_lens.core.file_identity import file_identity, stat_identity
from memory_lens.core.files import real_dir
from memory_lens.core.scan import GEMINI_IGNORE, GIT_IGNORE
from memory_lens.lsp.convert import path_to_uri, uri_to_path
from memory_lens.lsp.server import MemoryLensServer

log = logging.getLogger("memory_lens.lsp")
REGISTRATION_ID = "memory-lens-watched-files"
POLL_MIN_SECONDS = 0.1  # a change on disk shows in ~50 ms on average where the poll is cheap
RESCAN_MIN_SECONDS = 0.75
RESCAN_COST_FACTOR = 10
POLL_COST_FACTOR = 20  # sleep at least 20x what one poll costs: the poll stays under ~5% of a core
SAFETY_POLL_SECONDS = 1.0  # the poll's period while the system's notifications flow


def _watchers(ls: MemoryLensServer) -> list[types.FileSystemWatcher]:
    names = list(ls.settings.filenames)
    globs = [f"**/{n}" for n in names] + [f"**/{GIT_MARKER}", f"**/{GIT_IGNORE}", f"**/{GEMINI_IGNORE}"]
    watchers = [types.FileSystemWatcher(glob_pattern=g) for g in globs]
    if ls.supports("workspace.did_change_watched_files.relative_pattern_support"):
        base = path_to_uri(ls.settings.global_dir)
        watchers += [types.FileSystemWatcher(glob_pattern=types.RelativePattern(base_uri=base, pattern=n))
                     for n in names]
    return watchers


async def register_watchers(ls: MemoryLensServer) -> None:
    """(Re)register file watchers with the client, when it supports dynamic registration."""
    if not ls.supports("workspace.did_change_watched_files.dynamic_registration"):
        return
    try:
        if ls.watching_files:
            await asyncio.wait_for(ls.client_unregister_capability_async(types.UnregistrationParams(
                unregisterations=[types.Unregistration(id=REGISTRATION_ID,
                                                       method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES)])), 10)
        await asyncio.wait_for(ls.client_register_capability_async(types.RegistrationParams(registrations=[
            types.Registration(
                id=REGISTRATION_ID,
                method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=_watchers(ls)),
            )])), 10)
        ls.watching_files = True
    except Exception as err:
        ls.warn_once(f"the client did not accept file watchers ({err}); watching from the server only")


def classify(ls: MemoryLensServer, paths: set[Path]) -> tuple[set[Path], bool]:
    """Split changed PATHS into memory files, and whether a full rescan is needed."""
    names = set(ls.settings.filenames)
    memory = {p for p in paths if p.name in names}
    full = any(p.name in (GIT_MARKER, GIT_IGNORE, GEMINI_IGNORE) for p in paths)
    return memory, full


def on_disk_change(ls: MemoryLensServer, paths: set[Path]) -> None:
    """React to changes on disk, from whichever watcher saw them first."""
    memory, full = classify(ls, paths)
    for p in paths:
        ls.poll_snapshot[p] = _state(p)
    if full:
        ls.live.request_full()
    elif memory:
        ls.live.request_paths(memory)


def _state(path: Path) -> object:
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
    paths = set(ls.store.known()) | set(settings.global_files())
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
    for d in dirs:
        paths.update(d / n for n in settings.filenames)
    return paths


def _doc_dirs(ls: MemoryLensServer) -> list[Path]:
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


def _unseen_change(ls: MemoryLensServer, path: Path) -> bool | None:
    """For a path the poller has not seen before: True when it is a memory file whose current
    state the server has not checked (new in a chain, or changed since the check), False when
    its state can be the baseline, None to decide later (a job is running and will check it).

    Without this, a file that joins the watch set after a change (a file found by the first
    scan and written right after it; a file created in the chain of a newly opened document)
    would take its changed state as the baseline, and the change would never show."""
    if path.name not in ls.settings.filenames or not os.path.lexists(path):
        return False
    checked, ident = ls.store.checked_identity(path)
    if checked and ident == file_identity(path):
        return False
    return None if ls.live.busy else True


def _poll_once(ls: MemoryLensServer, doc_dirs: list[Path]) -> set[Path]:
    """Compare every watched path with the last poll; return those that changed."""
    snapshot = ls.poll_snapshot
    changed: set[Path] = set()
    for p in watch_set(ls, doc_dirs):
        state = _state(p)
        if p in snapshot:
            if snapshot[p] != state:
                changed.add(p)
        else:
            unseen = _unseen_change(ls, p)
            if unseen is None:
                continue
            if unseen:
                changed.add(p)
        snapshot[p] = state
    return changed


def _poll_costed(ls: MemoryLensServer, doc_dirs: list[Path]) -> tuple[set[Path], float]:
    """`_poll_once` and the CPU time it took. Not the wall time: a poll that waits for the
    interpreter while a check runs costs no more, and must not put the next poll seconds away."""
    started = time.thread_time()
    changed = _poll_once(ls, doc_dirs)
    return changed, time.thread_time() - started


def _update_notifications(ls: MemoryLensServer, doc_dirs: list[Path]) -> bool:
    """Point the system's notifications at the directories of what the poller watches (worked
    out again only when the known files, the documents' directories or the settings change).
    True when they were pointed anew."""
    key = (ls.store.known_version, tuple(doc_dirs), ls.settings)
    if key == ls.notify_key and ls.notifier.active:
        return False
    paths = watch_set(ls, doc_dirs)
    ls.notifier.watch({p.parent for p in paths}, {*ls.settings.filenames, GIT_MARKER, GIT_IGNORE, GEMINI_IGNORE})
    ls.notify_key = key
    return True


def notified(ls: MemoryLensServer, paths: set[Path]) -> None:
    """Changes reported by the system's notifications (called from their thread)."""
    loop = ls.loop
    if loop is not None and not loop.is_closed():
        loop.call_soon_threadsafe(_on_notified, ls, paths)


def _on_notified(ls: MemoryLensServer, paths: set[Path]) -> None:
    log.debug("disk changes notified by the system: %s", sorted(map(str, paths)))
    try:
        on_disk_change(ls, paths)
    except Exception:
        log.exception("handling a file notification failed")


async def _poll_forever(ls: MemoryLensServer) -> None:
    """Every POLL_MIN_SECONDS: keep the notifications on the right directories, and poll when
    they are not flowing, or every SAFETY_POLL_SECONDS when they are (both at most ~5% of a core)."""
    next_poll = 0.0
    gap = False  # the notifications were pointed anew: poll once they flow, for what changed meanwhile
    while True:
        try:
            doc_dirs = _doc_dirs(ls)
            if ls.notifier.failed is None:
                gap = await asyncio.to_thread(_update_notifications, ls, doc_dirs) or gap
            active = ls.notifier.active
            if time.monotonic() >= next_poll or (gap and active):
                gap = gap and not active
                changed, cost = await asyncio.to_thread(_poll_costed, ls, doc_dirs)
                floor = SAFETY_POLL_SECONDS if ls.notifier.active else POLL_MIN_SECONDS
                next_poll = time.monotonic() + max(floor, cost * POLL_COST_FACTOR)
                if changed:
                    log.debug("disk changes seen by polling: %s", sorted(map(str, changed)))
                    on_disk_change(ls, changed)
        except Exception:
            log.exception("polling failed")
            next_poll = time.monotonic() + POLL_MIN_SECONDS
        # While notifications flow, wake up often enough to point them at new directories.
        await asyncio.sleep(POLL_MIN_SECONDS if ls.notifier.active or ls.notifier.failed is None
                            else max(POLL_MIN_SECONDS, next_poll - time.monotonic()))


def _new_or_gone(ls: MemoryLensServer, folders: list[Path]) -> set[Path]:
    """Memory files created or deleted under FOLDERS since the store last knew them."""
    from memory_lens.core.scan import find_memory_files

    found: set[Path] = set()
    for folder in folders:
        # One process: a background check may take its time, and should cost one core at most.
        found.update(find_memory_files(folder, ls.settings.filenames, parallel=False))
    known = {p for p in ls.store.known() if any(p.is_relative_to(f) for f in folders)}
    return found ^ known


async def _rescan_forever(ls: MemoryLensServer) -> None:
    """For clients that watch no files: walk the workspace again now and then, so that a memory
    file an agent creates anywhere shows up. Every RESCAN_MIN_SECONDS, or 10x the walk's own cost
    on big trees, so the walk stays under ~10% of a core."""
    while True:
        started = time.perf_counter()
        if not ls.watching_files and not ls.live.busy:
            try:
                changed = await asyncio.to_thread(_new_or_gone, ls, ls.folders())
                if changed:
                    log.debug("memory files created or deleted: %s", sorted(map(str, changed)))
                    on_disk_change(ls, changed)
            except Exception:
                log.exception("rescanning failed")
        cost = time.perf_counter() - started
        await asyncio.sleep(max(RESCAN_MIN_SECONDS, cost * RESCAN_COST_FACTOR))


def start_polling(ls: MemoryLensServer) -> None:
    if ls.poll_task is None or ls.poll_task.done():
        ls.poll_task = asyncio.ensure_future(_poll_forever(ls))
    if ls.rescan_task is None or ls.rescan_task.done():
        ls.rescan_task = asyncio.ensure_future(_rescan_forever(ls))


def stop_polling(ls: MemoryLensServer) -> None:
    ls.notifier.close()
    for task in (ls.poll_task, ls.rescan_task):
        if task is not None:
            task.cancel()
    ls.poll_task = ls.rescan_task = None


def register(server: MemoryLensServer) -> None:
    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: MemoryLensServer, params: types.DidChangeWatchedFilesParams) -> None:
        paths = {p for c in params.changes if (p := uri_to_path(c.uri)) is not None}
        ls.store.invalidate(paths)
        on_disk_change(ls, paths)
