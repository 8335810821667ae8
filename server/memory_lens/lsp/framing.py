"""Reading LSP messages off a byte stream, whatever the client sends.

pygls's own reader (`pygls.io_.run_async`, pygls 2.1) stops or loses its place on bad framing:
a header line longer than the stream's limit ends the server; a `Content-Length` that is wrong
once leaves it reading bodies from the middle of other messages, so no later request is answered
(the next header is glued to the tail of the last body and never matches); it parses bodies with
`object_hook=structure_message`, so an object inside the params that looks like a JSON-RPC
message is turned into one. `FrameReader` replaces that loop's reading half:

- header lines are bounded (`HEADER_LINE_LIMIT`); a longer one is skipped, not fatal;
- anything that is not a header is skipped up to the next `Content-Length:` header, found even
  in the middle of a line, so the stream resynchronises on the next valid message;
- a body that is cut short by a header inside it (a `Content-Length` too large) ends there: a
  JSON body can never contain `Content-Length: <digits>` followed by a line break;
- a body holding one complete JSON value plus more bytes (a `Content-Length` slightly too large)
  is read as that value, and the rest goes back to the stream;
- a body over `BODY_LIMIT` is skipped without being kept in memory.

Each problem is reported once, through the ON_BAD callback, as one line.
"""

from __future__ import annotations

import json
import re
from typing import Any, Awaitable, Callable

HEADER_LINE_LIMIT = 64 * 1024
BODY_LIMIT = 256 * 1024 * 1024
CHUNK = 1 << 16
LARGE_BODY = 1 << 20  # a body this long is handed over without a copy (`FrameReader._take`)

# Resynchronising looks for the header as every client spells it, `Content-Length:`.
_HEADER = re.compile(rb"([A-Za-z0-9!#$%&'*+.^_`|~-]+):[ \t]*([^\r\n]*?)[ \t]*\r?\n")
_HEADER_IN_BODY = re.compile(rb"Content-Length:[ \t]*[0-9]+[ \t]*\r?\n")
_MARKER_TAIL = len(b"Content-Length:") + 24  # bytes kept when skipping: a header may start there


class Body:
    """One message body as read: its bytes, and what went wrong with its framing, if anything."""

    __slots__ = ("data", "problem")

    def __init__(self, data: bytes | bytearray, problem: str | None = None) -> None:
        self.data, self.problem = data, problem


