"""The pauses of the cyclic garbage collector (memory_lens/startup.py): at start-up, and for a
pass over many files."""

from __future__ import annotations

import gc
import threading

import pytest

from memory_lens.startup import collector_off, collector_paused


@pytest.fixture
def collector_state():
    was = gc.isenabled()
    yield
    gc.unfreeze()
    gc.enable() if was else gc.disable()


def test_collector_is_off_inside_and_back_on_after(collector_state) -> None:
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
        kept = [object() for _ in range(10)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(kept)


@pytest.mark.parametrize("pause", [collector_paused, collector_off])
def test_collector_left_off_when_it_was_off(collector_state, pause) -> None:
    gc.disable()
    with pause():
        pass
    assert not gc.isenabled()


@pytest.mark.parametrize("pause", [collector_paused, collector_off])
def test_collector_restored_when_the_block_fails(collector_state, pause) -> None:
    gc.enable()
    with pytest.raises(RuntimeError), pause():
        raise RuntimeError("import failed")
    assert gc.isenabled()


# collector_off: a pass over many files without the collector ---------------------------------


def test_collector_off_inside_and_back_on_after_without_freezing(collector_state) -> None:
    gc.enable()
    frozen = gc.get_freeze_count()
    with collector_off():
        assert not gc.isenabled()
        transient = [[] for _ in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen  # what the pass built is not kept out of collections
    del transient


def test_collector_off_comes_back_when_the_last_overlapping_pass_ends(collector_state) -> None:
    gc.enable()
    first_in, second_done, first_may_end = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def first() -> None:
        with collector_off():
            first_in.set()
            first_may_end.wait(10)
        seen.append(gc.isenabled())

    def second() -> None:
        first_in.wait(10)
        with collector_off():
            pass
        seen.append(gc.isenabled())  # the first pass still runs: still off
        second_done.set()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    second_done.wait(10)
    first_may_end.set()
    for t in threads:
        t.join(10)
    assert seen == [False, True]
    assert gc.isenabled()
