"""Hostile memory files against every view: is the work bounded? (issue 23, items 1 and 8)

Two scenarios, with real processes in a throw-away project under a temp directory (its own HOME,
lock and cache directories):

  bomb   an import cycle bomb, GEMINI.md -> a.md -> a.md ..., each file --lines lines of `@a.md`
         (default 1,000: two 6 KB files; 83,000 makes 1 MB), and CLAUDE.md -> c.md the same way.
         Runs `show` (text, json, annotated, --agent claude), `check`, and over the language server
         `memory/effective`, hover, code lens, document links and the diagnostics of GEMINI.md.
  storm  a 10 MB open GEMINI.md of one line repeated: `documentSymbol`, then 30 full and 30
         incremental changes of the buffer (one every 100 ms; each incremental one inserts an
         `@missing-N.md` line), with a `memory/effective` request 20 ms after each answer. After
         it, the buffer's `import-not-found` diagnostics must be on the lines where the client's
         own copy of the text has those imports: the server's text is the client's.

Checks outcomes, not times: every output is bounded (under --max-output bytes), the bomb's views
carry Memory Lens's one import-bound marker or warning, every process stays under --max-rss MB
(peak resident memory, where the system reports it) and ends within --timeout seconds (a safety
net against a hang, not a timing assertion). Prints each step's wall time and peak memory, and
the storm's `memory/effective` latencies (p50, p95, p99, max) with the buffer open and no changes,
during the full changes and during the incremental ones. Exits 1 when a check fails.

Not collected by pytest (the name does not start with `test_`). Run it from the repository root:

    .venv/bin/python tests/stress/bounded_work.py
    .venv/bin/python tests/stress/bounded_work.py --lines 83000 --only bomb
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

MARKER = "Memory Lens follows at most"
BOUND = 5000  # core.imports.MAX_IMPORT_MENTIONS


def command() -> list[str]:
    script = Path(sys.executable).parent / "memory-lens"
    return [str(script)] if script.exists() else [sys.executable, "-m", "memory_lens"]


def sandbox_env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_LENS_")}
    env.update(HOME=str(root / "home"), MEMORY_LENS_LOCK_DIR=str(root / "locks"),
               XDG_CACHE_HOME=str(root / "cache"), XDG_CONFIG_HOME=str(root / "config"),
               XDG_DATA_HOME=str(root / "data"), PYTHONIOENCODING="utf-8")
    for d in ("home", "locks", "cache", "config", "data"):
        (root / d).mkdir(parents=True, exist_ok=True)
    return env


def cpu_seconds(pid: int) -> float | None:
    """The CPU time a running process has used so far (Linux)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def peak_rss_mb(pid: int) -> float | None:
    """The peak resident memory of a running process (Linux), in MB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


class Report:
    def __init__(self, max_rss: float, max_output: int) -> None:
        self.failures: list[str] = []
        self.max_rss, self.max_output = max_rss, max_output

    def check(self, ok: bool, what: str) -> None:
        if not ok:
            self.failures.append(what)
            print(f"  FAILED: {what}", flush=True)

    def step(self, name: str, seconds: float, rss: float | None, size: int | None = None) -> None:
        print(f"  {name}: {seconds:.2f} s" + (f", peak {rss:.0f} MB" if rss is not None else "")
              + (f", {size} bytes" if size is not None else ""), flush=True)
        if rss is not None:
            self.check(rss <= self.max_rss, f"{name}: peak memory {rss:.0f} MB over {self.max_rss:.0f} MB")
        if size is not None:
            self.check(size <= self.max_output, f"{name}: {size} bytes of output, over {self.max_output}")


def run_cli(report: Report, env: dict[str, str], cwd: Path, timeout: float, *args: str) -> str:
    """Run `memory-lens ARGS` (killed after TIMEOUT seconds); its output, once its peak memory
    and the output's size are checked."""
    name = "memory-lens " + " ".join(args)
    started = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([*command(), *args], cwd=cwd, env=env, stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        try:
            if hasattr(os, "wait4"):
                _, status, usage = os.wait4(proc.pid, 0)
                proc.returncode = os.waitstatus_to_exitcode(status)
                rss: float | None = usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
                cpu = f" ({usage.ru_utime + usage.ru_stime:.2f} s of CPU)"
            else:
                proc.wait()
                rss, cpu = None, ""
        finally:
            timer.cancel()
        seconds = time.monotonic() - started
        out.seek(0)
        data = out.read()
        err.seek(0)
        why = err.read().decode("utf-8", "replace").strip().splitlines()[-1:]
    report.step(name + cpu, seconds, rss, len(data))
    report.check(seconds < timeout and proc.returncode in (0, 1), f"{name}: exit {proc.returncode} {why}")
    return data.decode("utf-8", "replace")


class Client:
    """A minimal LSP client over the server's stdio: requests with ids, answers to the server's own
    requests (registrations, configuration, progress), notifications collected."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen([*command(), "serve"], cwd=cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.answers: dict[int, queue.Queue] = {}
        self.notes: queue.Queue = queue.Queue()
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _send(self, message: dict[str, Any]) -> None:
        self.send_parts([json.dumps(message).encode()])

    def send_parts(self, parts: list[bytes]) -> None:
        """Send one message whose body is PARTS joined."""
        with self.lock:
            assert self.proc.stdin is not None
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % sum(map(len, parts)))
            for part in parts:
                self.proc.stdin.write(part)
            self.proc.stdin.flush()

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(stream.read(length or 0))
            if "method" in message and "id" in message:  # the server asks: answer plainly
                result = [None] * len(message["params"]["items"]) if message["method"] == "workspace/configuration" else None
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
            elif "id" in message:
                self.answers.pop(message["id"]).put((time.monotonic(), message))
            else:
                self.notes.put(message)

    def request(self, method: str, params: Any) -> queue.Queue:
        with self.lock:
            self.next_id += 1
            rid = self.next_id
        answer: queue.Queue = queue.Queue()
        self.answers[rid] = answer
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        return answer

    def call(self, method: str, params: Any, timeout: float) -> tuple[float, Any, int]:
        """(seconds, result, size of the answer in bytes)."""
        started = time.monotonic()
        done, message = self.request(method, params).get(timeout=timeout)
        if "error" in message:
            raise RuntimeError(f"{method}: {message['error']}")
        return done - started, message["result"], len(json.dumps(message["result"]))

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def start(self, root: Path, timeout: float) -> None:
        caps = {"textDocument": {"documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
                                 "hover": {"contentFormat": ["markdown"]}},
                "workspace": {"configuration": True}}
        self.call("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": caps,
                                 "workspaceFolders": [{"uri": root.as_uri(), "name": "ws"}]}, timeout)
        self.notify("initialized", {})

    def diagnostics(self, uri: str, timeout: float, version: int | None = None) -> list:
        """The next diagnostics published for URI (of VERSION of its buffer, when given)."""
        deadline = time.monotonic() + timeout
        while True:
            note = self.notes.get(timeout=max(deadline - time.monotonic(), 0.01))
            if (note.get("method") == "textDocument/publishDiagnostics" and note["params"]["uri"] == uri
                    and version in (None, note["params"].get("version"))):
                return note["params"]["diagnostics"]

    def stop(self) -> float | None:
        rss = peak_rss_mb(self.proc.pid)
        cpu = cpu_seconds(self.proc.pid)
        if cpu is not None:
            print(f"  the language server used {cpu:.2f} s of CPU in all", flush=True)
        try:
            self.call("shutdown", None, 30)
            self.notify("exit", None)
            self.proc.wait(timeout=30)
        except Exception:  # noqa: BLE001 - a stuck server is killed; the report says so
            self.proc.kill()
            self.proc.wait()
        return rss


def limits(shown: dict[str, Any]) -> int:
    """How many mentions of a view's import trees have the status `limit`."""
    def count(nodes: list) -> int:
        return sum((n["status"] == "limit") + count(n["children"]) for n in nodes)
    return sum(count(s["imports"]) for s in shown["sources"])


def bomb(report: Report, root: Path, lines: int, timeout: float) -> None:
    env = sandbox_env(root)
    proj = root / "proj"
    (proj / ".git").mkdir(parents=True)
    (proj / "GEMINI.md").write_text("@a.md\n" * lines)
    (proj / "a.md").write_text("@a.md\n" * lines)
    (proj / "CLAUDE.md").write_text("@c.md\n" * lines)
    (proj / "c.md").write_text("@c.md\n@CLAUDE.md\n" * (lines // 2))
    size = sum(p.stat().st_size for p in proj.glob("*.md"))
    print(f"bomb: {lines} lines of `@a.md` in GEMINI.md and a.md, the same for CLAUDE.md ({size} bytes)")
    for args in (("show",), ("show", "--format", "annotated")):
        out = run_cli(report, env, proj, timeout, *args, ".")
        report.check(out.count(MARKER) == 1, f"show {' '.join(args[1:])}: one marker")
    shown = json.loads(run_cli(report, env, proj, timeout, "show", "--format", "json", "."))
    report.check(limits(shown) == 1 and shown["text"].count(MARKER) == 1, "show --format json: one marker")
    shown = json.loads(run_cli(report, env, proj, timeout, "show", "--agent", "claude", "--format", "json", "."))
    report.check(sum(MARKER in w for w in shown["warnings"]) == (lines * 2 > BOUND), "show --agent claude: warning")
    out = run_cli(report, env, proj, timeout, "check", "GEMINI.md")
    report.check("[import-depth]" in out and MARKER in out, "check: the import-depth finding")

    client = Client(env, proj)
    try:
        client.start(proj, timeout)
        uri = (proj / "GEMINI.md").as_uri()
        text = (proj / "GEMINI.md").read_text()
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "markdown",
                                                                "version": 1, "text": text}})
        doc = {"textDocument": {"uri": uri}}
        at = {**doc, "position": {"line": 0, "character": 1}}
        for method, params in (("memory/effective", doc), ("memory/effective", doc),
                               ("memory/effective", {**doc, "agent": "claude"}),
                               ("textDocument/hover", at), ("textDocument/codeLens", doc),
                               ("textDocument/documentLink", doc)):
            seconds, result, size = client.call(method, params, timeout)
            report.step(method + (" (claude)" if "agent" in params else ""), seconds, None, size)
            if method == "memory/effective" and "agent" not in params:
                report.check(limits(result) == 1 and result["text"].count(MARKER) == 1, f"{method}: one marker")
        started = time.monotonic()
        diags = client.diagnostics(uri, timeout)
        report.step("diagnostics of GEMINI.md", time.monotonic() - started, None, len(json.dumps(diags)))
        report.check(any(d.get("code") == "import-depth" and MARKER in d["message"] for d in diags),
                     "diagnostics: the import-depth diagnostic")
    finally:
        rss = client.stop()
    report.step("language server (all of the above)", 0.0, rss)