class FrameReader:
    """Message bodies from READ_CHUNK (an awaitable returning b"" at the end of the stream)."""

    def __init__(self, read_chunk: Callable[[], Awaitable[bytes]], on_bad: Callable[[str], None]) -> None:
        self._read_chunk = read_chunk
        self._on_bad = on_bad
        self._buf = bytearray()
        self._eof = False
        self._skipped = 0  # bytes skipped since the last message: reported when the next one starts
        self._skip_reason = ""

    async def _fill(self) -> bool:
        if self._eof:
            return False
        chunk = await self._read_chunk()
        if not chunk:
            self._eof = True
            return False
        self._buf += chunk
        return True

    def push_back(self, data: bytes) -> None:
        """Read DATA again, before what the stream holds."""
        self._buf[:0] = data

    def _take(self, count: int) -> bytes | bytearray:
        """The first COUNT bytes of the buffer, removed from it. A large body is not copied: the
        buffer itself becomes the body, and what follows it starts a new buffer."""
        if count < LARGE_BODY:
            with memoryview(self._buf) as view:
                data = bytes(view[:count])
            del self._buf[:count]
            return data
        data, self._buf = self._buf, self._buf[count:]
        del data[count:]
        return data

    def _skip(self, count: int) -> None:
        del self._buf[:count]
        self._skipped += count

    def skipped(self, count: int, reason: str) -> None:
        """Count COUNT bytes the caller could not use (for REASON) with the bytes skipped around
        them: a body cut short and the rest of it that follows are one bad message, one line."""
        self._skipped += count
        self._skip_reason = self._skip_reason or reason

    def _report_skipped(self) -> None:
        if self._skipped:
            reason = f" ({self._skip_reason})" if self._skip_reason else ""
            self._on_bad(f"skipped {self._skipped} bytes that are not an LSP message{reason}")
            self._skipped, self._skip_reason = 0, ""

    async def next_body(self) -> Body | None:
        """The next message body, or None at the end of the stream."""
        while True:
            length = await self._headers()
            if length is None:
                self._report_skipped()
                return None
            self._report_skipped()
            body = await self._body(length)
            if body is not None:
                return body

    async def _headers(self) -> int | None:
        """Read one header block; its Content-Length (None at the end of the stream)."""
        length: int | None = None
        headers = 0
        while True:
            end = self._buf.find(b"\n", 0, HEADER_LINE_LIMIT)
            if end < 0:
                if len(self._buf) >= HEADER_LINE_LIMIT:
                    self._skip_long_line()
                    length, headers = None, 0
                elif not await self._fill():
                    self._skipped += len(self._buf)
                    self._buf.clear()
                    return None
                continue
            line = bytes(self._buf[:end + 1])
            marker = line.rfind(b"Content-Length:")
            if marker > 0:
                self._skip(marker)  # junk before a header on the same line
                length, headers = None, 0
                continue
            if line in (b"\r\n", b"\n"):
                del self._buf[:end + 1]
                if length is not None:
                    return length
                self._skipped += len(line) + headers  # a header block without a Content-Length
                headers = 0
                continue
            header = _HEADER.fullmatch(line)
            if header is None:
                self._skip(end + 1)
                length, headers = None, 0
                continue
            del self._buf[:end + 1]
            headers += len(line)
            if header.group(1).lower() == b"content-length":
                length = self._length(header.group(2))

    def _length(self, value: bytes) -> int | None:
        if not value.isdigit() or len(value) > 18:
            self._skip_reason = self._skip_reason or f"a Content-Length that is not a byte count: {value[:40]!r}"
            return None
        return int(value)

    def _skip_long_line(self) -> None:
        """Skip (part of) a line longer than HEADER_LINE_LIMIT, up to where a header may start:
        the last `Content-Length:` of the line, or the line's end."""
        newline = self._buf.find(b"\n")
        end = newline + 1 if newline >= 0 else len(self._buf)
        marker = self._buf.rfind(b"Content-Length:", 0, end)
        if marker > 0 and end - marker <= HEADER_LINE_LIMIT:
            self._skip(marker)
        elif newline >= 0:
            self._skip(end)
        else:
            self._skip(max(1, len(self._buf) - _MARKER_TAIL))

    async def _body(self, length: int) -> Body | None:
        """LENGTH bytes of body, cut short where another message's header shows inside them."""
        keep = length <= BODY_LIMIT
        scanned = 0
        consumed = 0  # bytes dropped so far (skipping a body over the limit)
        while True:
            window = min(len(self._buf), length - consumed)
            start, end = max(0, scanned - _MARKER_TAIL), window + _MARKER_TAIL
            # A header ends with a line break, which compact JSON never has: most bodies are
            # searched for one (memchr) and never by the regular expression (3x slower on 10 MB).
            header = _HEADER_IN_BODY.search(self._buf, start, end) if self._buf.find(b"\n", start, end) >= 0 else None
            if header is not None and header.start() < window:
                data = self._take(header.start())
                problem = (f"a message of {consumed + len(data)} bytes, shorter than its "
                           f"Content-Length of {length}: another header starts inside it")
                if not keep:
                    self._on_bad(f"a message of {length} bytes, over the limit of {BODY_LIMIT}: skipped")
                    return None
                return Body(data, problem)
            if window == length - consumed:
                data = self._take(window)
                if not keep:
                    self._on_bad(f"a message of {length} bytes, over the limit of {BODY_LIMIT}: skipped")
                    return None
                return Body(data)
            scanned = window
            if not keep and window > CHUNK * 4:
                drop = window - _MARKER_TAIL
                del self._buf[:drop]
                consumed += drop
                scanned -= drop
            if not await self._fill():
                self._on_bad(f"the stream ended inside a message ({consumed + len(self._buf)} of {length} bytes)")
                self._buf.clear()
                return None


