"""Serving LSP over stdin/stdout: our replacement for pygls's message loop.

pygls reads stdin through its thread pool, one `readline` or `read` at a time: three hand-offs
between threads for every message, which cost more than answering `memory/effective` itself.
When stdin is a pipe or a socket (what every editor gives a language server), the event loop
reads it directly instead (anything else is read in chunks on a worker thread). stdout's pipe
buffer is enlarged so that writing a large answer does not wait for the client to drain it.

pygls's loop (`pygls.io_.run_async`, 2.1) does not survive malformed traffic (see
`framing.py` and docs/reliability.md): messages are framed by `framing.FrameReader` and checked
here (`handle_body`) before pygls's protocol object dispatches them, so that the server answers
every request exactly once, with its own id, and logs one line per bad message:

- a body that is not a JSON object, or has an id that is neither a string nor an integer, is
  logged and dropped (there is no id to answer);
- a request that is not JSON-RPC 2.0, has no string method or params that are not structured
  gets InvalidRequest / InvalidParams;
- a request nested deeper than `framing.MAX_DEPTH` gets InvalidParams, read from its top-level
  fields alone (the JSON parser gives up at ~1,000 levels, and pygls left it unanswered);
- text that is not valid Unicode (lone surrogates, bytes that are not UTF-8): a request gets
  InvalidParams; a notification is kept with U+FFFD in their place (dropping a didChange would
  leave the buffer wrong);
- `shutdown` with params is refused with InvalidParams; after a shutdown, requests get
  InvalidRequest instead of pygls's silence;
- only the top-level object is turned into a message: pygls's `json.loads(object_hook=...)`
  turned any JSON-RPC-shaped object inside the params into a message too.

The pygls internals this needs (its stop event, sending an error response, whether `shutdown`
was handled) are reached through `compat.py`, their one home.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
import time
from typing import Any, BinaryIO

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer

from memory_lens.lsp.compat import new_stop_event, send_error, shutdown_requested, stop_requested
from memory_lens.lsp.framing import BadMessage, Body, FrameReader, decode, replace_surrogates

log = logging.getLogger("memory_lens.lsp")
READ_BYTES = 1 << 20
F_SETPIPE_SZ = 1031  # Linux fcntl: set a pipe's capacity
PIPE_BYTES = 1 << 20  # the default ceiling for unprivileged processes (/proc/sys/fs/pipe-max-size)


def _is_pipe_or_socket(stream: BinaryIO) -> bool:
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def enlarge_pipe(stream: BinaryIO) -> None:
    """Give STREAM's pipe a 1 MiB buffer when the platform allows it (else leave it alone)."""
    if not sys.platform.startswith("linux") or not _is_pipe_or_socket(stream):
        return
    try:
        import fcntl

        fcntl.fcntl(stream.fileno(), F_SETPIPE_SZ, PIPE_BYTES)
    except (OSError, ValueError):
        pass


