"""agnix (a Rust linter for agent files) and `memory-lens check` over the same whole tree, side by side.

agnix is installed once with pip into a virtual environment of its own under the benchmark cache
(pinned version; skipped, with the reason, when it cannot be installed). Both commands are run on the
tree's root, alternated, RUNS + 1 times: the first run of each is reported apart (`first_ms`: caches may be
cold then; both run with a fresh HOME and cache directory), the medians are of the others. Peak RSS
is the process's own (`wait4`), the largest over the runs, plus its child processes' private
memory (Memory Lens's scan helpers, as `rss_mb` counts them; agnix starts none).
What each checks differs: agnix validates every file it knows as an agent file (`files_checked`: on the
large tree 8,670, most of its 9,278 `*.md` files, since any markdown file may be a skill, agent or
memory file, and its `plugin.json` files), with its own rules (references, XML tags, plugin
manifests...); `memory-lens check` finds the GEMINI.md files the agent loads (1,000 there: `.gitignore`
and `.geminiignore` honoured) and checks each against the files above it (duplicates, budget, imports).

    .venv/bin/python benchmarks/agnix_peer.py --size large --runs 5   # alone, prints the JSON
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

from lsp_client import ChildPeaks
from timing import median

VERSION = "0.59.3"


def install(cache: Path, version: str = VERSION) -> Path:
    """The agnix executable of VERSION in its own venv under CACHE (installed on first use)."""
    prefix = cache / "peers-agnix" / version
    exe = prefix / ("Scripts/agnix.exe" if os.name == "nt" else "bin/agnix")
    if not exe.is_file():
        venv.create(prefix, with_pip=True, clear=True)
        python = prefix / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"agnix=={version}"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=900)
    return exe


def _run(command: list[str], env: dict, out: Path) -> tuple[float, float]:
    """(seconds, peak RSS in MiB) of COMMAND run to its end, its output in OUT: its own peak, plus its
    children's private memory."""
    started = time.perf_counter()
    with out.open("wb") as fh:
        proc = subprocess.Popen(command, env=env, stdout=fh, stderr=subprocess.DEVNULL)
    with ChildPeaks(proc.pid) as peaks:
        _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4
    if proc.returncode not in (0, 1):  # 1: findings reported
        raise RuntimeError(f"{Path(command[0]).name} {' '.join(command[1:3])}... exited with {proc.returncode}")
    rss = usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
    return seconds, rss + peaks.private_mb


def bench_agnix(root: Path, cache: Path, runs: int) -> dict:
    """agnix and `memory-lens check` of ROOT, alternated; `ratio_vs_agnix` = Memory Lens's median / agnix's."""
    if not hasattr(os, "wait4"):
        return {"skipped": "needs os.wait4 (Unix) for the peak RSS"}
    try:
        agnix = install(cache)
    except Exception as err:  # keep the rest of the run
        tail = (getattr(err, "stderr", None) or str(err)).strip().splitlines()[-2:]
        return {"skipped": f"agnix {VERSION} could not be installed: {' | '.join(tail)}"}
    times: dict = {"agnix": [], "memory_lens": []}
    rss: dict = {"agnix": [], "memory_lens": []}
    with tempfile.TemporaryDirectory(prefix="memory-lens-agnix-") as tmp:
        (Path(tmp) / "global").mkdir()
        env = {"PATH": os.environ.get("PATH", ""), "HOME": tmp, "XDG_CACHE_HOME": str(Path(tmp) / "cache"),
               "XDG_CONFIG_HOME": str(Path(tmp) / "config"),
               **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}}  # another checkout's code
        commands = {
            "agnix": [str(agnix), "--max-files", "0", "--format", "json", str(root)],
            "memory_lens": [sys.executable, "-m", "memory_lens", "check", "--format", "json", "--filename",
                            "GEMINI.md", "--global-dir", str(Path(tmp) / "global"), str(root)],
        }
        for _ in range(runs + 1):
            for name, command in commands.items():
                seconds, peak = _run(command, env, Path(tmp) / f"{name}.json")
                times[name].append(seconds * 1000)
                rss[name].append(peak)
        checked = json.loads((Path(tmp) / "agnix.json").read_text()).get("files_checked")
    out: dict = {"version": VERSION, "runs": runs, "load_avg_1m": round(os.getloadavg()[0], 2),
                 "agnix_files_checked": checked}
    for name in commands:
        out[name] = {"ms": round(median(times[name][1:]), 1), "first_ms": round(times[name][0], 1),
                     "all_ms": [round(t, 1) for t in times[name]], "rss_mb": round(max(rss[name]), 1)}
    out["ratio_vs_agnix"] = round(out["memory_lens"]["ms"] / out["agnix"]["ms"], 3)
    return out


if __name__ == "__main__":
    import argparse

    from generate import cache_dir, ensure_tree

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", choices=["small", "medium", "large", "xlarge"], default="large")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    tree, _ = ensure_tree(args.size)
    print(json.dumps(bench_agnix(tree, cache_dir(), args.runs), indent=1))
