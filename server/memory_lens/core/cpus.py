"""How many CPUs this process may use: what decides whether the scan shares its work with helper
processes."""

from __future__ import annotations

import os


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity (a container's or `taskset`'s limit) where
    the system tells, else every CPU of the machine."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity on macOS and Windows
        return os.cpu_count() or 1
