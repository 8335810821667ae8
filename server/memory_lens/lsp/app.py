"""The one place where the language server is put together and run: `build_server` makes a
`MemoryLensServer` with its live engine and watcher and registers every feature module;
`run_stdio` serves it on stdin/stdout (`memory-lens serve`)."""

from __future__ import annotations

import logging
import sys

from memory_lens.core.settings import Settings
from memory_lens.lsp.server import MemoryLensServer, answered_on_purpose


def build_server(settings: Settings, debug: bool = False) -> MemoryLensServer:
    """A server with every feature registered."""
    from memory_lens.lsp import (
        code_actions,
        code_lens,
        commands,
        completion,
        definition,
        documents,
        effective,
        explain,
        hover,
        lifecycle,
        links,
        notes,
        symbols,
        watch,
    )
    from memory_lens.lsp.live import LiveEngine
    from memory_lens.lsp.watch import Watcher

    server = MemoryLensServer(settings, debug)
    server.live = LiveEngine(server)
    server.watcher = Watcher(server)
    for feature in (lifecycle, documents, watch, effective, explain, commands, notes, code_actions, hover, code_lens, symbols,
                    links, definition, completion):
        feature.register(server)
    return server


class _QuietExpectedErrors(logging.Filter):
    """Drop pygls's tracebacks for errors we answer on purpose (bad params, failed requests):
    the client gets them as JSON-RPC errors already."""

    def filter(self, record: logging.LogRecord) -> bool:
        if answered_on_purpose(record.exc_info[1] if record.exc_info else None):
            return False
        if not record.name.startswith("pygls"):
            return True
        message = record.getMessage()
        if message.startswith("Unable to deserialize message") and "ClassValidationError" in message:
            return False  # params of the wrong shape: answered with InvalidParams (see MemoryLensProtocol)
        return "Invalid Params" not in message


def run_stdio(settings: Settings, debug: bool = False) -> None:
    """Serve LSP on stdin/stdout until the client exits. Logs go to stderr only."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("memory-lens: %(levelname)s: %(message)s"))
    if not debug:
        handler.addFilter(_QuietExpectedErrors())
    logging.basicConfig(level=logging.DEBUG if debug else logging.WARNING, handlers=[handler])
    logging.getLogger("pygls").setLevel(logging.DEBUG if debug else logging.WARNING)
    from memory_lens.lsp.stdio import serve_stdio
    from memory_lens.startup import collector_paused

    with collector_paused():  # building the server allocates only long-lived objects
        server = build_server(settings, debug)
    serve_stdio(server)
