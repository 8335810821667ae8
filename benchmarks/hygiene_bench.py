#!/usr/bin/env python3
"""What the hygiene checks (`secret`, `stale`, near-`redundant`, `drift`, the scoped rules' findings) cost,
in one run on one tree.

    .venv/bin/python benchmarks/hygiene_bench.py --size large [--runs 5] [--out FILE.json]

- full: `memory-lens check` of the whole tree (`check_targets`, in-process), with the hygiene
  checks and without them (the four functions `check_content` calls replaced by ones that find
  nothing, and no rules files looked for), alternated run by run; `ratio` is the median with over
  the median without (target <= 1.3), `cpu_ratio` the same of this process's CPU time (what other
  processes on a loaded machine move least);
- recheck: the language server's re-check of one memory file after an edit on disk
  (`diagnostics.compute` of that file alone, warm store), for each of the tree's change files,
  with the checks on (target <= 20 ms);
- with `--edits N`: the tree's largest memory file edited N times, re-checked as the editor's
  buffer (didChange) and from disk, with and without the cache that keeps an edit's re-check to
  the edit (docs/performance.md), alternated edit by edit: median and p95.

`benchmarks/run.py` runs the same as its `hygiene` step. See docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from timing import median, ms, percentile, spread, timed  # noqa: E402

from memory_lens.core import checks  # noqa: E402
from memory_lens.core.agents import budget  # noqa: E402
from memory_lens.core.agents.budget import check_targets  # noqa: E402
from memory_lens.core.settings import Settings  # noqa: E402
from memory_lens.lsp import diagnostics  # noqa: E402
from memory_lens.lsp.store import MemoryStore  # noqa: E402
from memory_lens.startup import collector_off  # noqa: E402

EDIT = b"- Benchmark edit: see `src/gone/file.py` and run `npm run nothing`\n"


@contextmanager
def hygiene_off() -> Iterator[None]:
    """The check as it was before the hygiene checks: they find nothing."""
    off = {checks: {n: lambda *a, **k: [] for n in ("stale_findings", "drift_findings", "near_redundant",
                                                      "secret_findings")},
           # no rules files looked for (code before the scan found them: no second walk)
           budget: {"rules_below": lambda *a, **k: []} if hasattr(budget, "rules_below")
           else {"workspace_files": lambda *a, **k: ([], True)}}
    saved = {m: {n: getattr(m, n) for n in fns} for m, fns in off.items()}
    for module, fns in off.items():
        for name, fn in fns.items():
            setattr(module, name, fn)
    try:
        yield
    finally:
        for module, fns in saved.items():
            for name, fn in fns.items():
                setattr(module, name, fn)


def bench_hygiene(root: Path, manifest: dict, settings: Settings, runs: int) -> dict:
    on: list[float] = []
    off: list[float] = []
    cpu: dict[str, list[float]] = {"on": [], "off": []}  # this process's CPU time: less moved by other processes
    counts: dict[str, int] = {}
    load = [round(os.getloadavg()[0], 2)] if hasattr(os, "getloadavg") else []
    for _ in range(runs):
        started = time.process_time()
        with collector_off():
            seconds, report = timed(lambda: check_targets([root], settings, ("gemini",)))
        on.append(seconds)
        cpu["on"].append(time.process_time() - started)
        counts = {}
        for f in report.findings:
            counts[f.code] = counts.get(f.code, 0) + 1
        started = time.process_time()
        with hygiene_off(), collector_off():
            off.append(timed(lambda: check_targets([root], settings, ("gemini",)))[0])
        cpu["off"].append(time.process_time() - started)
    load += [round(os.getloadavg()[0], 2)] if load else []
    store = MemoryStore(settings)
    paths = sorted(root / p for p in manifest["expected"])
    diagnostics.compute(store, paths, {}, "utf-16")  # warm, as a running server is
    recheck: list[float] = []
    for rel in manifest["change_files"]:
        path = root / rel
        old = path.read_bytes()
        path.write_bytes(old + EDIT)
        try:
            store.invalidate([path])
            recheck.append(timed(lambda: diagnostics.compute(store, [path], {}, "utf-16"))[0])
        finally:
            path.write_bytes(old)
            store.invalidate([path])
    return {
        "full_on_ms": ms(median(on)), "full_off_ms": ms(median(off)), "ratio": round(median(on) / median(off), 3),
        "cpu_ratio": round(median(cpu["on"]) / median(cpu["off"]), 3),
        "load_avg_1m": load, "recheck_ms": ms(median(recheck)), "recheck_max_ms": ms(max(recheck)), "files": len(paths),
        "findings_on": counts,
        "runs_ms": {"on": spread([t * 1000 for t in on]), "off": spread([t * 1000 for t in off]),
                    "cpu_on": spread([t * 1000 for t in cpu["on"]]), "cpu_off": spread([t * 1000 for t in cpu["off"]]),
                    "recheck": spread([t * 1000 for t in recheck])},
    }


def bench_edit(root: Path, manifest: dict, settings: Settings, edits: int) -> dict:
    """The largest memory file of the tree, edited EDITS times: its re-check as the editor's buffer
    (`diagnostics_for` with the text, as didChange runs it) and from disk (`compute`, as the
    benchmark above), with the cache and without it, alternated edit by edit."""
    store = MemoryStore(settings)
    paths = sorted(root / p for p in manifest["expected"])
    path = max(paths, key=lambda p: p.stat().st_size)
    diagnostics.compute(store, paths, {}, "utf-16")  # warm, as a running server is
    old = path.read_bytes()
    times: dict[str, list[float]] = {k: [] for k in ("buffer_old", "buffer_new", "disk_old", "disk_new")}
    try:
        for i in range(edits):
            text = old.decode() + f"- Benchmark edit {i}: run `npm run nothing{i}`\n"
            for new in (True, False) if i % 2 else (False, True):
                tag = "new" if new else "old"
                with collector_off():
                    times[f"buffer_{tag}"].append(timed(lambda: diagnostics.diagnostics_for(
                        store, path, text, "utf-16", generation=1 if new else None))[0])
                    path.write_bytes(text.encode())
                    store.invalidate([path])
                    times[f"disk_{tag}"].append(timed(lambda: diagnostics.compute(store, [path], {}, "utf-16"))[0])
    finally:
        path.write_bytes(old)
        store.invalidate([path])
    out: dict = {"file": str(path.relative_to(root)), "bytes": len(old), "edits": edits}
    for key, values in times.items():
        out[f"{key}_ms"] = {"median": ms(median(values)), "p95": ms(percentile(values, 95))}
    return out


def main() -> None:
    from generate import ensure_tree

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", choices=["small", "medium", "large", "xlarge"], default="large")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--edits", type=int, default=0, help="only the re-check of the largest file, edited N times, "
                    "with the not-loaded cache of an edit's re-check and without it, alternated")
    args = ap.parse_args()
    root, manifest = ensure_tree(args.size)
    with tempfile.TemporaryDirectory(prefix="memory-lens-bench-") as tmp:
        settings = Settings(filenames=("GEMINI.md",), global_dir=Path(tmp))
        if args.edits:
            result = {"size": args.size, **bench_edit(root, manifest, settings, args.edits)}
        else:
            result = {"size": args.size, **bench_hygiene(root, manifest, settings, args.runs)}
    text = json.dumps(result, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
