#!/usr/bin/env python3
"""`memory-lens check TREE` with another checkout's code and with this one's, alternated run by run,
each in its own process (so both see the same load): wall time and CPU time (the process and the
helpers its walk starts).

    .venv/bin/python benchmarks/check_old_new.py --old /tmp/old/server [--size large] [--runs 3]

--old is the `server` folder of the other checkout (`git archive <commit> server | tar -x -C /tmp/old`).
Used to show what finding more instruction files in the check's walk costs (docs/security.md#secrets).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from generate import ensure_tree  # noqa: E402
from timing import median  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True, type=Path)
    parser.add_argument("--size", default="large")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    tree, _ = ensure_tree(args.size, quiet=True)
    codes = {"old": args.old.resolve(), "new": HERE.parent / "server"}
    seen: dict[str, dict[str, list[float]]] = {k: {"wall": [], "cpu": []} for k in codes}
    for _ in range(args.runs):
        for name, path in codes.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "memory_lens", "check", str(tree)], capture_output=True,
                           env={**os.environ, "PYTHONPATH": str(path)})
            seen[name]["wall"].append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            seen[name]["cpu"].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    for name, got in seen.items():
        print(f"{name}: wall {median(got['wall']):.2f} s, cpu {median(got['cpu']):.2f} s (medians of {args.runs})")
    print(f"cpu ratio new/old: {median(seen['new']['cpu']) / median(seen['old']['cpu']):.3f}; "
          f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
