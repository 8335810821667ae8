"""lsp/watch.py: the `Watcher`, the one owner of the server's watch on disk, through what it
offers readers that cache: `generation` and `covers`."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from memory_lens.core.settings import Settings
from memory_lens.lsp import watch
from memory_lens.lsp.app import build_server
from memory_lens.lsp.server import MemoryLensServer

TIMEOUT = 10.0


@pytest.fixture
def global_file(tmp_path: Path) -> Path:
    home = Path(os.path.realpath(tmp_path)) / "home" / ".gemini"
    home.mkdir(parents=True)
    path = home / "GEMINI.md"
    path.write_text("- Global rule\n", encoding="utf-8")
    return path


def server_for(global_file: Path, poll_watcher: bool = False) -> MemoryLensServer:
    return build_server(Settings(global_dir=global_file.parent, poll_watcher=poll_watcher))


async def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not condition():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.02)


def test_generation_goes_up_after_the_store_and_again_after_the_engine_took_the_change(
        global_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ls = server_for(global_file)
    watcher = ls.watcher
    seen_by_store: list[int] = []
    real_invalidate = ls.store.invalidate

    def invalidate(paths=None) -> None:
        seen_by_store.append(watcher.generation)
        real_invalidate(paths)

    monkeypatch.setattr(ls.store, "invalidate", invalidate)

    async def run() -> None:
        before = watcher.generation
        watcher.on_client_change({global_file})
        assert seen_by_store == [before]  # the store had the change before the generation moved
        assert watcher.generation == before + 1
        await ls.live.idle()  # the engine applies the change to the known files, and says so
        assert watcher.generation == before + 2

    asyncio.run(run())


def test_a_change_found_by_the_poller_moves_the_generation(global_file: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    ls = server_for(global_file, poll_watcher=True)
    watcher = ls.watcher

    async def run() -> None:
        await watcher.start()
        try:
            await asyncio.sleep(0.3)  # a few polls: the baseline is taken
            await ls.live.idle()
            before = watcher.generation
            global_file.write_text("- Global rule\n- Another\n", encoding="utf-8")
            await wait_for(lambda: watcher.generation > before, "the poller never reported the change")
            assert not watcher.covers(str(global_file))  # polling only: no notification covers it
        finally:
            watcher.stop()

    asyncio.run(run())


def test_covered_paths_are_reported_by_notification(global_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("watchfiles")
    ls = server_for(global_file)
    watcher = ls.watcher

    async def run() -> None:
        await watcher.start()
        try:
            await wait_for(lambda: watcher.covers(str(global_file)), "the global file was never covered")
            assert not watcher.covers(str(global_file.parent / "sub" / "GEMINI.md"))
            await ls.live.idle()
            before = watcher.generation
            global_file.write_text("- Global rule\n- Another\n", encoding="utf-8")
            await wait_for(lambda: watcher.generation > before, "the change never reached the generation")
        finally:
            watcher.stop()
        assert not watcher.covers(str(global_file))

    asyncio.run(run())


def test_the_poll_waits_for_a_quiet_client_but_not_past_its_ceiling() -> None:
    period = watch.SAFETY_POLL_SECONDS
    due = 100.0
    ceiling = due + watch.POLL_DEFER_PERIODS * period
    assert not watch.poll_ready(due - 0.01, due, period, last_message=0.0)  # not due yet
    assert watch.poll_ready(due, due, period, last_message=due - 2 * watch.IDLE_SECONDS)  # due, client quiet
    assert not watch.poll_ready(due, due, period, last_message=due - 0.001)  # a request just came
    assert not watch.poll_ready(ceiling - 0.01, due, period, last_message=ceiling - 0.02)
    assert watch.poll_ready(ceiling, due, period, last_message=ceiling - 0.001)  # requests never stop
