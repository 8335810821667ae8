"""How long the language server's event loop can be held up by the check of a 10 MB buffer.

    .venv/bin/python benchmarks/large_check_bench.py --old /tmp/old/server --runs 3

The check the server runs on a worker thread once a large buffer's edits pause
(`diagnostics.diagnostics_for` with the storm's text: one line repeated) runs while the main
thread wakes every millisecond; the longest wait between two wakes is how long the check held the
interpreter lock at one time (a request arriving then waits as long). --old is the `server`
folder of another checkout (`git archive main server | tar -x -C /tmp/old`); each round runs
the old code and this checkout's, each in its own process, so both see the same load.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SERVER = Path(__file__).resolve().parent.parent / "server"


def measure() -> str:
    """One check in this process: its time and the main thread's longest and p99 wait."""
    from lsprotocol import types

    from memory_lens.core.settings import resolve_settings
    from memory_lens.lsp import diagnostics
    from memory_lens.lsp.store import MemoryStore

    root = Path(tempfile.mkdtemp(prefix="memory-lens-large-check-"))
    (root / ".git").mkdir()
    (root / "GEMINI.md").write_text("- keep\n")
    text = "- the same entry, written again and again\n" * 238_095
    store = MemoryStore(resolve_settings())
    worker = threading.Thread(target=diagnostics.diagnostics_for,
                              args=(store, root / "GEMINI.md", text, types.PositionEncodingKind.Utf16))
    gaps: list[float] = []
    started = last = time.perf_counter()
    worker.start()
    while worker.is_alive():
        time.sleep(0.001)
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
    gaps.sort()
    return (f"check {last - started:.2f} s, longest wait {gaps[-1] * 1000:.0f} ms, "
            f"p99 {gaps[int(len(gaps) * 0.99)] * 1000:.0f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", help="the server folder of the code to compare with")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(measure())
        return 0
    sides = [("old", args.old)] if args.old else []
    for n in range(args.runs):
        for side, server in [*sides, ("new", str(SERVER))]:
            env = {**os.environ, "HOME": tempfile.mkdtemp(), "PYTHONPATH": server}
            env["XDG_CACHE_HOME"] = env["HOME"]
            out = subprocess.run([sys.executable, __file__, "--one"], env=env, capture_output=True, text=True,
                                 timeout=600).stdout.strip()
            load = f"{os.getloadavg()[0]:.1f}" if hasattr(os, "getloadavg") else "unknown"  # none on Windows
            print(f"run {n + 1} {side} (load {load}): {out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
