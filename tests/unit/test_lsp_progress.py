"""ScanProgress: shown only once a scan has run its delay, only to clients that can show it,
with the latest counts in `begin`; a failed create leaves the scan without progress."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from memory_lens.lsp.progress import ScanProgress


class FakeProgress:
    def __init__(self, fail: bool = False) -> None:
        self.sent: list[tuple[str, str, Any]] = []
        self.created = asyncio.Event()
        self.fail = fail

    async def create_async(self, token: str) -> None:
        self.sent.append(("create", token, None))
        self.created.set()
        if self.fail:
            raise RuntimeError("the client refused")

    def begin(self, token: str, value: Any) -> None:
        self.sent.append(("begin", token, value))

    def report(self, token: str, value: Any) -> None:
        self.sent.append(("report", token, value))

    def end(self, token: str, value: Any) -> None:
        self.sent.append(("end", token, value))


class FakeServer:
    def __init__(self, capable: bool = True, fail: bool = False) -> None:
        self.capable = capable
        self.work_done_progress = FakeProgress(fail)

    def supports(self, field: str) -> bool:
        assert field == "window.work_done_progress"
        return self.capable


async def test_a_long_scan_shows_progress_after_the_delay_with_the_latest_counts() -> None:
    ls = FakeServer()
    progress = ScanProgress(ls, 0.01)
    await progress.start()
    assert ls.work_done_progress.sent == []  # not before the delay
    progress.report("40 memory files found", 0)
    await asyncio.wait_for(ls.work_done_progress.created.wait(), 30)
    while progress.token is None:  # begin follows create on the same task
        await asyncio.sleep(0.01)
    progress.report("checked 40 of 40 memory files", 100)
    await progress.end("40 memory files")
    kinds = [(kind, type(value).__name__, getattr(value, "message", None)) for kind, _, value in ls.work_done_progress.sent]
    assert kinds == [("create", "NoneType", None),
                     ("begin", "WorkDoneProgressBegin", "40 memory files found"),
                     ("report", "WorkDoneProgressReport", "checked 40 of 40 memory files"),
                     ("end", "WorkDoneProgressEnd", "40 memory files")]
    assert len({token for _, token, _ in ls.work_done_progress.sent}) == 1


async def test_a_quick_scan_and_an_incapable_client_get_nothing() -> None:
    quick = FakeServer()
    progress = ScanProgress(quick, 3600)
    await progress.start()
    progress.report("3 memory files found", 0)
    await progress.end("3 memory files")
    await asyncio.sleep(0)  # the cancelled timer runs its cancellation
    assert quick.work_done_progress.sent == []

    incapable = FakeServer(capable=False)
    progress = ScanProgress(incapable, 0)
    await progress.start()
    progress.report("3 memory files found", 0)
    await progress.end("3 memory files")
    assert incapable.work_done_progress.sent == []


async def test_a_refused_create_means_no_progress_messages() -> None:
    ls = FakeServer(fail=True)
    progress = ScanProgress(ls, 0)
    await progress.start()
    progress.report("checked 1 of 1 memory file", 100)
    await progress.end("1 memory file")
    assert [kind for kind, _, _ in ls.work_done_progress.sent] == ["create"]
    assert progress.token is None
