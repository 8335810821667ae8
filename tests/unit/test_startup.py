"""The start-up pause of the cyclic garbage collector (memory_lens/startup.py)."""

from __future__ import annotations

import gc

import pytest

from memory_lens.startup import collector_paused


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


def test_collector_left_off_when_it_was_off(collector_state) -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_collector_restored_when_the_block_fails(collector_state) -> None:
    gc.enable()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("import failed")
    assert gc.isenabled()
