"""`memory/explain` for the open file over stdio on the large tree, then with `add_claude_rules`' 200
rules files (target: `explain.open_file.p99_ms` <= 10 on the large tree, docs/performance.md).

    .venv/bin/python benchmarks/open_file_bench.py                      # this checkout, 3 rounds
    .venv/bin/python benchmarks/open_file_bench.py --old /tmp/old/server
    .venv/bin/python benchmarks/open_file_bench.py --method memory/effective --agent claude  # issue 25

--agent is sent with each request (`memory/effective`'s target: `effective_claude.open_file.p99_ms`
<= 2 with the 200 rules). --tree is a copy of the large tree (`cp -a` of
~/.cache/memory-lens-bench/trees/large-v1 and its `.manifest.json` beside it), to leave the
shared one alone while others measure.

--old is the `server` folder of another checkout (`git archive main server | tar -x -C /tmp/old`):
each round then runs a server with that folder first on PYTHONPATH, then one of this checkout's,
so both see the same load. Each round is `lsp_bench.Session.open_file` (10 sample files, each
asked 20 times, 3 warm passes after a filling one): p50 / p95 / p99 and the passes' p99 spread.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
from pathlib import Path

import lsp_bench
from generate import ensure_tree
from lsp_bench import Session, add_claude_rules


def one_server(root: Path, manifest: dict, method: str, server: str | None, **params: str) -> dict:
    env = lsp_bench.server_env

    def with_path(global_dir: Path, **extra: str) -> dict[str, str]:
        got = env(global_dir, **extra)
        if server:
            got["PYTHONPATH"] = server + os.pathsep + got.get("PYTHONPATH", "")
        return got

    lsp_bench.server_env = with_path
    tmp = Path(tempfile.mkdtemp(prefix="memory-lens-bench-"))
    try:
        (tmp / "global").mkdir()
        session = Session(root, manifest, tmp / "global", tmp / "server.log")
        try:
            session.index()
            out = {"large": session.open_file(method, **params)}
            rules = add_claude_rules(root)
            try:
                out["200 rules"] = session.open_file(method, **params)
            finally:
                shutil.rmtree(rules)
            return out
        finally:
            session.close()
    finally:
        lsp_bench.server_env = env
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", help="the server folder of the code to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--method", default="memory/explain")
    parser.add_argument("--agent", help="the agent to ask memory/effective for (claude, ...)")
    parser.add_argument("--tree", type=Path, help="a copy of the large tree to use instead of the cached one")
    args = parser.parse_args()
    if args.tree:
        root, manifest = args.tree, json.loads(args.tree.with_name(args.tree.name + ".manifest.json").read_text())
    else:
        root, manifest = ensure_tree("large", quiet=True)
    params = {"agent": args.agent} if args.agent else {}
    sides = (("old", args.old), ("new", None)) if args.old else (("this", None),)
    for round_ in range(1, args.rounds + 1):
        for name, server in sides:
            for tree, got in one_server(root, manifest, args.method, server, **params).items():
                spread = got["open_runs_p99_ms"]
                print(f"round {round_} {name:4} {tree:9} p50 {got['p50_ms']:7.2f}  p95 {got['p95_ms']:7.2f}  "
                      f"p99 {got['p99_ms']:7.2f} ms (p99 runs {spread['min']}-{spread['max']})  "
                      f"load {os.getloadavg()[0] if hasattr(os, 'getloadavg') else '?'}", flush=True)


if __name__ == "__main__":
    main()
