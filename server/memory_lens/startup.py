"""Start-up cost: cyclic garbage collection paused while modules load and the server is built.

Loading Memory Lens and the LSP type definitions allocates a few hundred thousand objects that
live as long as the process. Each allocation burst lets the collector start another full pass
over all of them; together these passes cost about a sixth of the start-up time and find nothing
to free. `collector_paused` runs a block without them and then freezes what exists (`gc.freeze`),
so later collections do not walk these long-lived objects either (shorter pauses while serving).
"""

from __future__ import annotations

import gc
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
