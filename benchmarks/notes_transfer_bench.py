#!/usr/bin/env python3
"""Backup, restore, export and import of N notes: the time per note at each size, so that a cost
growing with the archive shows as a rising ratio.

    .venv/bin/python benchmarks/notes_transfer_bench.py --sizes 250 2000 10000 --out benchmarks/results/notes_transfer.json
    .venv/bin/python benchmarks/notes_transfer_bench.py --sizes 50000 --cli   # issue 23 item 6: <= 60 s

For each size: the notes of `notes_bench.make_notes` (half project, half global) are written into
a project and a global notes directory, backed up (`.tar.gz`) and exported (JSON Lines); then the
archive is restored, and the export imported, each into a new project and global directory with
a new index (what a new machine does). `--cli` also times `memory-lens notes restore` and
`notes import` as processes. Every timing is wall-clock, one run each, with the CPU time of the
process beside the in-process ones (what the work costs, leaving out the wait for a busy core)
and the load average (the machine is shared). Nothing is written outside a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from notes_bench import make_notes, write_notes  # noqa: E402

MEMORY_LENS = [sys.executable, "-m", "memory_lens"]


def _stores(tmp: Path, name: str):
    from memory_lens.core.notes.locations import Layout, NotesSettings
    from memory_lens.core.notes.store import NotesStore

    project = tmp / name
    (project / ".git").mkdir(parents=True)
    settings = NotesSettings(Layout.MEMORY_LENS, tmp / f"{name}-global")
    return project, settings, NotesStore(settings, project, index_dir=tmp / f"{name}-index")


def _timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def _timed_cpu(fn):
    """(wall-clock seconds, CPU seconds of this process, result) of FN."""
    cpu = time.process_time()
    seconds, result = _timed(fn)
    return seconds, time.process_time() - cpu, result


def one_size(count: int, cli: bool) -> dict:
    from memory_lens.core.discovery import Scope
    from memory_lens.core.notes import transfer

    both = [Scope.PROJECT, Scope.GLOBAL]
    with tempfile.TemporaryDirectory(prefix="ml-transfer-") as name:
        tmp = Path(name)
        project, settings, source = _stores(tmp, "source")
        for directory in (settings.project_dir(project), settings.global_dir):
            directory.mkdir(parents=True)
        write_notes(make_notes(count), {"project": settings.project_dir(project), "global": settings.global_dir})
        archive = tmp / "notes.tar.gz"
        backup_s, _ = _timed(lambda: transfer.backup(source, archive, both))
        export_s, (text, _, _) = _timed(lambda: transfer.export_notes(source, both, "jsonl"))
        source.close()
        (tmp / "notes.jsonl").write_text(text, encoding="utf-8")
        out: dict = {"notes": count, "backup_s": round(backup_s, 3), "export_s": round(export_s, 3)}
        for kind, run in (("restore", lambda s: transfer.restore(s, archive, both)),
                          ("import", lambda s: transfer.import_notes(s, text))):
            _, _, store = _stores(tmp, kind)
            seconds, cpu, report = _timed_cpu(lambda: run(store))
            store.close()
            assert len(report.created) == count and report.complete, report.summary()
            out[f"{kind}_s"] = round(seconds, 3)
            out[f"{kind}_ms_per_note"] = round(seconds * 1000 / count, 3)
            out[f"{kind}_cpu_ms_per_note"] = round(cpu * 1000 / count, 3)
        if cli:
            for kind, source_file in (("restore", archive), ("import", tmp / "notes.jsonl")):
                project, settings, store = _stores(tmp, f"cli-{kind}")
                store.close()
                env = {**os.environ, "XDG_CACHE_HOME": str(tmp / f"cli-{kind}-cache")}
                seconds, proc = _timed(lambda: subprocess.run(
                    [*MEMORY_LENS, "notes", kind, str(source_file), "--notes-dir", str(settings.global_dir)],
                    cwd=project, env=env, capture_output=True, text=True))
                assert proc.returncode == 0, proc.stderr
                out[f"cli_{kind}_s"] = round(seconds, 3)
        out["load_average"] = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[250, 2000, 10000])
    parser.add_argument("--cli", action="store_true", help="also time the CLI processes")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    runs = []
    for count in args.sizes:
        runs.append(one_size(count, args.cli))
        print(json.dumps(runs[-1]), flush=True)
    results = {"runs": runs}
    if len(runs) > 1:  # linear: the time per note at the largest size over that at the smallest
        results["growth"] = {kind: round(runs[-1][f"{kind}_ms_per_note"] / runs[0][f"{kind}_ms_per_note"], 2)
                             for kind in ("restore", "import")}
        print(json.dumps(results["growth"]))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
