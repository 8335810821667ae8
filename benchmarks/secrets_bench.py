"""What the secrets check (core/secrets.py) costs: `check` of a whole tree with it and without it
(alternated in one process, so both share the machine's noise; without it, `checks.find_secrets`
finds nothing), the import of detect-secrets, and the re-check of one file after an edit.

    .venv/bin/python benchmarks/secrets_bench.py --size large --runs 5   # prints the JSON

Targets (issue 28): the tree's check within 1.3x of the check without secrets; one file's re-check
(its secrets, and its whole `check_content`) <= 20 ms.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from generate import ensure_tree
from timing import median

from memory_lens.core import checks
from memory_lens.core.agents.budget import check_targets
from memory_lens.core.merge import load_memory
from memory_lens.core.secrets import find_secrets
from memory_lens.core.settings import Settings

IMPORT = "import time; t = time.perf_counter(); {}; print(time.perf_counter() - t)"


def import_ms(runs: int) -> float:
    """Median milliseconds to import the detectors and make them, in a fresh interpreter."""
    code = IMPORT.format("from memory_lens.core.secrets import _detectors; _detectors()")
    return median([float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                        check=True).stdout) * 1000 for _ in range(runs)])


def tree_check(root: Path, settings: Settings, runs: int) -> dict:
    """Median seconds of the tree's check with and without the secrets check, alternated."""
    find_secrets("")  # the import is measured apart
    with_s, without = [], []
    for _ in range(runs):
        for bucket, finder in ((with_s, find_secrets), (without, lambda text: [])):
            checks.find_secrets = finder
            started = time.perf_counter()
            report = check_targets([root], settings)
            bucket.append(time.perf_counter() - started)
    checks.find_secrets = find_secrets
    found = sum(f.code == checks.SECRET for f in report.findings)
    return {"with_s": round(median(with_s), 3), "without_s": round(median(without), 3),
            "ratio": round(median(with_s) / median(without), 3), "files": len(report.files), "secret_findings": found}


def one_file(root: Path, settings: Settings, runs: int) -> dict:
    """The largest memory file of the tree: its secrets, and its whole check, as after an edit."""
    path = max(root.rglob("GEMINI.md"), key=lambda p: p.stat().st_size)
    text = path.read_text(encoding="utf-8")
    general = checks.general_sources(load_memory(path.parent, settings), path)

    def ms(fn) -> float:
        times = []
        for _ in range(runs * 10):
            started = time.perf_counter()
            fn()
            times.append((time.perf_counter() - started) * 1000)
        return round(median(times), 2)

    with_secrets = ms(lambda: checks.check_content(path, text, general, settings))
    checks.find_secrets = lambda text: []
    without = ms(lambda: checks.check_content(path, text, general, settings))
    checks.find_secrets = find_secrets
    return {"bytes": len(text.encode()), "secrets_ms": ms(lambda: find_secrets(text)),
            "check_content_ms": with_secrets, "check_content_without_secrets_ms": without}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="large", choices=["small", "medium", "large", "xlarge"])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    root, _ = ensure_tree(args.size)
    settings = Settings()
    result = {"size": args.size, "import_ms": round(import_ms(args.runs), 1),
              "check": tree_check(root, settings, args.runs), "edit": one_file(root, settings, args.runs)}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
