"""Measurements over the real language server (`python -m memory_lens serve`) on stdio:
initialize, indexing and peak memory, `memory/effective` round trips, a change on disk until the
republished diagnostics and `memory/didChange`, typing in an open memory file, and a refresh."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsp_client import ChildPeaks, LspClient, Notification, peak_rss_mb, rss_mb
from timing import median, ms, percentile, spread

from memory_lens.lsp.convert import path_to_uri

DIAGNOSTICS = "textDocument/publishDiagnostics"
DID_CHANGE = "memory/didChange"
DUPLICATE_PAIR = b"- Benchmark edit: an entry written twice\n- Benchmark edit: an entry written twice\n"
# Like VS Code: the client registers file watchers (so the server does not rescan the workspace
# periodically), but the benchmark sends file events only where it says so (`change` with events).
CAPABILITIES: dict[str, Any] = {
    "textDocument": {"synchronization": {"didSave": True}, "publishDiagnostics": {"versionSupport": True}},
    "workspace": {"workspaceFolders": True, "configuration": False,
                  "didChangeWatchedFiles": {"dynamicRegistration": True, "relativePatternSupport": True}},
    "window": {"workDoneProgress": False},
}


def server_command() -> list[str]:
    return [sys.executable, "-m", "memory_lens", "serve"]


def server_env(global_dir: Path, **extra: str) -> dict[str, str]:
    """The server's environment. Its user cache directory (the entry cache, `core/entry_cache.py`)
    is next to GLOBAL_DIR, empty for the run's first server: later servers of the run start warm."""
    env = dict(os.environ, MEMORY_LENS_GLOBAL_DIR=str(global_dir), XDG_CACHE_HOME=str(global_dir.parent / "cache"))
    env.pop("MEMORY_LENS_FILENAMES", None)
    env.pop("MEMORY_LENS_WATCHER", None)
    env.update(extra)
    return env


def initialize_params(root: Path) -> dict:
    uri = path_to_uri(root)
    return {"processId": os.getpid(), "rootUri": uri, "capabilities": CAPABILITIES,
            "workspaceFolders": [{"uri": uri, "name": root.name}],
            "clientInfo": {"name": "memory-lens-bench"}}


def bench_initialize(global_dir: Path, runs: int) -> dict:
    """Process start to the initialize response: what an editor waits for before anything works.
    `import_floor_ms`: a Python process that only imports pygls (and with it the LSP type
    definitions of lsprotocol), which any pygls server pays before it can answer, timed right
    after each start. `ratio_to_floor`: the median of each start's time over the floor timed
    next to it (the VM's speed moves by tens of percent within seconds; a start and its floor
    share their moment)."""
    times, floor = [], []
    with tempfile.TemporaryDirectory() as empty:
        for _ in range(runs):
            client = LspClient(server_command(), server_env(global_dir))
            client.request("initialize", initialize_params(Path(empty)))
            times.append(time.perf_counter() - client.started)
            client.close()
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import pygls.lsp.server"], check=True)
            floor.append(time.perf_counter() - started)
    return {"ms": ms(median(times)), "import_floor_ms": ms(median(floor)),
            "ratio_to_floor": round(median([t / f for t, f in zip(times, floor)]), 3),
            "runs_ms": spread([t * 1000 for t in times])}