# Bodies -----------------------------------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
MAX_DEPTH = 128  # deeper than any LSP message; our handlers and pygls's converter recurse


class BadMessage(Exception):
    """A body that cannot be a JSON-RPC message; ENVELOPE holds its top-level fields when they
    could be read (enough to answer a request with its own id)."""

    def __init__(self, reason: str, envelope: dict | None = None) -> None:
        super().__init__(reason)
        self.reason, self.envelope = reason, envelope


def decode(body: bytes | bytearray) -> tuple[Any, bytes | bytearray, list[str]]:
    """The JSON value of BODY, the bytes after it that belong to the stream (a Content-Length
    too large), and what is wrong with its text (not UTF-8, lone surrogates), which the caller
    decides about. Raises BadMessage when BODY is not JSON or is nested too deeply."""
    problems: list[str] = []
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        text = body.decode("utf-8", "replace")
        problems.append("bytes that are not UTF-8")
    rest = b""
    try:
        value = json.loads(text)
    except RecursionError:
        raise BadMessage(f"nested deeper than {MAX_DEPTH} levels", _shallow_envelope(text)) from None
    except ValueError as err:
        value, rest = _value_and_rest(text, body, err, bool(problems))
    if _depth(value) > MAX_DEPTH:
        raise BadMessage(f"nested deeper than {MAX_DEPTH} levels", _top_fields(value))
    if _has_lone_surrogate(value, body):
        problems.append("lone surrogates (\\ud800-\\udfff)")
    return value, rest, problems


def _value_and_rest(text: str, body: bytes | bytearray, err: ValueError, replaced: bool) -> tuple[Any, bytes | bytearray]:
    """One complete JSON value at the start of TEXT, and the bytes of BODY after it."""
    start = len(text) - len(text.lstrip())
    try:
        value, end = json.JSONDecoder().raw_decode(text, start)
    except RecursionError:
        raise BadMessage(f"nested deeper than {MAX_DEPTH} levels", _shallow_envelope(text)) from None
    except ValueError:
        raise BadMessage(f"not JSON ({err})") from None
    if replaced:  # byte offsets are lost: nothing goes back to the stream
        return value, b""
    return value, body[len(text[:end].encode("utf-8")):].lstrip()


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list):
            continue
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            return depth
        stack.extend((child, depth + 1) for child in item if isinstance(child, (dict, list)))
    return deepest


def _top_fields(value: Any) -> dict | None:
    if not isinstance(value, dict):
        return None
    return {k: v for k, v in value.items() if k in ("jsonrpc", "id", "method")}


def _shallow_envelope(text: str) -> dict | None:
    """The top-level fields of a JSON object too deep to parse, nested values read as null."""
    parts: list[str] = []
    depth, last = 0, 0
    for token in _TOKEN.finditer(text):
        t = token.group()
        if t[0] == '"':
            continue
        if t in "[{":
            depth += 1
            if depth == 2:
                parts.append(text[last:token.start()])
        else:
            if depth == 2:
                parts.append("null")
                last = token.end()
            depth -= 1
    parts.append(text[last:])
    try:
        return _top_fields(json.loads("".join(parts)))
    except (ValueError, RecursionError):
        return None


def _has_lone_surrogate(value: Any, body: bytes | bytearray) -> bool:
    """Whether a string of VALUE (decoded from BODY) holds a lone surrogate. Only a string that is
    not ASCII can (which costs nothing to tell), and only when BODY escapes one: a 10 MB text is
    not searched on every change."""
    stack, wide = [value], []
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii():
                wide.append(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return bool(wide) and (b"\\ud" in body or b"\\uD" in body) and any(_SURROGATE.search(s) for s in wide)


def replace_surrogates(value: Any) -> Any:
    """VALUE with every lone surrogate in its strings replaced by U+FFFD (one UTF-16 unit for
    one: positions in the text stay right)."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {replace_surrogates(k): replace_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [replace_surrogates(v) for v in value]
    return value
