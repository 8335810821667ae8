"""Cyclic garbage collection paused where it costs much and finds nothing: start-up, and passes
that build many short-lived objects.

Loading Memory Lens and the LSP type definitions allocates a few hundred thousand objects that
live as long as the process. Each allocation burst lets the collector start another full pass
over all of them; together these passes cost about a sixth of the start-up time and find nothing
to free. `collector_paused` runs a block without them and then freezes what exists (`gc.freeze`),
so later collections do not walk these long-lived objects either (shorter pauses while serving).

A full check builds tens of thousands of findings and diagnostics (16,000 on the large benchmark
tree), none in a reference cycle: reference counting frees each as soon as it is published. Yet
every few thousand allocations start a collection, and the oldest generation's walk every
object alive. `collector_off` runs such a pass without them (no freeze: what it built is
transient); about a third of a full check's time on the large tree went to them.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the block with the cyclic collector off; afterwards freeze everything allocated so far
    and restore the collector's previous state (left off if it was off before)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()


_off_lock = threading.Lock()
_off_count = 0  # passes running now (threads may overlap)
_off_was_enabled = False  # the collector's state when the first of them began


@contextmanager
def collector_off() -> Iterator[None]:
    """Run the block with the cyclic collector off, then restore its state. Passes on several
    threads may overlap: the collector comes back when the last one ends. Reference counting
    still frees everything not in a cycle at once; cycles wait for the next collection."""
    global _off_count, _off_was_enabled
    with _off_lock:
        if _off_count == 0:
            _off_was_enabled = gc.isenabled()
            gc.disable()
        _off_count += 1
    try:
        yield
    finally:
        with _off_lock:
            _off_count -= 1
            if _off_count == 0 and _off_was_enabled:
                gc.enable()