class Session:
    """One server over the benchmark tree, with helpers for each measurement."""

    def __init__(self, root: Path, manifest: dict, global_dir: Path, log_path: Path, **env: str) -> None:
        self.root, self.manifest = root, manifest
        self._log = open(log_path, "w")
        self.client = LspClient(server_command(), server_env(global_dir, **env), stderr=self._log)
        self.rng = random.Random(7)

    def close(self) -> None:
        self.client.close()
        self._log.close()

    def _since(self, method: str, uri: str | None, since: int, timeout: float,
                version: int | None = None) -> Notification | None:
        def match(note: Notification) -> bool:
            if note.method != method:
                return False
            params = note.params or {}
            if method == DIAGNOSTICS:
                return params.get("uri") == uri and (version is None or params.get("version") == version)
            return uri is None or uri in params.get("uris", [])
        return self.client.wait_for(match, timeout, since)

    def index(self) -> dict:
        """initialize + initialized until the first `memory/didChange` (scan, checks, publishing)."""
        c = self.client
        with ChildPeaks(c.proc.pid) as helpers:  # the scan's helper processes count too
            c.request("initialize", initialize_params(self.root))
            c.notify("initialized", {})
            started = time.perf_counter()
            done = self._since(DID_CHANGE, None, 0, timeout=900)
        if done is None:
            raise RuntimeError("the server did not finish indexing")
        published = {n.params["uri"] for n in c.notifications if n.method == DIAGNOSTICS}
        server = peak_rss_mb(c.proc.pid) or float("nan")
        return {"index_ms": ms(done.at - started), "published_files": len(published),
                # The server's peak plus what its scan helpers add (their private memory at their
                # peaks: an upper bound, the peaks need not coincide).
                "rss_mb": round(server + helpers.private_mb, 1), "rss_server_mb": round(server, 1),
                "rss_helpers_private_mb": round(helpers.private_mb, 1),
                "rss_helpers_resident_mb": round(helpers.resident_mb, 1), "helper_processes": len(helpers.peaks),
                "rss_now_mb": round(rss_mb(c.proc.pid) or float("nan"), 1)}

    def effective(self, passes: int, agent: str | None = None) -> dict:
        """`memory/effective` (as AGENT loads it, default gemini) for every sample file: one pass on
        first use, then warm passes."""
        uris = [path_to_uri(self.root / p) for p in self.manifest["sample_files"]]
        extra = {} if agent is None else {"agent": agent}
        per_pass, first_call = [], None
        for _ in range(passes + 1):
            times = []
            for uri in uris:
                started = time.perf_counter()
                self.client.request("memory/effective", {"textDocument": {"uri": uri}, **extra})
                times.append(time.perf_counter() - started)
            first_call = times[0] if first_call is None else first_call
            per_pass.append((percentile(times, 50), percentile(times, 99)))
        warm = per_pass[1:]
        return {"p50_ms": ms(median([p for p, _ in warm])), "p99_ms": ms(median([p for _, p in warm])),
                "first_call_ms": ms(first_call), "first_pass_p50_ms": ms(per_pass[0][0]),
                "first_pass_p99_ms": ms(per_pass[0][1]), "requests": len(uris), "warm_passes": len(warm),
                "warm_p99_runs_ms": spread([p * 1000 for _, p in warm])}

    def explain(self, passes: int) -> dict:
        """`memory/explain` (every agent) for every sample file: one pass on first use, then warm passes."""
        uris = [path_to_uri(self.root / p) for p in self.manifest["sample_files"]]
        per_pass = []
        for _ in range(passes + 1):
            times = []
            for uri in uris:
                started = time.perf_counter()
                self.client.request("memory/explain", {"textDocument": {"uri": uri}})
                times.append(time.perf_counter() - started)
            per_pass.append((percentile(times, 50), percentile(times, 99)))
        warm = per_pass[1:]
        return {"p50_ms": ms(median([p for p, _ in warm])), "p99_ms": ms(median([p for _, p in warm])),
                "first_pass_p99_ms": ms(per_pass[0][1]), "requests": len(uris), "warm_passes": len(warm),
                "warm_p99_runs_ms": spread([p * 1000 for _, p in warm])}

    def open_file(self, method: str, files: int = 10, repeats: int = 20, passes: int = 3, **params: Any) -> dict:
        """METHOD (`memory/effective`, `memory/explain`) for the open file, as an editor asks for it
        again and again (each change, focus, re-render): each of FILES sample files opened, then
        asked REPEATS times; per pass p50/p95/p99 over every request; the medians of the passes
        and the spread of their p99 (`open_runs_p99_ms`)."""
        uris = [path_to_uri(self.root / p) for p in self.manifest["sample_files"][:files]]
        for uri in uris:
            self.client.notify("textDocument/didOpen", {"textDocument": {
                "uri": uri, "languageId": "plaintext", "version": 1, "text": ""}})
        per_pass = []
        for _ in range(passes + 1):
            times = []
            for uri in uris:
                for _ in range(repeats):
                    started = time.perf_counter()
                    self.client.request(method, {"textDocument": {"uri": uri}, **params})
                    times.append(time.perf_counter() - started)
            per_pass.append(tuple(percentile(times, q) for q in (50, 95, 99)))
        for uri in uris:
            self.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        warm = per_pass[1:]  # the first pass fills what is kept
        return {"p50_ms": ms(median([p[0] for p in warm])), "p95_ms": ms(median([p[1] for p in warm])),
                "p99_ms": ms(median([p[2] for p in warm])), "files": len(uris), "repeats": repeats,
                "warm_passes": len(warm), "open_runs_p99_ms": spread([p[2] * 1000 for p in warm])}

    def _change_once(self, path: Path, events: bool, timeout: float = 20) -> tuple[float, float]:
        """Edit PATH on disk; seconds until its diagnostics and `memory/didChange`; then restore."""
        uri = path_to_uri(path)
        results = []
        old = path.read_bytes()
        for data in (old + DUPLICATE_PAIR, old):
            time.sleep(self.rng.uniform(0, 0.5))  # a random phase against the server's poll
            mark = len(self.client.notifications)
            started = time.perf_counter()
            path.write_bytes(data)
            if events:
                self.client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri, "type": 2}]})
            diag = self._since(DIAGNOSTICS, uri, mark, timeout=timeout)
            changed = self._since(DID_CHANGE, uri, mark, timeout=timeout)
            if diag is None or changed is None:
                path.write_bytes(old)
                raise RuntimeError(f"no update for {path} within {timeout:g} s")
            results.append((diag.at - started, changed.at - started))
        return results[0]

    def change(self, samples: int, events: bool) -> dict:
        paths = [self.root / p for p in self.manifest["change_files"][:samples]]
        diag, changed = zip(*(self._change_once(p, events) for p in paths))
        return {"p50_ms": ms(median(diag)), "p99_ms": ms(percentile(diag, 99)),
                "did_change_p50_ms": ms(median(changed)), "samples": len(diag)}

    def change_root(self) -> float:
        """The worst case: the root memory file changes, so every memory file is rechecked."""
        return ms(self._change_once(self.root / "GEMINI.md", events=True, timeout=300)[1])

    def typing(self, edits: int) -> dict:
        """didChange in an open memory file until its republished diagnostics (that version)."""
        path = self.root / self.manifest["change_files"][0]
        uri, text = path_to_uri(path), path.read_text()
        mark = len(self.client.notifications)
        self.client.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "markdown", "version": 1, "text": text}})
        self._since(DIAGNOSTICS, uri, mark, timeout=20, version=1)
        times = []
        for version in range(2, edits + 2):
            new = text + DUPLICATE_PAIR.decode() if version % 2 == 0 else text
            mark = len(self.client.notifications)
            started = time.perf_counter()
            self.client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                          "contentChanges": [{"text": new}]})
            note = self._since(DIAGNOSTICS, uri, mark, timeout=20, version=version)
            if note is None:
                raise RuntimeError("no diagnostics after didChange")
            times.append(note.at - started)
        self.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        return {"p50_ms": ms(median(times)), "p99_ms": ms(percentile(times, 99)), "edits": len(times)}

    def refresh(self, runs: int) -> float:
        """`memoryLens.server.refresh`: a full rescan and recheck, answered when done."""
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            self.client.request("workspace/executeCommand",
                                {"command": "memoryLens.server.refresh", "arguments": [{}]}, timeout=900)
            times.append(time.perf_counter() - started)
        return ms(median(times))

    def peak_rss(self) -> float:
        return round(peak_rss_mb(self.client.proc.pid) or float("nan"), 1)


def add_claude_rules(root: Path, count: int = 200) -> Path:
    """COUNT Claude Code rules files in ROOT's `.claude/rules/` (ROOT has no `.claude`: remove the
    folder returned after), every other one with `paths:` globs, a third in a subfolder."""
    top = root / ".claude"
    top.mkdir()
    folder = top / "rules"
    for i in range(count):
        path = folder / ("nested" if i % 3 == 0 else "") / f"rule-{i:03}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        head = f'---\npaths:\n  - "src/**/*.py"\n  - "packages/p{i}/**"\n---\n' if i % 2 else ""
        path.write_text(head + f"# Rule {i}\n" + "".join(f"- rule {i} line {j}\n" for j in range(10)))
    return top
