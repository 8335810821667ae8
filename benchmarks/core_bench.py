"""In-process measurements: the workspace scan against rg and find, the checks, and the effective
memory without the LSP transport. Everything runs the exact code the language server runs
(`MemoryStore`, `diagnostics.compute`, `effective_result`)."""

from __future__ import annotations

import math
import shutil
import subprocess
import tempfile
from pathlib import Path

from timing import median, ms, percentile, spread, timed

from memory_lens.core.entry_cache import FILE_NAME, EntryCache
from memory_lens.core.scan import find_memory_files, helper_count, rignore_available
from memory_lens.core.settings import Settings
from memory_lens.lsp import diagnostics
from memory_lens.lsp.live import CHECK_BATCH
from memory_lens.lsp.store import MemoryStore
from memory_lens.startup import collector_off

MEMORY_NAME = "GEMINI.md"
PRUNED = ["node_modules", ".git", "build", "dist"]


def rg_command(root: Path) -> list[str] | None:
    rg = shutil.which("rg")
    return [rg, "--files", "-g", MEMORY_NAME, str(root)] if rg else None


def find_command(root: Path) -> list[str] | None:
    find = shutil.which("find")
    if not find:
        return None
    prune: list[str] = ["("]
    for i, name in enumerate(PRUNED):
        prune += (["-o"] if i else []) + ["-name", name]
    return [find, str(root), *prune, ")", "-prune", "-o", "-name", MEMORY_NAME, "-type", "f", "-print"]


def _run_listing(command: list[str]) -> tuple[float, int]:
    seconds, out = timed(lambda: subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                                check=False).stdout)
    return seconds, len(out.splitlines())


def _cpu_seconds() -> float:
    """CPU time (user and system) of this process and of its children that ended, so far."""
    try:
        import resource
    except ImportError:  # not on POSIX
        return math.nan
    return sum(getattr(resource.getrusage(who), field) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
               for field in ("ru_utime", "ru_stime"))


