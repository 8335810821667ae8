"""Malformed LSP traffic against one real `memory-lens serve` (a script, not a pytest module).

Sends MESSAGES messages (10,000 by default) from a fixed seed over stdio to one server: bad
header lines (up to over 1 MiB), wrong Content-Lengths, truncated JSON, random bytes, deep
nesting, huge strings, wrong types, JSON-RPC-shaped params, lone surrogates and bytes that are
not UTF-8, with valid requests interleaved whose answers are checked. Then it reports messages
sent, crashes (the server exiting), requests unanswered, answered twice or with a wrong id or a
wrong result, internal errors, the max latency of the valid requests and the server's peak RSS,
and exits non-zero on a crash or a wrong or missing answer.

    .venv/bin/python tests/fuzz/lsp_traffic.py [--messages N] [--seed S] [--json]

Figures from this script are in docs/reliability.md ("Malformed LSP traffic").
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ANSWER_TIMEOUT = 120.0  # upper bound against a hang, not a performance figure
PROJECT_TEXT = "# Project\n- Run tests with pytest\n- Keep functions short\n"


def frame(body: bytes | dict, length: int | None = None) -> bytes:
    data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % (len(data) if length is None else length) + data


class Traffic:
    """The messages to send, and what each request's answer must be."""

    def __init__(self, rng: random.Random, proj: Path) -> None:
        self.rng = rng
        self.proj = proj
        self.memory_uri = (proj / "GEMINI.md").as_uri()
        self.next_id = 1
        # id -> what its answer must be: "effective" (the project's memory), "result", "error" (not an
        # internal one), "error_or_empty" (wrong types: an error or an empty result)
        self.must: dict[int, str] = {}
        self.may: set[int] = set()  # ids in broken frames: answered at most once, or not at all
        self.kinds: dict[str, int] = {}

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id

    def _request(self, method: str, params: Any, expect: str | None) -> tuple[int, dict]:
        msg_id = self._id()
        if expect is None:
            self.may.add(msg_id)
        else:
            self.must[msg_id] = expect
        return msg_id, {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}

    def valid(self) -> bytes:
        r = self.rng.random()
        if r < 0.5:
            return frame(self._request("memory/effective", {"textDocument": {"uri": self.proj.as_uri()}}, "effective")[1])
        if r < 0.7:
            return frame(self._request("textDocument/documentSymbol", {"textDocument": {"uri": self.memory_uri}}, "result")[1])
        if r < 0.85:
            return frame(self._request("textDocument/hover", {"textDocument": {"uri": self.memory_uri},
                                                               "position": {"line": 1, "character": 3}}, "result")[1])
        return frame(self._request("workspace/executeCommand", {"command": "memoryLens.server.list",
                                                                "arguments": [{"uri": self.memory_uri}]}, "result")[1])

    def _junk(self, size: int) -> bytes:
        data = bytes(self.rng.getrandbits(8) for _ in range(min(size, 4096)))
        data = (data * (size // max(1, len(data)) + 1))[:size]
        return data.replace(b"Content-Length:", b"Content-Lengt:")

    def bad(self) -> bytes:
        kind = self.rng.choice(["header_line", "long_header", "wrong_length", "truncated", "random", "deep",
                                "huge_string", "wrong_types", "envelope", "inner_message", "not_unicode",
                                "notification", "bad_length_value"])
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        return getattr(self, f"_{kind}")()

    def _header_line(self) -> bytes:
        return self._junk(self.rng.randint(1, 200)).replace(b"\n", b" ") + b"\r\n"

    def _long_header(self) -> bytes:
        size = (1 << 20) + 100 if self.rng.random() < 0.05 else self.rng.randint(70_000, 200_000)
        return b"X-Junk: " + b"x" * size + b"\r\n"

    def _wrong_length(self) -> bytes:
        _, message = self._request("memory/effective", {"textDocument": {"uri": self.proj.as_uri()}}, None)
        body = json.dumps(message).encode()
        return frame(body, max(0, len(body) + self.rng.choice([-40, -5, -1, 1, 3, 50, 5000])))

    def _truncated(self) -> bytes:
        _, message = self._request("textDocument/hover", {"textDocument": {"uri": self.memory_uri},
                                                          "position": {"line": 0, "character": 0}}, None)
        body = json.dumps(message).encode()
        return frame(body[: self.rng.randint(0, len(body) - 1)])

    def _random(self) -> bytes:
        return frame(self._junk(self.rng.randint(0, 3000)))

    def _deep(self) -> bytes:
        depth = self.rng.choice([200, 1000, 5000, 20000])
        msg_id, _ = self._request("workspace/executeCommand", None, "error")
        opener, closer = (b"[", b"]") if self.rng.random() < 0.5 else (b'{"a":', b"}")
        nested = opener * depth + b"1" + closer * depth
        return frame(b'{"jsonrpc":"2.0","id":%d,"method":"workspace/executeCommand","params":{"command":'
                     b'"memoryLens.server.list","arguments":[%s]}}' % (msg_id, nested))

    def _huge_string(self) -> bytes:
        size = self.rng.choice([10_000, 100_000, 1_000_000])
        if self.rng.random() < 0.5:
            return frame(self._request("workspace/symbol", {"query": "q" * size}, "result")[1])
        uri = (self.proj / "src" / f"big{self.next_id}.txt").as_uri()
        return frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "plaintext", "version": 1, "text": "x" * size}}})

    def _wrong_types(self) -> bytes:
        method, params = self.rng.choice([
            ("textDocument/hover", {"textDocument": 5}),
            ("textDocument/hover", {"textDocument": {"uri": self.memory_uri}, "position": {"line": -1, "character": "x"}}),
            ("textDocument/documentSymbol", {"textDocument": {"uri": None}}),
            ("memory/effective", {"textDocument": {"uri": 7}}),
            ("memory/effective", [1, 2, 3]),
            ("workspace/executeCommand", {"command": 7}),
            ("workspace/executeCommand", {"command": "memoryLens.server.save", "arguments": "x"}),
            ("workspace/symbol", {"query": {"a": 1}}),
            ("textDocument/codeAction", {"textDocument": {"uri": self.memory_uri}, "range": "all", "context": {}}),
        ])
        return frame(self._request(method, params, "error_or_empty")[1])

    def _envelope(self) -> bytes:
        msg_id = self._id()
        choice = self.rng.randrange(6)
        if choice == 0:
            self.must[msg_id] = "error"
            return frame({"jsonrpc": "1.0", "id": msg_id, "method": "memory/effective", "params": {}})
        if choice == 1:
            self.must[msg_id] = "error"
            return frame({"jsonrpc": "2.0", "id": msg_id, "method": 12, "params": {}})
        if choice == 2:
            self.must[msg_id] = "error"
            return frame({"jsonrpc": "2.0", "id": msg_id, "method": "memory/effective", "params": "text"})
        return frame(self.rng.choice([b"[]", b"42", b"null", b'{"jsonrpc": "2.0"}', b'{"jsonrpc": "2.0", "id": [1]}',
                                      b'{"jsonrpc": "2.0", "id": 1.5, "method": "x"}']))

    def _inner_message(self) -> bytes:
        inner_id = self._id()  # never sent as a request: an answer with it is a wrong id
        inner = {"jsonrpc": "2.0", "id": inner_id, "method": "textDocument/hover", "params": {"bad": 1}}
        return frame(self._request("memory/effective", {"textDocument": {"uri": self.proj.as_uri()}, "x": inner},
                                   "effective")[1])

    def _not_unicode(self) -> bytes:
        msg_id, message = self._request("workspace/executeCommand", {"command": "memoryLens.server.save", "arguments": [
            {"text": "entry MARK", "uri": self.memory_uri}]}, "error")
        body = json.dumps(message).encode()
        bad = b"\\ud800" if self.rng.random() < 0.5 else b"\xff\xfe"
        return frame(body.replace(b"MARK", bad))

    def _notification(self) -> bytes:
        return frame(self.rng.choice([
            {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": 5}}},
            {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "nope"}},
            {"jsonrpc": "2.0", "method": "workspace/didChangeWatchedFiles", "params": {"changes": "x"}},
            {"jsonrpc": "2.0", "method": "memory/unknown", "params": {}},
            {"jsonrpc": "2.0", "method": "textDocument/didClose", "params": None},
        ]))

    def _bad_length_value(self) -> bytes:
        value = self.rng.choice([b"-5", b"abc", b"1e3", b"99999999999999999999", b""])
        return b"Content-Length: " + value + b"\r\n\r\n" + json.dumps({"jsonrpc": "2.0", "method": "x"}).encode()