def serve_stdio(server: LanguageServer) -> None:
    """Serve SERVER on stdin/stdout until the client exits."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    enlarge_pipe(stdout)
    enlarge_pipe(stdin)
    # What pygls's start_io does, with our reader and checks.
    new_stop_event(server)
    server.protocol.set_writer(StdoutWriter(stdout))

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        if sys.platform != "win32" and _is_pipe_or_socket(stdin):
            stream = asyncio.StreamReader(limit=PIPE_BYTES)
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), stdin)

            def read_chunk() -> Any:
                return stream.read(READ_BYTES)
        else:
            def read_chunk() -> Any:
                return loop.run_in_executor(None, getattr(stdin, "read1", stdin.read), READ_BYTES)
        await serve_messages(server, read_chunk)

    try:
        asyncio.run(serve())
    except BrokenPipeError:
        log.error("the connection to the client is lost; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()


async def serve_messages(server: LanguageServer, read_chunk: Any) -> None:
    """Read messages with READ_CHUNK and dispatch them until the stream ends or SERVER stops."""
    reader = FrameReader(read_chunk, lambda reason: log.warning("bad LSP traffic: %s", reason))
    while not stop_requested(server):
        body = await reader.next_body()
        if body is None:
            break
        server.last_message_at = time.monotonic()
        handle_body(server, body, reader)
        await asyncio.sleep(0)  # let the handlers just started run between messages


def handle_body(server: LanguageServer, body: Body, reader: FrameReader) -> None:
    """Check one message body and hand it to pygls, or answer/log it here (one line at most)."""
    notes = [body.problem] if body.problem else []
    envelope: Any = None
    try:
        value, rest, problems = decode(body.data)
        envelope = value
        if rest:
            reader.push_back(rest)
            notes.append(f"{len(rest)} bytes after the JSON value, read as the next message")
        verdict = _check(server, value, problems)
        if isinstance(verdict, str):
            notes.append(verdict)
        else:
            notes.extend(verdict[1:])
            _dispatch(server, verdict[0], notes)
    except BadMessage as bad:
        envelope = bad.envelope
        if envelope is None and not notes:  # not JSON: reported with whatever junk follows it
            reader.skipped(len(body.data), bad.reason)
            return
        notes.append(bad.reason)
        if _is_request(envelope):
            _answer(server, envelope["id"], JsonRpcInvalidParams(message=f"the message is {bad.reason}"))
            notes.append("answered with InvalidParams")
    if notes:
        log.warning("bad LSP message%s: %s", _describe(envelope), "; ".join(notes))


def _check(server: LanguageServer, value: Any, problems: list[str]) -> str | tuple:
    """What is wrong with message VALUE, once answered where it can be (a string), or the
    message to dispatch and notes on it."""
    if not isinstance(value, dict):
        return f"not a JSON object but {type(value).__name__}: dropped"
    if "id" in value and not _valid_id(value["id"]):
        return "an id that is neither a string nor an integer: dropped"
    request = _is_request(value)
    method, params = value.get("method"), value.get("params")

    def refuse(error: JsonRpcException, reason: str) -> str:
        if request:
            _answer(server, value["id"], error)
            return f"{reason}: answered with {type(error).__name__[7:]}"
        return f"{reason}: dropped"

    if value.get("jsonrpc") != "2.0":
        return refuse(JsonRpcInvalidRequest(message='not a JSON-RPC 2.0 message ("jsonrpc": "2.0")'),
                      "not JSON-RPC 2.0")
    if "method" in value and not isinstance(method, str):
        return refuse(JsonRpcInvalidRequest(message="the method is not a string"), "a method that is not a string")
    if "method" not in value and "id" not in value:
        return "neither a request, a notification nor a response: dropped"
    if "method" in value and params is not None and not isinstance(params, (dict, list)):
        return refuse(JsonRpcInvalidParams(message=f"params of {method} must be an object or an array"),
                      "params that are neither an object nor an array")
    notes: list[str] = []
    if problems:
        what = " and ".join(problems)
        if request or "method" not in value:
            return refuse(JsonRpcInvalidParams(message=f"the text of the message is not valid Unicode: {what}"),
                          f"text with {what}")
        value = replace_surrogates(value)
        notes.append(f"text with {what}, replaced by U+FFFD")
    # pygls drops everything after shutdown without an answer (upstream: openlawlibrary/pygls#605);
    # LSP says requests then get InvalidRequest.
    if shutdown_requested(server.protocol) and method != "exit":
        return refuse(JsonRpcInvalidRequest(message="the server is shutting down"), "a message after shutdown")
    if method == "shutdown" and params not in (None, {}, []):
        return refuse(JsonRpcInvalidParams(message="shutdown takes no params"), "shutdown with params")
    return (value, *notes)


def _dispatch(server: LanguageServer, value: dict, notes: list[str]) -> None:
    """Structure the top-level object only, and let pygls handle it."""
    protocol = server.protocol
    try:
        message = protocol.structure_message(value)
    except JsonRpcInvalidParams:  # MemoryLensProtocol (server.py) has answered a request
        notes.append(f"params that do not fit {value.get('method', 'a response')}")
        return
    except Exception as err:
        if _is_request(value):
            _answer(server, value["id"], JsonRpcInvalidRequest(message=f"cannot read the request: {err}"))
        notes.append(f"cannot be read: {err}")
        return
    try:
        protocol.handle_message(message)
    except Exception as err:  # pygls answers requests itself; this is for anything it lets through
        notes.append(f"failed: {err!r}")


def _valid_id(msg_id: Any) -> bool:
    return isinstance(msg_id, (str, int)) and not isinstance(msg_id, bool)


def _is_request(value: Any) -> bool:
    return isinstance(value, dict) and "method" in value and _valid_id(value.get("id"))


def _answer(server: LanguageServer, msg_id: Any, error: JsonRpcException) -> None:
    send_error(server.protocol, msg_id, error)


def _describe(envelope: Any) -> str:
    if not isinstance(envelope, dict):
        return ""
    method = envelope.get("method")
    method = method[:80] if isinstance(method, str) else None
    if _is_request(envelope):
        return f" (request {envelope['id']!r:.40}, {method})"
    if method is not None:
        return f" (notification {method})"
    return ""
