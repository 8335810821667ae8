"""Every use of another library's private API, in one place, with why it is needed.

pygls 2 (pyproject: `pygls>=2.0,<3`; tests/unit/test_compat.py pins the behaviour below):

- `LanguageServer._stop_event`: the event pygls's own `start_io` creates and `shutdown()` sets.
  The server reads stdin with its own framing (stdio.py), so it creates that event the same way
  and stops its loop when it is set (`exit`).
- `JsonRPCProtocol._send_response`: the only way to answer a request pygls cannot structure
  (server.py) or that the reader refuses before pygls sees it (stdio.py).
- `TextDocument._apply_incremental_change` and `TextDocument._source`: pygls applies an
  incremental change by writing the whole document back line by line in Python, on the event
  loop; for a 10 MB buffer that loop, interrupted by the worker threads every 5 ms, kept the loop
  from answering anything for 0.9-1.7 s per change. `apply_incremental_change` gives the same
  text with a few slices; `fast_incremental_changes` puts it in pygls's place.
- `JsonRPCProtocol._shutdown`: true once `shutdown` was handled. pygls then drops every other
  message without an answer (upstream: openlawlibrary/pygls#605); LSP says requests get
  InvalidRequest, so the reader answers them itself.

watchfiles (pyproject: `watchfiles>=0.21`):

- `watchfiles._rust_notify.RustNotify`: what `watchfiles.watch` is built on. The notifier
  (notify.py) needs what `watch` does not give: a non-recursive watch of a list of directories
  whose watches are in place when the constructor returns, and one wait at a time with a timeout,
  so that a watch can be retired and replaced without losing changes.
"""

from __future__ import annotations

import threading
import weakref
from itertools import islice
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCProtocol
from pygls.server import JsonRPCServer
from pygls.workspace import TextDocument


def new_stop_event(server: JsonRPCServer) -> threading.Event:
    """A fresh stop event for SERVER, set by its `shutdown()` (as pygls's `start_io` does)."""
    server._stop_event = event = threading.Event()
    return event


def stop_requested(server: JsonRPCServer) -> bool:
    """SERVER was shut down (`exit`, or `shutdown()` called) since `new_stop_event`."""
    event = server._stop_event
    return event is not None and event.is_set()


def send_error(protocol: JsonRPCProtocol, msg_id: Any, error: JsonRpcException) -> None:
    """Answer request MSG_ID with ERROR."""
    protocol._send_response(msg_id, None, error.to_response_error())


def shutdown_requested(protocol: JsonRPCProtocol) -> bool:
    """The client sent `shutdown`: pygls answers nothing but `exit` from now on."""
    return bool(getattr(protocol, "_shutdown", False))


def apply_incremental_change(doc: TextDocument, change: Any) -> None:
    """Apply incremental CHANGE to DOC exactly as pygls 2.1 does: its range clamped to the text
    by the document's position codec; a range that ends on a line before it starts changes
    nothing; on one line, the text between the two columns is replaced (none if reversed).
    A text whose only line break is "\n" is not split into lines (pygls's `lines`, 48 ms for a
    10 MB buffer): the two lines of the range are found by counting line breaks."""
    source = doc.source
    if not source or (_LF_ONLY.get(doc) is not source and _other_breaks(source)):
        return _apply_on_lines(doc, change)
    codec = doc.position_codec
    (start_line, head), (end_line, tail) = (_locate(source, codec, p) for p in (change.range.start, change.range.end))
    if end_line >= start_line:
        doc._source = source[:head] + change.text + source[tail:]
    if not _other_breaks(change.text):  # then neither has the new text: the next change skips the search
        _LF_ONLY[doc] = doc._source


# str.splitlines's line breaks other than "\n" (the ASCII ones first).
_OTHER_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
_ASCII_BREAKS = _OTHER_BREAKS[:6]
# The text of each document last known to break lines with "\n" only: searching a 10 MB text for
# the other breaks took longer than the rest of a change.
_LF_ONLY: weakref.WeakKeyDictionary[TextDocument, str] = weakref.WeakKeyDictionary()


def _other_breaks(text: str) -> bool:
    return any(c in text for c in (_ASCII_BREAKS if text.isascii() else _OTHER_BREAKS))


def _locate(source: str, codec: Any, pos: Any) -> tuple[int, int]:
    """The line and the offset in SOURCE (a text whose lines end with "\n") of client position
    POS, clamped as pygls's codec clamps it: past the last line means the end of the text."""
    begin = _line_start(source, pos.line)
    if begin < 0 or begin == len(source):
        return source.count("\n") - source.endswith("\n"), len(source)
    end = source.find("\n", begin) + 1 or len(source)
    line = source[begin:end]
    column = codec.position_from_client_units([line], types.Position(line=0, character=pos.character)).character
    return pos.line, begin + min(column, len(line))


def _line_start(source: str, line: int) -> int:
    """The offset of line LINE of SOURCE (counting "\n" only), -1 when it has fewer line breaks."""
    pos, chunk = 0, 1 << 14
    while line:
        found = source.count("\n", pos, pos + chunk)
        if found >= line:
            for _ in range(line):
                pos = source.find("\n", pos) + 1
            return pos
        if pos + chunk >= len(source):
            return -1
        line -= found
        pos += chunk
    return pos


def _apply_on_lines(doc: TextDocument, change: Any) -> None:
    """`apply_incremental_change` for any text, with pygls's `lines`."""
    lines = doc.lines
    rng = doc.position_codec.range_from_client_units(lines, change.range)
    start, end = rng.start, rng.end
    if start.line == len(lines):  # an empty document
        doc._source = doc.source + change.text
    elif end.line >= start.line:
        head = sum(map(len, islice(lines, start.line)))
        tail = head + sum(map(len, islice(lines, start.line, end.line)))
        source = doc.source
        doc._source = (source[:head + min(start.character, len(lines[start.line]))] + change.text
                       + source[tail + min(end.character, len(lines[end.line])):])


PYGLS_INCREMENTAL_CHANGE = TextDocument._apply_incremental_change  # pygls's own, which tests compare with


def fast_incremental_changes() -> None:
    """Have pygls apply incremental changes with `apply_incremental_change` (process-wide)."""
    TextDocument._apply_incremental_change = apply_incremental_change


def rust_notify() -> Any:
    """watchfiles' `RustNotify` class; ImportError when watchfiles is not installed."""
    from watchfiles._rust_notify import RustNotify

    return RustNotify
