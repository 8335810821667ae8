"""Keeping everything live: rescans and rechecks off the event loop, then one round of updates.

Any change (a client file event, the server's own poll, a save, new settings) asks the engine
for work: a full pass (rescan the workspace, recheck every file) or a partial one (the changed
memory files and the files below them). One job runs at a time on a worker thread; requests
that arrive meanwhile are merged into the next job. After each job the engine republishes
diagnostics that changed, refreshes code lenses (`workspace/codeLens/refresh`) and sends
`memory/didChange` with the URIs of the memory files that changed. Diagnostics computed from an
open buffer are published only if that buffer is still the same (same version and text) when the
job ends, and those computed from disk only if the file is still not open: the document handlers
have published fresher ones otherwise.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from lsprotocol import types

from memory_lens.lsp import diagnostics
from memory_lens.lsp.convert import path_to_uri, uri_to_path
from memory_lens.lsp.documents import check_open_document
from memory_lens.lsp.progress import ScanProgress, plural
from memory_lens.lsp.protocol import DID_CHANGE_NOTIFICATION
from memory_lens.startup import collector_off

if TYPE_CHECKING:
    from memory_lens.lsp.server import MemoryLensServer, OpenDoc

log = logging.getLogger("memory_lens.lsp")
CHECK_BATCH = 100  # memory files checked per step of a job


class LiveEngine:
    """Schedules rescans and rechecks and sends the resulting updates."""

    def __init__(self, ls: MemoryLensServer) -> None:
        self.ls = ls
        self._full = False
        self._changed: set[Path] = set()
        self._task: asyncio.Task | None = None
        self.progress_delay = ls.settings.progress_delay  # seconds a full scan runs before it shows progress
        self._on_applied: list[Callable[[], None]] = []

    def on_applied(self, callback: Callable[[], None]) -> None:
        """Call CALLBACK (on the event loop) each time a job has applied its changes to the known
        files, before it rechecks them (the watcher counts these in its `generation`)."""
        self._on_applied.append(callback)

    def request_full(self) -> None:
        """Rescan the workspace and recheck everything."""
        self._full = True
        self._ensure_runner()

    def request_paths(self, paths: set[Path]) -> None:
        """Recheck memory files PATHS (changed on disk) and every file their change affects."""
        if paths:
            self._changed |= paths
            self._ensure_runner()

    def _ensure_runner(self) -> None:
        """Start the task that runs the pending jobs, unless it is running."""
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._run_pending_jobs())

    @property
    def busy(self) -> bool:
        """True while a job runs or waits to run."""
        return self._task is not None and not self._task.done()

    async def idle(self) -> None:
        """Wait until no job is pending (used by `memoryLens.server.refresh`)."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)

    async def _run_pending_jobs(self) -> None:
        while self._full or self._changed:
            full, changed = self._full, self._changed
            self._full, self._changed = False, set()
            try:
                await self._rescan_and_recheck(full, changed)
            except Exception:  # keep the engine alive whatever happens in one job
                log.exception("update failed")

    async def _rescan_and_recheck(self, full: bool, changed: set[Path]) -> None:
        """One job: a full pass (FULL) or the files CHANGED affect, with progress for a full pass."""
        ls = self.ls
        store = ls.store
        before = store.known()
        progress = ScanProgress(ls, self.progress_delay) if full else None
        try:
            await self._work(full, changed, before, progress)
        finally:
            if progress is not None:
                await progress.end(plural(len(store.known())))

    async def _work(self, full: bool, changed: set[Path], before: set[Path], progress: ScanProgress | None) -> None:
        ls = self.ls
        store = ls.store
        if progress is not None:
            await progress.start()
            known = await asyncio.to_thread(store.scan, ls.folders())
            progress.report(f"{plural(len(known))} found", 0)
            targets = set(known) | store.agent_files()
            store.invalidate()
        else:
            for path in changed:
                exists = os.path.lexists(path)  # False too for a path the system cannot name
                in_scope = path in set(store.settings.global_files()) or any(
                    path.is_relative_to(f) for f in ls.folders())
                if exists and in_scope and ls.is_memory_path(path):
                    store.add_known(path)
                elif not exists:
                    store.drop_known(path)
            store.invalidate(changed)
        for callback in self._on_applied:
            callback()
        known = store.known()
        docs = ls.open_memory_docs()
        if not full:
            # Open memory files outside the workspace are checked too, while they are open.
            pool = known | set(docs) | store.agent_files()
            targets = set()
            for path in changed:
                targets |= store.affected_by(path, pool)
        else:
            targets |= set(docs)
        # The other open documents among the targets: an enabled agent's file is checked from
        # its buffer, as its handler checks it; any other (an instruction file no enabled agent
        # reads, looked at for secrets: a `.cursorrules`) is its handler's alone, checked there
        # again, never from the disk over its buffer's `not-loaded`.
        for path, doc in ls.open_memory_docs(among={str(p) for p in targets}, any_file=True).items():
            if path in docs:
                continue
            if ls.is_agent_path(path):
                docs[path] = doc
            else:
                targets.discard(path)
                asyncio.ensure_future(check_open_document(ls, doc.uri))
        texts = {p: d.text for p, d in docs.items()}
        ordered = sorted(targets)
        # In batches: the first diagnostics show sooner, requests are answered in between, and
        # a large workspace never holds all its unpublished diagnostics at once. Each batch is
        # one view of the disk (`MemoryStore.one_pass`): changes meanwhile start the next job.
        # The cyclic collector is off until the job ends (`collector_off`): it then finds only
        # what the job keeps, the published diagnostics having been freed batch by batch.
        with collector_off():
            for start in range(0, len(ordered), CHECK_BATCH):
                results = await asyncio.to_thread(diagnostics.compute, store, ordered[start:start + CHECK_BATCH],
                                                  texts, ls.position_encoding)
                self._publish(results, docs)
                del results
                if progress is not None:
                    done = min(start + CHECK_BATCH, len(ordered))
                    progress.report(f"checked {done} of {plural(len(ordered))}", done * 100 // len(ordered))
        gone = before - known
        if full:
            # New settings come with a new store that knows nothing yet: what was published
            # under the old settings (AGENTS.md no longer a memory name, say) must go too. An
            # open document among them (a `.cursorrules`' not-loaded, a note's problems) is
            # checked again as it is now instead: its handler publishes, or withdraws, its own.
            published = {p: uri for uri in list(ls.published) if (p := uri_to_path(uri)) is not None}
            stale = set(published) - known - store.agent_files()
            opened = {p for p in stale if ls.open_text_document(published[p]) is not None}
            gone |= stale - opened
            for path in sorted(opened):
                asyncio.ensure_future(check_open_document(ls, published[path], force=True))
        still_open = ls.open_memory_docs()
        for path in gone:
            if path not in still_open:
                diagnostics.clear(ls, path)
        uris = sorted(path_to_uri(p) for p in (known | gone if full else changed))
        self.notify_changed(uris)

    def _publish(self, results: dict[Path, list[types.Diagnostic]], snapshot: dict[Path, OpenDoc]) -> None:
        """Publish RESULTS, computed in a worker thread from SNAPSHOT (the open buffers of the
        job's files when it started), except for a file opened, changed or closed since: its
        document handler has already published diagnostics for its newer state, which these
        would overwrite."""
        ls = self.ls
        now = ls.open_memory_docs(among={str(p) for p in results}, any_file=True)
        for path, diags in results.items():
            then, current = snapshot.get(path), now.get(path)
            if not _same_buffer(then, current):
                log.debug("not publishing stale diagnostics of %s (its buffer changed meanwhile)", path)
                continue
            diagnostics.publish(ls, path, diags, current.version if current else None)

    def notify_changed(self, uris: list[str]) -> None:
        """Tell the client memory changed: `memory/didChange` and a code lens refresh."""
        ls = self.ls
        ls.protocol.notify(DID_CHANGE_NOTIFICATION, {"uris": uris})
        if ls.supports("workspace.code_lens.refresh_support"):
            try:
                ls.workspace_code_lens_refresh(None)
            except Exception as err:
                log.warning("codeLens refresh failed: %s", err)


def _same_buffer(then: OpenDoc | None, now: OpenDoc | None) -> bool:
    """Whether a memory file's open state is what it was: closed then and now, or the same
    buffer (URI, version and text) open then and now."""
    if then is None or now is None:
        return then is None and now is None
    return (then.uri, then.version) == (now.uri, now.version) and then.text == now.text