def storm(report: Report, root: Path, megabytes: int, timeout: float) -> None:
    env = sandbox_env(root)
    proj = root / "proj"
    (proj / ".git").mkdir(parents=True)
    (proj / "GEMINI.md").write_text("- keep\n")
    line = "- the same entry, written again and again\n"
    text = line * (megabytes * 1_000_000 // len(line))
    print(f"storm: a {len(text)}-byte open GEMINI.md of one line repeated; 30 full and 30 incremental changes")
    client = Client(env, proj)
    uri = (proj / "GEMINI.md").as_uri()
    # The full changes' bodies are built from the text escaped once, and written in parts: a
    # client thread encoding 10 MB of JSON would hold this process's GIL, and the reader thread
    # would see answers late.
    escaped = json.dumps(text).encode()[1:-1]
    phase = ["quiet"]
    try:
        client.start(proj, timeout)
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "markdown",
                                                                "version": 1, "text": text}})
        doc = {"textDocument": {"uri": uri}}
        seconds, result, size = client.call("textDocument/documentSymbol", doc, timeout)
        report.step("documentSymbol", seconds, None, size)
        report.check(len(result) <= 2000, "documentSymbol: at most 2000 symbols")
        latencies = probe(client, doc, timeout, phase, lambda done: done < 60)  # the same requests, no changes
        lines = text.splitlines(True)  # the client's text, changed as the server's should be

        def changes() -> None:  # one change every 100 ms, as an editor sends them
            for version in range(2, 62):
                head = b'{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": '
                head += json.dumps({"uri": uri, "version": version}).encode() + b', "contentChanges": ['
                if version < 32:
                    phase[0] = "full"
                    first = f"- version {version}\n"
                    client.send_parts([head + b'{"text": ' + json.dumps(first).encode()[:-1], escaped, b'"}]}}'])
                    lines[0] = first
                else:
                    phase[0] = "incremental"
                    at = {"line": version * 1000, "character": 0}
                    change = {"range": {"start": at, "end": at}, "text": f"@missing-{version}.md\n"}
                    client.send_parts([head + json.dumps(change).encode() + b"]}}"])
                    lines.insert(version * 1000, change["text"])
                time.sleep(0.1)
            phase[0] = "done"

        threading.Thread(target=changes, daemon=True).start()
        latencies += probe(client, doc, timeout, phase, lambda _: phase[0] != "done")
        started = time.monotonic()
        diags = client.diagnostics(uri, timeout, version=61)
        report.step("diagnostics after the storm", time.monotonic() - started, None, len(json.dumps(diags)))
        expected = {(n, t[1:-1]) for n, t in enumerate(lines) if t.startswith("@missing-")}
        found = {(d["range"]["start"]["line"], name.group()) for d in diags
                 if d.get("code") == "import-not-found" and (name := re.search(r"missing-[0-9]+\.md", d["message"]))}
        report.check(len(expected) == 30 and found == expected,
                     f"after the storm, the server's text is the client's (missing imports where the "
                     f"client has them: {len(found & expected)} of {len(expected)})")
        seconds, result, size = client.call("textDocument/documentSymbol", doc, timeout)
        report.step("documentSymbol after the storm", seconds, None, size)
        report.check(result[0]["name"] == "version 31", "documentSymbol after the storm: the last full change")
    finally:
        rss = client.stop()
    for name in ("quiet", "full", "incremental"):
        picked = sorted(seconds for seconds, when in latencies if when == name)
        pick = lambda q: picked[min(len(picked) - 1, int(q * len(picked)))] * 1000  # noqa: E731
        print(f"  memory/effective {STORM_PHASES[name]}: {len(picked)} requests, p50 {pick(0.5):.0f} ms, "
              f"p95 {pick(0.95):.0f} ms, p99 {pick(0.99):.0f} ms, max {picked[-1] * 1000:.0f} ms", flush=True)
    report.step("language server (storm)", 0.0, rss)


