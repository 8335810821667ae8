"""How many CPUs this process may use, and how many of them other work keeps busy: what decides
whether the scan shares its work with helper processes."""

from __future__ import annotations

import os
import time


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity (a container's or `taskset`'s limit) where
    the system tells, else every CPU of the machine."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity on macOS and Windows
        return os.cpu_count() or 1


def busy_cpus(loadavg: str = "/proc/loadavg", samples: int = 3, gap: float = 0.001) -> int:
    """How many threads besides the caller keep CPUs busy: on Linux, the runnable count of
    LOADAVG (`/proc/loadavg`'s fourth field, `2/81`: 2 running or waiting for a CPU, the reader
    included), the least of up to SAMPLES readings GAP seconds apart (a thread woken for a moment
    is not other work). 0 where the system does not tell (macOS, Windows), and when this process
    may use only some of the machine's CPUs (a cpuset, `taskset`): the count is the machine's,
    not theirs. With 0 the scan takes every usable CPU but its own for a helper."""
    if usable_cpus() < (os.cpu_count() or 1):
        return 0
    least = None
    for sample in range(samples):
        if sample:
            time.sleep(gap)
        try:
            with open(loadavg, "rb") as f:
                runnable = int(f.read().split()[3].split(b"/")[0])
        except (OSError, ValueError, IndexError):
            return 0
        least = runnable - 1 if least is None else min(least, runnable - 1)
        if least <= 0:
            return 0
    return least or 0
