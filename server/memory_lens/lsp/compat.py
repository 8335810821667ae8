"""Every use of another library's private API, in one place, with why it is needed.

pygls 2 (pyproject: `pygls>=2.0,<3`; tests/unit/test_compat.py pins the behaviour below):

- `LanguageServer._stop_event`: the event pygls's own `start_io` creates and `shutdown()` sets.
  The server reads stdin with its own framing (stdio.py), so it creates that event the same way
  and stops its loop when it is set (`exit`).
- `JsonRPCProtocol._send_response`: the only way to answer a request pygls cannot structure
  (server.py) or that the reader refuses before pygls sees it (stdio.py).
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
from typing import Any

from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCProtocol
from pygls.server import JsonRPCServer


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


def rust_notify() -> Any:
    """watchfiles' `RustNotify` class; ImportError when watchfiles is not installed."""
    from watchfiles._rust_notify import RustNotify

    return RustNotify
