"""`lsp/framing.py` on its own: bodies read from chunks of any size, whatever surrounds them
(the end-to-end tests in tests/e2e/test_framing.py cannot choose how the pipe splits the bytes)."""

from __future__ import annotations

import asyncio
import json

import pytest

from memory_lens.lsp.framing import HEADER_LINE_LIMIT, BadMessage, FrameReader, decode


def frame(body: bytes, length: int | None = None) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length) + body


def message(n: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": n, "method": "memory/effective", "params": {}}).encode()


def read_all(data: bytes, chunk: int) -> tuple[list[bytes], list[str]]:
    """Every body FrameReader finds in DATA fed CHUNK bytes at a time, and what it reported."""
    chunks = [data[i:i + chunk] for i in range(0, len(data), chunk)]
    bad: list[str] = []

    async def read_chunk() -> bytes:
        return chunks.pop(0) if chunks else b""

    async def run() -> list[bytes]:
        reader = FrameReader(read_chunk, bad.append)
        bodies = []
        while (body := await reader.next_body()) is not None:
            bodies.append(body.data)
        return bodies

    return asyncio.run(run()), bad


CHUNKS = [1, 7, 4096, 1 << 20, 64 << 20]


@pytest.mark.parametrize("chunk", CHUNKS)
def test_a_long_line_is_skipped_up_to_its_own_end(chunk: int) -> None:
    junk = b"X-Junk: " + b"x" * (3 * HEADER_LINE_LIMIT) + b"\r\n"
    data = junk + frame(message(1)) + b"y" * (2 * HEADER_LINE_LIMIT) + frame(message(2)) + frame(message(3))
    if chunk == 1:
        data = junk[-200:] + frame(message(1)) + frame(message(2)) + frame(message(3))
    bodies, bad = read_all(data, chunk)
    assert bodies == [message(1), message(2), message(3)]
    assert len(bad) == (1 if chunk == 1 else 2), bad


@pytest.mark.parametrize("chunk", CHUNKS)
def test_wrong_lengths_resynchronise(chunk: int) -> None:
    data = (frame(message(1), len(message(1)) + 30) + frame(message(2), len(message(2)) - 3)
            + frame(message(3)) + b"Content-Length: abc\r\n\r\n" + message(4) + frame(message(5)))
    bodies, bad = read_all(data, chunk)
    assert bodies == [message(1), message(2)[:-3], message(3), message(5)]
    # The tail of message 2, then message 4 with its bad header (bodies are judged by the caller).
    assert bad == ["skipped 3 bytes that are not an LSP message",
                   f"skipped {len(message(4)) + 23} bytes that are not an LSP message "
                   "(a Content-Length that is not a byte count: b'abc')"]


def test_decode_reads_one_value_and_gives_back_the_rest() -> None:
    value, rest, problems = decode(message(1) + b"  Cont")
    assert value["id"] == 1 and rest == b"Cont" and problems == []
    with pytest.raises(BadMessage) as err:
        decode(b'{"jsonrpc": "2.0", "id": 7, "method": "m", "params": ' + b"[" * 5000 + b"]" * 5000 + b"}")
    assert err.value.envelope == {"jsonrpc": "2.0", "id": 7, "method": "m"}
    assert decode(b'{"t": "\\ud800"}')[2] and decode(b'{"t": "\xff"}')[2]
    assert decode(b'{"t": "\\ud83d\\ude00"}')[2] == []  # a valid pair
