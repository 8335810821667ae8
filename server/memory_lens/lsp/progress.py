"""Work-done progress (`window/workDoneProgress/create`, `$/progress`) for long workspace scans.

A full scan (the first one, a refresh, new settings or folders) shows progress in the editor
only once it has run for `delay` seconds (1 s by default; `MEMORY_LENS_PROGRESS_DELAY` sets
another, 0 for every scan), so quick scans do not flash a notification. Only clients that
declare `window.workDoneProgress` are asked to create a token; a client that fails the request
is logged and the scan goes on without progress. The messages carry counts: `begin` says what
is happening, `report` the memory files found and then checked (with a percentage), `end` how
many memory files there are.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from memory_lens.lsp.server import MemoryLensServer

log = logging.getLogger("memory_lens.lsp")
TITLE = "Memory Lens"
CREATE_TIMEOUT = 5.0


def plural(count: int, what: str = "memory file") -> str:
    return f"{count} {what}{'s' if count != 1 else ''}"


class ScanProgress:
    """The progress of one scan: shown once it has run `delay` seconds, if the client can show it."""

    def __init__(self, ls: MemoryLensServer, delay: float) -> None:
        self.ls = ls
        self.delay = delay
        self.token: str | None = None
        self._message = "scanning the workspace for memory files"
        self._percentage: int | None = None
        self._opening: asyncio.Task | None = None
        self._closed = False

    async def start(self) -> None:
        """Show progress now (delay 0) or once the delay has passed."""
        if not self.ls.supports("window.work_done_progress"):
            return
        if self.delay <= 0:
            await self._open()
        else:
            self._opening = asyncio.ensure_future(self._open_later())

    async def _open_later(self) -> None:
        await asyncio.sleep(self.delay)
        await self._open()

    async def _open(self) -> None:
        token = f"memory-lens-scan-{uuid.uuid4().hex[:8]}"
        try:
            await asyncio.wait_for(self.ls.work_done_progress.create_async(token), timeout=CREATE_TIMEOUT)
            if self._closed:
                return
            self.ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(
                title=TITLE, message=self._message, cancellable=False, percentage=self._percentage))
        except Exception as err:  # the client refused or failed: no progress, the scan goes on
            log.info("no progress reporting: %s", err)
            return
        self.token = token

    def report(self, message: str, percentage: int | None = None) -> None:
        """Say where the scan is (kept for `begin` while the progress is not shown yet)."""
        self._message, self._percentage = message, percentage
        if self.token is None:
            return
        try:
            self.ls.work_done_progress.report(self.token, types.WorkDoneProgressReport(
                message=message, percentage=percentage))
        except Exception as err:
            log.info("progress report failed: %s", err)

    async def end(self, message: str) -> None:
        """End the progress (if it was shown); a pending one is never shown."""
        self._closed = True
        if self._opening is not None and not self._opening.done():
            self._opening.cancel()
        if self.token is None:
            return
        try:
            self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
        except Exception as err:
            log.info("progress end failed: %s", err)
