"""The large-buffer storm (tests/stress/bounded_work.py --only storm), old code against new, alternated.

    .venv/bin/python benchmarks/storm_bench.py --old /tmp/old/server --runs 4

--old is the `server` folder of another checkout (`git archive main server | tar -x -C /tmp/old`):
its language server is run with that folder first on PYTHONPATH. Each round runs the storm once
with the old code and once with this checkout's, so both see the same load; the `memory/effective`
latencies of each phase are printed per run, then the best and worst p50/p95/p99 of each side.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

STRESS = Path(__file__).resolve().parent.parent / "tests" / "stress" / "bounded_work.py"
LINE = re.compile(r"memory/effective (.+): \d+ requests, p50 (\d+) ms, p95 (\d+) ms, p99 (\d+) ms")


def run(server: str | None) -> dict[str, tuple[int, ...]]:
    env = dict(os.environ)
    if server:
        env["PYTHONPATH"] = server + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, str(STRESS), "--only", "storm"], env=env, capture_output=True,
                         text=True, timeout=600).stdout
    if "every check passed" not in out:
        print(out.strip().splitlines()[-1])
    return {m.group(1): tuple(map(int, m.groups()[1:])) for m in LINE.finditer(out)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="the server folder of the code to compare with")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    results: dict[str, list[dict[str, tuple[int, ...]]]] = {"old": [], "new": []}
    for n in range(args.runs):
        for side, server in (("old", args.old), ("new", None)):
            got = run(server)
            results[side].append(got)
            load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
            print(f"run {n + 1} {side} (load {load:.1f}): "
                  + "; ".join(f"{phase}: p50/p95/p99 {'/'.join(map(str, v))} ms" for phase, v in got.items()),
                  flush=True)
    for side, runs in results.items():
        for phase in runs[0]:
            p95 = sorted(r[phase][1] for r in runs if phase in r)
            print(f"{side} {phase}: p95 best {p95[0]} ms, worst {p95[-1]} ms, all {p95}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
