"""Small timing helpers: percentiles, medians of runs, and a CPU calibration loop for noise."""

from __future__ import annotations

import math
import os
import statistics
import time
from typing import Callable, Sequence


def ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def percentile(values: Sequence[float], p: float) -> float:
    """The nearest-rank P-th percentile (P in 0..100) of VALUES."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


def spread(values: Sequence[float]) -> dict:
    """Min, median and max of VALUES (in the unit given), rounded."""
    if not values:
        return {}
    return {"min": round(min(values), 3), "median": round(median(values), 3), "max": round(max(values), 3),
            "runs": len(values)}


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    """(seconds, result) of one call of FN."""
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def _spin() -> int:
    total = 0
    for i in range(200_000):
        total += i * i % 7
    return total


def calibrate(rounds: int = 7) -> dict:
    """Time a fixed pure-Python loop: comparing its start and end values shows machine noise."""
    times = [timed(_spin)[0] * 1000 for _ in range(rounds)]
    load = os.getloadavg() if hasattr(os, "getloadavg") else (math.nan,) * 3
    return {"loop_ms": spread(times), "loadavg_1m": round(load[0], 2)}


def noise_summary(start: dict, end: dict) -> dict:
    """How much the calibration loop moved between START and END, and how much it jittered."""
    a, b = start["loop_ms"], end["loop_ms"]
    drift = (b["median"] - a["median"]) / a["median"] * 100 if a["median"] else math.nan
    jitter = max((s["max"] - s["min"]) / s["median"] * 100 for s in (a, b) if s["median"])
    return {"start": start, "end": end, "drift_pct": round(drift, 1), "jitter_pct": round(jitter, 1),
            "note": "a fixed CPU loop timed before and after the run; drift or jitter above ~10% "
                    "means the machine was busy and timings are less reliable"}