STORM_PHASES = {"quiet": "with the buffer open, no changes", "full": "during the 30 full changes",
                "incremental": "during the 30 incremental changes"}


def probe(client: Client, doc: dict[str, Any], timeout: float, phase: list[str], going: Any) -> list[tuple[float, str]]:
    """`memory/effective` for DOC every 20 ms while GOING(requests so far) holds: each latency with
    the storm's PHASE when it was sent."""
    latencies: list[tuple[float, str]] = []
    while going(len(latencies)):
        when = phase[0]
        latencies.append((client.call("memory/effective", doc, timeout)[0], when))
        time.sleep(0.02)
    return latencies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1000, help="`@a.md` lines in each file of the bomb")
    parser.add_argument("--megabytes", type=int, default=10, help="size of the storm's buffer")
    parser.add_argument("--only", choices=("bomb", "storm"))
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before a step counts as hung")
    parser.add_argument("--max-rss", type=float, default=300.0, help="MB of peak memory per process")
    parser.add_argument("--max-output", type=int, default=20_000_000, help="bytes of output per step")
    args = parser.parse_args()
    report = Report(args.max_rss, args.max_output)
    root = Path(tempfile.mkdtemp(prefix="memory-lens-bounded-"))
    try:
        if args.only in (None, "bomb"):
            bomb(report, root / "bomb", args.lines, args.timeout)
        if args.only in (None, "storm"):
            storm(report, root / "storm", args.megabytes, args.timeout)
    except Exception as err:  # noqa: BLE001 - a hang or a crash is a failed run, said in one line
        report.failures.append(f"{type(err).__name__}: {err}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(("FAILED: " + "; ".join(report.failures)) if report.failures else "bounded: every check passed")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
