#!/usr/bin/env python3
"""The result tables of docs/performance.md, made from the JSON files the runner wrote.

    python benchmarks/report.py [benchmarks/results]   # prints Markdown

One table per tree (each timing at rest and with the CPU-bound neighbour, against its target),
one table of how each figure grows with the tree (per 100,000 files, between the two largest
trees), and the notes store's table (`notes.json` of benchmarks/notes_bench.py, the same way).
Regenerate the tables in docs/performance.md with it after a new run, so the page and the JSON agree.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIZES = ("small", "medium", "large", "xlarge")

# key, what it measures, unit; in the order of the tables
ROWS = [
    ("scan.memory_lens_ms", "full workspace index (scan)", "ms"),
    ("scan.rg_ms", "`rg --files` on the same tree, default threads", "ms"),
    ("scan.ratio_vs_rg", "scan ÷ rg", "×"),
    ("check.full_ms", "diagnostics of every memory file (as the server's first check)", "ms"),
    ("check.full_cold_ms", "same, empty parse cache", "ms"),
    ("check.full_warm_ms", "same, parse cache filled (a restart)", "ms"),
    ("check.incremental_ms", "after one file changes on disk, p50", "ms"),
    ("check.agnix.memory_lens.ms", "`memory-lens check` of the whole tree (CLI), median", "ms"),
    ("check.agnix.agnix.ms", "agnix of the same tree, alternated with it, median", "ms"),
    ("check.ratio_vs_agnix", "memory-lens check ÷ agnix", "×"),
    ("hygiene.ratio", "`memory-lens check` with the hygiene checks ÷ without, alternated", "×"),
    ("hygiene.recheck_ms", "one memory file re-checked after an edit, median", "ms"),
    ("check.index_ms", "`initialized` → everything scanned, checked, published", "ms"),
    ("effective.p50_ms", "`memory/effective` over stdio, warm p50", "ms"),
    ("effective.p99_ms", "same, p99", "ms"),
    ("effective_claude.p99_ms", "same with agent claude, 200 rules files added, p99", "ms"),
    ("effective_claude.open_file.p99_ms", "same, for the open file (10 files, each asked 20 times), p99", "ms"),
    ("explain.p99_ms", "`memory/explain` (every agent) over stdio, warm p99", "ms"),
    ("explain.open_file.p99_ms", "same, for the open file, p99", "ms"),
    ("effective.inprocess.p50_ms", "same lookup in-process (no JSON-RPC), p50", "ms"),
    ("peer.upward.p50_ms", "Gemini CLI 0.61's upward lookup, p50", "ms"),
    ("peer.upward_vs_effective_inprocess", "Gemini CLI 0.61 ÷ Memory Lens in-process", "×"),
    ("change.p50_ms", "GEMINI.md written by another program → its diagnostics", "ms"),
    ("initialize_ms", "process start → `initialize` answered", "ms"),
    ("initialize.import_floor_ms", "a process that only imports pygls", "ms"),
    ("initialize.ratio_to_floor", "initialize ÷ floor", "×"),
    ("rss_mb", "peak memory after indexing, server + scan helpers", "MB"),
]
GROWTH = ["scan.memory_lens_ms", "scan.rg_ms", "check.full_ms", "check.index_ms", "effective.p99_ms",
          "effective.inprocess.p50_ms", "initialize_ms", "rss_mb"]


def lookup(results: dict, dotted: str):
    value = results
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def fmt(value, unit: str) -> str:
    if value is None:
        return "–"
    if unit == "×":
        return f"{value:.2f} ×"
    if unit == "MB":
        return f"{value:.1f} MB"
    return f"{value:,.0f} ms" if value >= 100 else f"{value:.2f} ms"


def met_mark(target: dict | None) -> str:
    if not target:
        return ""
    return {True: "yes", False: "**no**", None: "n/a"}[target["met"]]


def size_table(results: dict) -> str:
    targets = results.get("targets", {})
    loaded = results.get("under_load", {})
    lines = ["| key | what | at rest | with a CPU-bound neighbour | target | met (rest / load) |",
             "|---|---|---:|---:|---|---|"]
    for key, what, unit in ROWS:
        rest = lookup(results, key)
        if rest is None:
            continue
        load = lookup(loaded, key) if not key.startswith("peer.") else None
        target = targets.get(key)
        load_target = targets.get(f"under_load.{key}")
        if key == "peer.upward_vs_effective_inprocess" and loaded.get("effective"):
            load = round(lookup(results, "peer.upward.p50_ms") / lookup(loaded, "effective.inprocess.p50_ms"), 1)
        marks = met_mark(target) + (f" / {met_mark(load_target)}" if load_target else "")
        lines.append(f"| `{key}` | {what} | {fmt(rest, unit)} | {fmt(load, unit)} | "
                     f"{target['target'].replace('<=', '≤').replace('>=', '≥') if target else ''} | {marks} |")
    tree = results["tree"]
    noise = results.get("noise", {})
    head = (f"{tree['files']:,} files, {tree['memory_files']:,} memory files, {tree['bullets']:,} entries; "
            f"commit {results['machine'].get('commit')}, {results['seconds']:.0f} s, "
            f"calibration loop {lookup(noise, 'start.loop_ms.median')} ms, drift {noise.get('drift_pct')} % / "
            f"jitter {noise.get('jitter_pct')} %")
    return head + "\n\n" + "\n".join(lines)


def growth_table(runs: dict[str, dict]) -> str:
    sizes = [s for s in SIZES if s in runs]
    files = {s: runs[s]["tree"]["files"] for s in sizes}
    lines = ["| key | " + " | ".join(f"{s} ({files[s] / 1000:,.0f}k files)" for s in sizes)
             + " | growth per 100k files |", "|---|" + "---:|" * (len(sizes) + 1)]
    units = {key: unit for key, _, unit in ROWS}
    for key in GROWTH:
        values = {s: lookup(runs[s], key) for s in sizes}
        known = [s for s in sizes if values[s] is not None]
        growth = "–"
        if len(known) >= 2:
            a, b = known[-2], known[-1]
            per = (values[b] - values[a]) / ((files[b] - files[a]) / 100_000)
            growth = (f"{per:+.1f} MB" if units[key] == "MB" else f"{per:+.3f} ms" if abs(per) < 1
                      else f"{per:+.1f} ms")
        lines.append(f"| `{key}` | " + " | ".join(fmt(values[s], units[key]) for s in sizes) + f" | {growth} |")
    return "\n".join(lines)


# key, what, whether the row is a p50 / p99 pair; in the order of the notes table
NOTE_ROWS = [
    ("search.server", "`search`, first page (20), warm, server mode: p50 / p99", True),
    ("search.server.selective", "the selective queries (each matching at most a tenth of the notes)", True),
    ("search.server.broad", "the broad ones (a word in up to every note: `bm25()` scores every match)", True),
    ("list_by_tag.server", "`list --tag T`, first page: p50 / p99", True),
    ("create.inprocess.ratio", "create one note: p50 at N notes ÷ p50 at 100", False),
    ("create.cli.ratio", "`memory-lens notes create`, a process each: the same ratio", False),
    ("pull.sync_ms", "note files replaced on disk (100 by default), then the index in step", False),
    ("build.cold_ms", "index built from nothing (every file read, checked, tokenized, inserted)", False),
    ("refresh.ms", "one round of the servers' background listing, nothing changed", False),
    ("read.server", "`read NAME`: p50 / p99", True),
]


def _note_value(results: dict, key: str, pair: bool, cpu: bool = False) -> str:
    prefix = "cpu_" if cpu else ""
    if pair:
        p50, p99 = lookup(results, f"{key}.{prefix}p50_ms"), lookup(results, f"{key}.{prefix}p99_ms")
        return "–" if p50 is None or p99 is None else f"{p50:.2f} / {p99:.2f} ms"
    if cpu:
        key = {"create.inprocess.ratio": "create.inprocess.cpu_ratio", "pull.sync_ms": "pull.sync_cpu_ms",
               "build.cold_ms": "build.cpu_ms", "refresh.ms": "refresh.cpu_ms"}.get(key, "")
    value = lookup(results, key) if key else None
    return fmt(value, "×" if key.endswith("ratio") else "ms")


def notes_table(results: dict) -> str:
    targets, loaded = results.get("targets", {}), results.get("under_load", {})
    lines = ["| key | what | at rest: wall | at rest: CPU | with a CPU-bound neighbour: wall | target | met (rest / load) |",
             "|---|---|---:|---:|---:|---|---|"]
    for key, what, pair in NOTE_ROWS:
        judged = [k for k in ((f"{key}.p50_ms", f"{key}.p99_ms") if pair else (key,)) if k in targets]
        label = {k: f"{k.rsplit('.', 1)[-1][:3]} " if pair else "" for k in judged}  # "p50 ", "p99 "
        limits = ", ".join(f"{label[k]}{targets[k]['target'].replace('<=', '≤')}" for k in judged)
        marks = ", ".join(f"{label[k]}{met_mark(targets[k])}"
                          + (f" / {met_mark(targets[f'under_load.{k}'])}" if f"under_load.{k}" in targets else "")
                          for k in judged)
        lines.append(f"| `{key}` | {what} | {_note_value(results, key, pair)} | {_note_value(results, key, pair, True)} | "
                     f"{_note_value(loaded, key, pair) if loaded.get('search') else '–'} | {limits} | {marks} |")
    noise = results.get("noise", {})
    head = (f"{results['notes']:,} notes, SQLite {results['sqlite']}; commit {results['machine'].get('commit')}, "
            f"{results['seconds']:.0f} s, calibration loop {lookup(noise, 'start.loop_ms.median')} ms, "
            f"drift {noise.get('drift_pct')} % / jitter {noise.get('jitter_pct')} %")
    return head + "\n\n" + "\n".join(lines)


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "results"
    runs = {s: json.loads((folder / f"{s}.json").read_text()) for s in SIZES if (folder / f"{s}.json").is_file()}
    notes = json.loads((folder / "notes.json").read_text()) if (folder / "notes.json").is_file() else None
    if not runs and notes is None:
        sys.exit(f"report.py: error: no small/medium/large/xlarge or notes JSON in {folder}; "
                 "run benchmarks/run.py or benchmarks/notes_bench.py first")
    for size in SIZES:
        if size in runs:
            print(f"### {size}\n\n{size_table(runs[size])}\n")
    if len(runs) >= 2:
        print(f"### Growth\n\n{growth_table(runs)}\n")
    if notes is not None:
        print(f"### Notes\n\n{notes_table(notes)}")


if __name__ == "__main__":
    main()
