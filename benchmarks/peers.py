"""Gemini CLI's own memory loader on the same tree: `@google/gemini-cli-core` from npm, installed
once into the benchmark cache (outside the repository) and driven by `peer.mjs`.

0.40.0 still has the full downward discovery the CLI ran at startup (`loadServerHierarchicalMemory`,
200-directory cap by default); 0.61.0 loads memory upward from a file on demand
(`loadJitSubdirectoryMemory`). Both are skipped, with the reason, when Node or npm is missing or
the install fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

PACKAGE = "@google/gemini-cli-core"
DISCOVERY_VERSION = "0.40.0"
UPWARD_VERSION = "0.61.0"
HERE = Path(__file__).resolve().parent


def install(cache: Path, version: str, package: str = PACKAGE, folder: str = "peers") -> Path:
    """The installed directory of npm PACKAGE at VERSION under CACHE/FOLDER (installed on first use)."""
    prefix = cache / folder / version
    pkg = prefix / "node_modules" / package
    if (pkg / "package.json").is_file():
        return pkg
    prefix.mkdir(parents=True, exist_ok=True)
    (prefix / "package.json").write_text('{"private": true}\n')
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", "--omit=dev",
                    "--loglevel=error", f"{package}@{version}"], cwd=prefix, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=900)
    return pkg


def run_job(pkg: Path, job: dict, home: Path, timeout: float = 900) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(job, fh)
    try:
        env = {"HOME": str(home), "PATH": os.environ.get("PATH", ""), "NODE_ENV": "production"}
        out = subprocess.run(["node", str(HERE / "peer.mjs"), str(pkg), fh.name], env=env, check=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    finally:
        Path(fh.name).unlink(missing_ok=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_peers(root: Path, manifest: dict, cache: Path, runs: int, passes: int) -> dict:
    """Discovery (0.40.0) and upward lookup (0.61.0) timings, or why they were skipped."""
    if not shutil.which("node") or not shutil.which("npm"):
        return {"skipped": "Node.js and npm are not installed"}
    result: dict = {"package": PACKAGE}
    with tempfile.TemporaryDirectory() as home:
        try:
            pkg = install(cache, DISCOVERY_VERSION)
            found = run_job(pkg, {"mode": "discovery", "root": str(root), "runs": runs, "maxDirs": [200, None]},
                            Path(home))
            result["discovery"] = {"version": DISCOVERY_VERSION, **found}
        except Exception as err:  # keep the rest of the run
            result["discovery"] = {"version": DISCOVERY_VERSION, "skipped": _why(err)}
        try:
            pkg = install(cache, UPWARD_VERSION)
            files = [str(root / p) for p in manifest["sample_files"]]
            found = run_job(pkg, {"mode": "upward", "root": str(root), "files": files, "passes": passes + 1},
                            Path(home))
            result["upward"] = {"version": UPWARD_VERSION, **found}
        except Exception as err:
            result["upward"] = {"version": UPWARD_VERSION, "skipped": _why(err)}
    return result


def _why(err: Exception) -> str:
    if isinstance(err, subprocess.CalledProcessError):
        tail = (err.stderr or "").strip().splitlines()[-3:]
        return f"{' '.join(map(str, err.cmd[:3]))} failed: {' | '.join(tail)}"
    return f"{type(err).__name__}: {err}"
