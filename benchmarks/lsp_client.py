"""A small synchronous LSP client over a server's stdio, for timing round trips.

One thread does everything: a request is written, then messages are read until its response
arrives; notifications seen on the way are kept with their arrival time, and the server's own
requests (`workspace/configuration`, `client/registerCapability`, progress) are answered at once.
No reader thread means no hand-off between threads inside a measured round trip.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence


@dataclass
class Notification:
    method: str
    params: Any
    at: float  # time.perf_counter() when it arrived


class ServerError(RuntimeError):
    pass


class LspClient:
    """Talks to one server process started from COMMAND."""

    def __init__(self, command: Sequence[str], env: dict[str, str] | None = None, stderr: Any = None) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=stderr if stderr is not None else subprocess.DEVNULL,
                                     env=env, bufsize=0)
        self._out = self.proc.stdout.fileno()
        self._buf = bytearray()
        self._next_id = 0
        self.notifications: list[Notification] = []
        self.responses: dict[int, Any] = {}

    # Wire ---------------------------------------------------------------------------------------

    def send(self, message: dict) -> None:
        body = json.dumps(message, separators=(",", ":")).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def _read_message(self, deadline: float | None) -> dict | None:
        """One message, or None when DEADLINE (perf_counter) passes first."""
        while True:
            head_end = self._buf.find(b"\r\n\r\n")
            if head_end >= 0:
                length = 0
                for line in bytes(self._buf[:head_end]).split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                start = head_end + 4
                if len(self._buf) >= start + length:
                    body = bytes(self._buf[start:start + length])
                    del self._buf[:start + length]
                    return json.loads(body)
            timeout = None if deadline is None else max(0.0, deadline - time.perf_counter())
            if timeout is not None and not select.select([self._out], [], [], timeout)[0]:
                return None
            chunk = os.read(self._out, 1 << 20)
            if not chunk:
                raise ServerError(f"the server exited (code {self.proc.poll()})")
            self._buf += chunk

    def _dispatch(self, message: dict) -> None:
        now = time.perf_counter()
        if "method" in message and "id" in message:  # a request from the server
            self.send({"jsonrpc": "2.0", "id": message["id"], "result": self._answer(message)})
        elif "method" in message:
            self.notifications.append(Notification(message["method"], message.get("params"), now))
        else:
            self.responses[message["id"]] = message

    @staticmethod
    def _answer(message: dict) -> Any:
        if message["method"] == "workspace/configuration":
            return [None for _ in message.get("params", {}).get("items", [])]
        return None

    # Requests and notifications ------------------------------------------------------------------

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any = None, timeout: float = 120) -> Any:
        """Send a request and wait for its result (raises ServerError on an error response)."""
        self._next_id += 1
        rid = self._next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.perf_counter() + timeout
        while rid not in self.responses:
            message = self._read_message(deadline)
            if message is None:
                raise ServerError(f"{method}: no answer within {timeout} s")
            self._dispatch(message)
        response = self.responses.pop(rid)
        if "error" in response:
            raise ServerError(f"{method}: {response['error']}")
        return response.get("result")

    def wait_for(self, match: Callable[[Notification], bool], timeout: float, since: int = 0) -> Notification | None:
        """The first notification from index SINCE on that MATCH accepts, waiting up to TIMEOUT s."""
        deadline = time.perf_counter() + timeout
        checked = since
        while True:
            for note in self.notifications[checked:]:
                if match(note):
                    return note
            checked = len(self.notifications)
            message = self._read_message(deadline)
            if message is None:
                return None
            self._dispatch(message)

    def drain(self, quiet: float) -> None:
        """Read messages until none has arrived for QUIET seconds."""
        while (message := self._read_message(time.perf_counter() + quiet)) is not None:
            self._dispatch(message)

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit")
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()


def peak_rss_mb(pid: int) -> float | None:
    """The peak resident set size (VmHWM) of process PID in MiB (Linux), else None."""
    return _status_mb(pid, ("VmHWM",)).get("VmHWM")


def rss_mb(pid: int) -> float | None:
    """The current resident set size (VmRSS) of process PID in MiB (Linux), else None."""
    return _status_mb(pid, ("VmRSS",)).get("VmRSS")


def _children(pid: int) -> set[int]:
    """The child processes of PID (Linux), from /proc/PID/task/*/children."""
    found: set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                found.update(int(c) for c in fh.read().split())
        except OSError:
            continue
    return found


class ChildPeaks:
    """Samples, in a background thread, the memory of every child process of PID while it runs:
    the server's scan starts helper processes whose memory counts too. What a helper adds is its
    private memory (RssAnon): the rest of its resident set is the interpreter's and rignore's
    shared library pages, which the server has mapped already."""

    def __init__(self, pid: int, interval: float = 0.005) -> None:
        import threading

        self.pid = pid
        self.interval = interval
        self.peaks: dict[int, dict[str, float]] = {}  # child -> {"VmHWM": MiB, "RssAnon": MiB}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="child-peaks", daemon=True)

    def __enter__(self) -> "ChildPeaks":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        server = _cmdline(self.pid)
        while not self._stop.is_set():
            for child in _children(self.pid):
                if _cmdline(child) in (server, None):
                    continue  # forked, not yet started: still a copy of the server's memory
                now = _status_mb(child, ("VmHWM", "RssAnon"))
                peak = self.peaks.setdefault(child, {})
                for key, value in now.items():
                    peak[key] = max(value, peak.get(key, 0.0))
            self._stop.wait(self.interval)

    @property
    def private_mb(self) -> float:
        """The helpers' private memory at their peaks, summed."""
        return sum(p.get("RssAnon", 0.0) for p in self.peaks.values())

    @property
    def resident_mb(self) -> float:
        """The helpers' whole resident sets at their peaks, summed (shared pages included)."""
        return sum(p.get("VmHWM", 0.0) for p in self.peaks.values())


def _status_mb(pid: int, keys: tuple[str, ...]) -> dict[str, float]:
    """Fields KEYS of /proc/PID/status, in MiB (Linux); those it could not read are left out."""
    out: dict[str, float] = {}
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                name, _, rest = line.partition(":")
                if name in keys:
                    out[name] = int(rest.split()[0]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return out


def _cmdline(pid: int) -> bytes | None:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read()
    except OSError:
        return None