def bench_scan(root: Path, manifest: dict, settings: Settings, runs: int) -> dict:
    """Median of RUNS scans by Memory Lens, rg and find, interleaved so they share the noise."""
    rg = rg_command(root)
    tools = {"rg": rg, "rg_single_thread": rg and [rg[0], "-j1", *rg[1:]], "find": find_command(root)}
    store = MemoryStore(settings)
    store.scan([root])  # warm the page cache and the imports; not counted
    times: dict[str, list[float]] = {"memory_lens": [], **{k: [] for k, v in tools.items() if v}}
    cpu: dict[str, list[float]] = {k: [] for k in times}
    counts: dict[str, int] = {}
    found: set[Path] = set()
    for _ in range(runs):
        before = _cpu_seconds()
        seconds, found = timed(lambda: MemoryStore(settings).scan([root]))
        times["memory_lens"].append(seconds)
        cpu["memory_lens"].append(_cpu_seconds() - before)
        for name, command in tools.items():
            if command:
                before = _cpu_seconds()
                seconds, counts[name] = _run_listing(command)
                times[name].append(seconds)
                cpu[name].append(_cpu_seconds() - before)
    found -= set(settings.global_files())
    expected = {root / p for p in manifest["expected"]}
    result = {
        "memory_lens_ms": ms(median(times["memory_lens"])),
        "rg_ms": ms(median(times["rg"])) if times.get("rg") else None,
        "find_ms": ms(median(times["find"])) if times.get("find") else None,
        "found": len(found), "expected": len(expected), "exact": found == expected,
        "rg_single_thread_ms": ms(median(times["rg_single_thread"])) if times.get("rg_single_thread") else None,
        "rg_found": counts.get("rg"), "find_found": counts.get("find"),
        "engine": "rignore" if rignore_available() else "python",
        "runs_ms": {k: spread([t * 1000 for t in v]) for k, v in times.items()},
        # CPU time of each (its helper processes and rg's threads included): with a busy machine
        # the wall-clock ratio follows it, as each gets its share of the cores.
        "cpu_ms": {k: ms(median(v)) for k, v in cpu.items()},
        "helper_processes": helper_count() if rignore_available() else 0,
    }
    # Always present (null when the tool is not installed): the keys are a contract.
    result["ratio_vs_rg"] = round(result["memory_lens_ms"] / result["rg_ms"], 2) if result["rg_ms"] else None
    result["ratio_vs_find"] = round(result["memory_lens_ms"] / result["find_ms"], 2) if result["find_ms"] else None
    missing = [n for n, c in tools.items() if not c and n != "rg_single_thread"]
    if missing:
        result["skipped"] = f"not installed: {', '.join(missing)}"
    py_times = [timed(lambda: find_memory_files(root, settings.filenames, engine="python"))[0]
                for _ in range(max(1, runs // 2))]
    result["python_fallback_ms"] = ms(median(py_times))
    return result


DUPLICATE_PAIR = b"- Benchmark edit: an entry written twice\n- Benchmark edit: an entry written twice\n"


def _edit(path: Path) -> bytes:
    """Append an entry twice (a new duplicate finding); return the old bytes."""
    old = path.read_bytes()
    path.write_bytes(old + DUPLICATE_PAIR)
    return old


def _full_check(settings: Settings, paths: list[Path], cache_file: Path) -> tuple[EntryCache, MemoryStore, dict]:
    """Diagnostics of PATHS by a new store, its entry cache opened on CACHE_FILE (as a server
    starting: the cache is opened on first use), checked as the server's job checks them
    (`live.LiveEngine._work`): in batches of `live.CHECK_BATCH` (each one view of the disk), the
    cyclic collector off for the whole job, each batch's diagnostics dropped once published
    (the server keeps their digest, `diagnostics.fingerprint`: so does this, per file, with the
    number of diagnostics, to compare runs)."""
    cache = EntryCache(cache_file)
    store = MemoryStore(settings, cache)
    published: dict = {}
    with collector_off():
        for start in range(0, len(paths), CHECK_BATCH):
            batch = diagnostics.compute(store, paths[start:start + CHECK_BATCH], {}, "utf-16")
            published.update((p, (diagnostics.fingerprint(d), len(d))) for p, d in batch.items())
            del batch
    return cache, store, published


def bench_checks(root: Path, manifest: dict, settings: Settings, runs: int) -> dict:
    """`full_cold`: diagnostics of every memory file with a new store and an empty entry cache
    (reads, parsing, checks: a workspace opened for the first time). `full_warm`: the same with
    the cache that run filled, and a new store again (a restarted server: nothing is parsed).
    `full_ms` is the warm figure. `incremental`: after one file changes on disk, what the live
    engine rechecks (the file and the files below it), with a warm store."""
    paths = sorted(root / p for p in manifest["expected"])
    cold: list[float] = []
    warm: list[float] = []
    findings, same = 0, True
    with tempfile.TemporaryDirectory(prefix="memory-lens-entry-cache-") as tmp:
        cache_file = Path(tmp) / FILE_NAME
        for _ in range(runs):
            for leftover in Path(tmp).iterdir():
                leftover.unlink()
            seconds, (cache, _, first) = timed(lambda: _full_check(settings, paths, cache_file))
            cache.close()  # a server writes its last rows at exit
            cold.append(seconds)
            seconds, (cache, store, result) = timed(lambda: _full_check(settings, paths, cache_file))
            warm.append(seconds)
            same = same and result == first
            findings = sum(n for _, n in result.values())
        cache_bytes = sum(f.stat().st_size for f in Path(tmp).iterdir())
        cache_rows = cache.count()
        incremental = _bench_incremental(root, manifest, store, paths)
        cache.close()
    incremental_runs = incremental.pop("_runs")
    return {
        "full_ms": ms(median(warm)), "full_cold_ms": ms(median(cold)), "full_warm_ms": ms(median(warm)),
        "files": len(paths), "diagnostics": findings, "same_findings_cold_and_warm": same,
        "entry_cache": {"rows": cache_rows, "bytes": cache_bytes},
        **incremental,
        "runs_ms": {"full_cold": spread([t * 1000 for t in cold]), "full_warm": spread([t * 1000 for t in warm]),
                    "incremental": incremental_runs},
    }


def _bench_incremental(root: Path, manifest: dict, store: MemoryStore, paths: list[Path]) -> dict:
    """After one file changes on disk, what the live engine rechecks, with STORE warm."""
    known = set(paths)
    incremental: list[float] = []
    affected: list[int] = []
    for rel in manifest["change_files"]:
        path = root / rel
        old = _edit(path)
        try:
            store.invalidate([path])
            targets = sorted(store.affected_by(path, known))
            seconds, _ = timed(lambda: diagnostics.compute(store, targets, {}, "utf-16"))
        finally:
            path.write_bytes(old)
        store.invalidate([path])
        incremental.append(seconds)
        affected.append(len(targets))
    root_file = root / MEMORY_NAME
    old = _edit(root_file)
    try:
        store.invalidate([root_file])
        root_seconds, _ = timed(lambda: diagnostics.compute(store, sorted(store.affected_by(root_file, known)),
                                                             {}, "utf-16"))
    finally:
        root_file.write_bytes(old)
    return {
        "incremental_ms": ms(median(incremental)), "incremental_p90_ms": ms(percentile(incremental, 90)),
        "incremental_max_ms": ms(max(incremental)), "incremental_files_median": median(affected),
        "incremental_root_ms": ms(root_seconds), "_runs": spread([t * 1000 for t in incremental]),
    }


def bench_effective_inprocess(root: Path, manifest: dict, settings: Settings, passes: int) -> dict:
    """`memory/effective` results computed in-process (no JSON-RPC): the lookup itself, as the
    running server answers it (`effective.gemini_sent`: the answer's JSON, kept per directory
    while every path its memory depends on holds). The first pass reads each chain; the warm
    passes check each kept answer against the disk. No file watcher is started: the server does
    not consult it for this, so the figure is the same with the watcher running."""
    from memory_lens.lsp.convert import path_to_uri
    from memory_lens.lsp.effective import gemini_sent
    from memory_lens.lsp.app import build_server

    server = build_server(settings)
    uris = [path_to_uri(root / p) for p in manifest["sample_files"]]
    per_pass = []
    for _ in range(passes + 1):
        times = [timed(lambda: gemini_sent(server, uri))[0] for uri in uris]
        per_pass.append((percentile(times, 50), percentile(times, 99)))
    warm = per_pass[1:]
    return {"first_pass_p50_ms": ms(per_pass[0][0]), "first_pass_p99_ms": ms(per_pass[0][1]),
            "p50_ms": ms(median([p for p, _ in warm])), "p99_ms": ms(median([p for _, p in warm])),
            "files": len(uris)}
