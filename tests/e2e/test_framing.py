"""LSP framing under malformed traffic, over real stdio to a real `memory-lens serve`: raw bytes
go to its stdin, answers are read off its stdout. Whatever comes, the server stays up,
resynchronises on the next valid `Content-Length:` header, answers every request exactly once
with that request's own id, and logs one line per bad message (see docs/reliability.md)."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import pytest

from .harness import CMD_SAVE, INVALID_PARAMS, WAIT_SECONDS, Workspace, uri_of

INVALID_REQUEST = -32600
BAD_LINE = "bad LSP "  # how every line about a bad message starts (after the log prefix)


def frame(body: bytes | dict, length: int | None = None) -> bytes:
    """BODY (a message, or raw bytes) with its header; LENGTH: a Content-Length to lie with."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % (len(data) if length is None else length) + data


def request(msg_id: int, method: str, params: Any = None) -> dict:
    message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


class RawServer:
    """`memory-lens serve` with pipes: bytes in, every message it writes collected by id."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.answers: dict[Any, list[dict]] = {}
        self.sent_ids: list[Any] = []
        self.stderr = b""
        self.changed = asyncio.Event()

    async def start(self) -> RawServer:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "memory_lens", "serve", cwd=str(self.ws.home), env=self.ws.env(),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        self.readers = [asyncio.ensure_future(self._read_stdout()), asyncio.ensure_future(self._read_stderr())]
        await self.call(0, "initialize", {"processId": None, "rootUri": uri_of(self.ws.proj), "capabilities": {}})
        await self.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        return self

    async def _read_stdout(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            try:
                header = await out.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:
                return
            length = int(header.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            message = json.loads(await out.readexactly(length))
            if "method" not in message:  # an answer (the server's own requests and notifications have a method)
                self.answers.setdefault(message.get("id"), []).append(message)
                self.changed.set()

    async def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        self.stderr = await self.proc.stderr.read()

    async def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        await self.proc.stdin.drain()

    async def call(self, msg_id: int, method: str, params: Any = None, raw: bytes | None = None) -> dict:
        """Send request MSG_ID (as RAW bytes when given) and wait for its answer."""
        self.sent_ids.append(msg_id)
        await self.send(raw if raw is not None else frame(request(msg_id, method, params)))
        return await self.answer(msg_id)

    async def answer(self, msg_id: Any) -> dict:
        async def arrived() -> dict:
            while msg_id not in self.answers:
                self.changed.clear()
                await self.changed.wait()
            return self.answers[msg_id][0]

        try:
            return await asyncio.wait_for(arrived(), WAIT_SECONDS)
        except asyncio.TimeoutError:
            raise AssertionError(f"request {msg_id!r} never answered") from None

    async def effective(self, msg_id: int) -> dict:
        answer = await self.call(msg_id, "memory/effective", {"textDocument": {"uri": uri_of(self.ws.proj)}})
        assert answer["result"]["projectRoot"] == str(self.ws.proj), answer
        return answer

    async def finish(self) -> list[str]:
        """Shut down and exit; check that every request got exactly one answer with its id and
        that the server exited cleanly. The lines it logged about bad messages."""
        await self.call(10_000, "shutdown")
        await self.send(frame({"jsonrpc": "2.0", "method": "exit"}))
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = await asyncio.wait_for(self.proc.wait(), WAIT_SECONDS)
        await asyncio.wait_for(asyncio.gather(*self.readers), WAIT_SECONDS)
        log = self.stderr.decode("utf-8", "replace")
        assert code == 0, log
        assert "Traceback" not in log, log
        assert sorted(self.answers, key=str) == sorted(self.sent_ids, key=str), (self.answers.keys(), self.sent_ids)
        assert all(len(replies) == 1 for replies in self.answers.values()), self.answers
        return [line for line in log.splitlines() if BAD_LINE in line]


@pytest.fixture
async def server(ws: Workspace) -> Any:
    raw = await RawServer(ws).start()
    yield raw
    if raw.proc.returncode is None:
        raw.proc.kill()
        await raw.proc.wait()
    for task in raw.readers:
        task.cancel()


async def test_a_header_line_over_1_mib_is_skipped(server: RawServer) -> None:
    await server.send(b"X" * ((1 << 20) + 10) + b"\r\n")
    await server.effective(1)
    await server.send(b"Content-Length: " + b"9" * (2 << 20) + b"\r\n\r\n")  # a header of digits
    await server.effective(2)
    # In one write with the messages after it: only the long line is skipped.
    effective = {"textDocument": {"uri": uri_of(server.ws.proj)}}
    server.sent_ids += [3, 4]
    await server.send(b"X-Junk: " + b"x" * (3 << 20) + b"\r\n" + frame(request(3, "memory/effective", effective))
                      + b"y" * 100_000 + frame(request(4, "memory/effective", effective)))
    for msg_id in (3, 4):
        assert (await server.answer(msg_id))["result"]["projectRoot"] == str(server.ws.proj)
    lines = await server.finish()
    assert len(lines) == 4, lines
    assert "skipped 1048588 bytes" in lines[0]


async def test_wrong_content_lengths_resynchronise(server: RawServer) -> None:
    effective = request(1, "memory/effective", {"textDocument": {"uri": uri_of(server.ws.proj)}})
    body = json.dumps(effective).encode()
    # Too large: the next message's header shows inside the body; the body before it is whole.
    server.sent_ids.append(1)
    await server.send(frame(body, len(body) + 500))
    await server.effective(2)
    assert (await server.answer(1))["result"]["projectRoot"] == str(server.ws.proj)
    # Too small: the truncated body and its tail are skipped, the next message is read.
    await server.send(frame(json.dumps({**effective, "id": 3}).encode(), len(body) - 10))
    await server.effective(4)
    # Too large by a few bytes, arriving in two writes: the JSON value is read, the rest goes back.
    server.sent_ids.append(5)
    await server.send(frame(json.dumps({**effective, "id": 5}).encode(), len(body) + 4))
    await asyncio.sleep(0.05)
    await server.effective(6)
    # Not a number, negative, missing: skipped up to the next valid header.
    for bad_header in (b"Content-Length: abc\r\n\r\n", b"Content-Length: -5\r\n\r\n", b"Content-Type: x\r\n\r\n"):
        await server.send(bad_header + json.dumps({**effective, "id": 7}).encode())
    await server.effective(8)
    # A request far longer than it says, then nothing but the next valid one, much later.
    await server.send(b"Content-Length: 100000000\r\n\r\n{\"jsonrpc\": \"2.0\"")
    await asyncio.sleep(0.2)
    await server.effective(9)
    lines = await server.finish()
    assert 3 not in server.answers and 7 not in server.answers
    # One line each: too large (1), too small (3), too large (5), the last; the three bad headers
    # in a row are one run of bytes skipped up to the header of request 8.
    assert len(lines) == 5, lines


async def test_params_shaped_like_messages_keep_the_outer_id(server: RawServer) -> None:
    inner = request(99, "textDocument/hover", {"bad": 1})
    answer = await server.call(1, "memory/effective", {"textDocument": {"uri": uri_of(server.ws.proj)}, "x": inner})
    assert answer["result"]["projectRoot"] == str(server.ws.proj)
    listed = await server.call(2, "workspace/executeCommand",
                               {"command": "memoryLens.server.list", "arguments": [inner]})
    assert "result" in listed or listed["error"]["code"] == INVALID_PARAMS
    assert 99 not in server.answers
    assert await server.finish() == []


async def test_deep_nesting_is_answered(server: RawServer) -> None:
    for msg_id, depth in ((1, 5000), (2, 900), (3, 200)):
        raw = (b'{"jsonrpc": "2.0", "id": %d, "method": "workspace/executeCommand", "params": '
               b'{"command": "memoryLens.server.list", "arguments": %s%s}}' % (msg_id, b"[" * depth, b"]" * depth))
        answer = await server.call(msg_id, "", raw=frame(raw))
        assert answer["error"]["code"] == INVALID_PARAMS
        assert "nested deeper than" in answer["error"]["message"]
    deep_object = b'{"jsonrpc": "2.0", "id": 4, "method": "memory/effective", "params": %s1%s}' % (
        b'{"a": ' * 5000, b"}" * 5000)
    assert (await server.call(4, "", raw=frame(deep_object)))["error"]["code"] == INVALID_PARAMS
    await server.effective(5)
    assert len(await server.finish()) == 4


async def test_shutdown_with_params_is_refused_and_requests_after_shutdown_get_errors(server: RawServer) -> None:
    refused = await server.call(1, "shutdown", {"garbage": [1, 2]})
    assert refused["error"]["code"] == INVALID_PARAMS
    await server.effective(2)  # still serving
    assert (await server.call(3, "shutdown"))["result"] is None
    after = await server.call(4, "memory/effective", {"textDocument": {"uri": uri_of(server.ws.proj)}})
    assert after["error"]["code"] == INVALID_REQUEST
    await server.send(frame({"jsonrpc": "2.0", "method": "exit"}))
    assert server.proc.stdin is not None
    server.proc.stdin.close()
    assert await asyncio.wait_for(server.proc.wait(), WAIT_SECONDS) == 0
    await asyncio.wait_for(asyncio.gather(*server.readers), WAIT_SECONDS)
    assert sorted(server.answers) == [0, 1, 2, 3, 4]
    assert all(len(replies) == 1 for replies in server.answers.values())
    assert len([line for line in server.stderr.decode().splitlines() if BAD_LINE in line]) == 2


async def test_text_that_is_not_unicode(server: RawServer) -> None:
    memory_file = server.ws.proj / "GEMINI.md"
    before = memory_file.read_bytes()
    raw = (b'{"jsonrpc": "2.0", "id": 1, "method": "workspace/executeCommand", "params": {"command": "%s", '
           b'"arguments": [{"text": "bad \\ud800 entry", "uri": "%s"}]}}' % (CMD_SAVE.encode(), uri_of(memory_file).encode()))
    answer = await server.call(1, "", raw=frame(raw))
    assert answer["error"]["code"] == INVALID_PARAMS
    assert "not valid Unicode" in answer["error"]["message"] and "data" not in answer["error"]
    not_utf8 = frame(request(2, "workspace/executeCommand", {"command": CMD_SAVE, "arguments": [
        {"text": "bad XX entry", "uri": uri_of(memory_file)}]}))
    answer = await server.call(2, "", raw=not_utf8.replace(b"XX", b"\xff\xfe"))
    assert answer["error"]["code"] == INVALID_PARAMS
    assert memory_file.read_bytes() == before
    # A notification cannot be answered: its text is kept with U+FFFD for the bad characters.
    open_doc = (b'{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "%s", '
                b'"languageId": "markdown", "version": 1, "text": "- one \\udc00 two\\n"}}}' % uri_of(memory_file).encode())
    await server.send(frame(open_doc))
    symbols = await server.call(3, "textDocument/documentSymbol", {"textDocument": {"uri": uri_of(memory_file)}})
    assert any("one \ufffd two" in s["name"] for s in symbols["result"]), symbols
    assert len(await server.finish()) == 3


async def test_odd_envelopes(server: RawServer) -> None:
    """Bodies that are JSON but not requests: dropped with a line each when there is no id to
    answer, answered with an error when there is."""
    for junk in (b"[]", b"42", b'"x"', b"null", b'{"jsonrpc": "2.0"}', b'{"jsonrpc": "2.0", "id": [1], "method": "x"}',
                 b'{"jsonrpc": "2.0", "id": true, "method": "x"}', b'{"id": 1.5, "method": "x"}'):
        await server.send(frame(junk))
    assert (await server.call(1, "", raw=frame(b'{"jsonrpc": "1.0", "id": 1, "method": "x"}')))["error"]["code"] == INVALID_REQUEST
    assert (await server.call(2, "", raw=frame(b'{"jsonrpc": "2.0", "id": 2, "method": 7}')))["error"]["code"] == INVALID_REQUEST
    assert (await server.call("s", "", raw=frame(b'{"jsonrpc": "2.0", "id": "s", "method": "memory/effective", "params": 5}'))
            )["error"]["code"] == INVALID_PARAMS
    await server.effective(3)
    assert len(await server.finish()) == 11