class Server:
    """One `memory-lens serve`: its answers by id with their arrival times, its stderr lines."""

    def __init__(self, sandbox: Path, proj: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_LENS_")}
        env.update(HOME=str(sandbox / "home"), MEMORY_LENS_LOCK_DIR=str(sandbox / "locks"),
                   XDG_CACHE_HOME=str(sandbox / "cache"), XDG_CONFIG_HOME=str(sandbox / "home" / ".config"),
                   XDG_DATA_HOME=str(sandbox / "data"), PYTHONIOENCODING="utf-8")
        self.proc = subprocess.Popen([sys.executable, "-m", "memory_lens", "serve"], cwd=str(sandbox / "home"),
                                     env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.answers: dict[Any, list[float]] = {}
        self.bodies: dict[Any, dict] = {}
        self.stderr: list[str] = []
        self.lock = threading.Condition()
        self.peak_rss_kb = 0
        self.threads = [threading.Thread(target=self._read_stdout, daemon=True),
                        threading.Thread(target=self._read_stderr, daemon=True)]
        for t in self.threads:
            t.start()

    def _read_stdout(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = out.read(1)
                if not byte:
                    return
                header += byte
            length = int(header.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            message = json.loads(out.read(length))
            if "method" in message:
                continue  # the server's notifications and requests
            with self.lock:
                self.answers.setdefault(message.get("id"), []).append(time.perf_counter())
                self.bodies.setdefault(message.get("id"), message)
                self.lock.notify_all()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line.decode("utf-8", "replace"))

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def wait_answer(self, msg_id: Any, timeout: float = ANSWER_TIMEOUT) -> bool:
        deadline = time.monotonic() + timeout
        with self.lock:
            while msg_id not in self.answers:
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    return msg_id in self.answers
                self.lock.wait(min(left, 0.5))
        return True

    def sample_rss(self) -> None:
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    self.peak_rss_kb = max(self.peak_rss_kb, int(line.split()[1]))
        except OSError:
            pass


def make_sandbox(root: Path) -> Path:
    for d in ("home/.gemini", "locks", "cache", "data", "proj/.git", "proj/src"):
        (root / d).mkdir(parents=True, exist_ok=True)
    (root / "home" / ".gemini" / "GEMINI.md").write_text("# Global\n- Prefer small commits\n", encoding="utf-8")
    (root / "proj" / "GEMINI.md").write_text(PROJECT_TEXT, encoding="utf-8")
    return root / "proj"


def check_answer(expect: str, message: dict, proj: Path) -> bool:
    if expect == "effective":
        return isinstance(message.get("result"), dict) and message["result"].get("projectRoot") == str(proj)
    if expect == "result":
        return "result" in message and "error" not in message
    if expect == "error_or_empty" and message.get("result", 0) in (None, [], {}):
        return True
    error = message.get("error")
    return isinstance(error, dict) and error.get("code") != -32603 and "Traceback" not in json.dumps(error)


def run(messages: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="memory-lens-fuzz-") as tmp:
        sandbox = Path(os.path.realpath(tmp))
        proj = make_sandbox(sandbox)
        server = Server(sandbox, proj)
        traffic = Traffic(rng, proj)
        server.send(frame({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "processId": os.getpid(), "rootUri": proj.as_uri(), "capabilities": {}}}))
        server.wait_answer("init")
        server.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        sent_at: dict[int, float] = {}
        started = time.perf_counter()
        crashed = False
        for n in range(messages):
            before = set(traffic.must)
            data = traffic.valid() if rng.random() < 0.4 else traffic.bad()
            try:
                server.send(data)
            except (BrokenPipeError, OSError):
                crashed = True
                break
            now = time.perf_counter()
            for msg_id in set(traffic.must) - before:
                sent_at[msg_id] = now
            if n % 500 == 0:
                server.sample_rss()
        final = "final"
        if not crashed:
            try:
                server.send(frame({"jsonrpc": "2.0", "id": final, "method": "memory/effective",
                                   "params": {"textDocument": {"uri": proj.as_uri()}}}))
            except OSError:
                crashed = True
        answered_final = not crashed and server.wait_answer(final)
        # Requests run concurrently, so "final" can be answered before earlier ones, and pygls's
        # shutdown cancels whatever is still pending: wait for every request first (bounded).
        deadline = time.monotonic() + ANSWER_TIMEOUT
        for msg_id in traffic.must:
            if crashed or not server.wait_answer(msg_id, max(0.0, deadline - time.monotonic())):
                break
        server.sample_rss()
        elapsed = time.perf_counter() - started
        crashed = crashed or server.proc.poll() is not None
        if not crashed:
            try:
                server.send(frame({"jsonrpc": "2.0", "id": "bye", "method": "shutdown"}))
                server.wait_answer("bye", 30)
                server.send(frame({"jsonrpc": "2.0", "method": "exit"}))
                server.proc.stdin.close()  # type: ignore[union-attr]
            except OSError:
                pass
        try:
            code = server.proc.wait(30)
        except subprocess.TimeoutExpired:
            server.proc.kill()
            code = server.proc.wait()
        for t in server.threads:
            t.join(10)

    answers, bodies = server.answers, server.bodies
    known = set(traffic.must) | traffic.may | {"init", final, "bye"}
    unanswered = sorted(i for i in traffic.must if i not in answers)
    duplicate = sorted((i for i, times in answers.items() if len(times) > 1), key=str)
    wrong_id = sorted((i for i in answers if i not in known), key=str)
    wrong = sorted(i for i, expect in traffic.must.items() if i in bodies and not check_answer(expect, bodies[i], proj))
    internal = sorted(i for i, body in bodies.items() if isinstance(body.get("error"), dict)
                      and body["error"].get("code") == -32603)
    latencies = [answers[i][0] - sent_at[i] for i, e in traffic.must.items() if i in answers and i in sent_at
                 and not e.startswith("error")]
    return {
        "messages_sent": messages, "seed": seed, "valid_requests": sum(1 for e in traffic.must.values() if not e.startswith("error")),
        "requests_expecting_errors": sum(1 for e in traffic.must.values() if e.startswith("error")),
        "broken_frames_with_ids": len(traffic.may), "bad_kinds": dict(sorted(traffic.kinds.items())),
        "crashes": int(crashed or not answered_final), "exit_code": code,
        "unanswered": len(unanswered), "duplicate_answers": len(duplicate), "wrong_id_answers": len(wrong_id),
        "wrong_answers": len(wrong), "internal_errors": len(internal),
        "broken_frames_answered": sum(1 for i in traffic.may if i in answers),
        "max_latency_ms": round(max(latencies) * 1000, 1) if latencies else None,
        "median_latency_ms": round(sorted(latencies)[len(latencies) // 2] * 1000, 2) if latencies else None,
        "peak_rss_mb": round(server.peak_rss_kb / 1024, 1), "seconds": round(elapsed, 1),
        "bad_message_log_lines": sum(1 for line in server.stderr if "bad LSP " in line),
        "tracebacks_logged": sum(1 for line in server.stderr if "Traceback" in line),
        "examples": {"unanswered": unanswered[:5], "duplicate": duplicate[:5], "wrong_id": wrong_id[:5],
                     "wrong": [bodies[i] for i in wrong[:3]]},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=20269)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args()
    report = run(args.messages, args.seed)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            if key != "examples" or any(value.values()):
                print(f"{key}: {value}")
    failed = (report["crashes"] or report["unanswered"] or report["duplicate_answers"] or report["wrong_id_answers"]
              or report["wrong_answers"] or report["internal_errors"])
    if failed:
        print("lsp_traffic: FAILED (a crash, or a request answered wrongly, twice or not at all)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
