"""Serving LSP over stdin/stdout without a thread hop per line.

pygls reads stdin through its thread pool, one `readline` or `read` at a time: three hand-offs
between threads for every message, which cost more than answering `memory/effective` itself.
When stdin is a pipe or a socket (what every editor gives a language server), the event loop
reads it directly instead; the loop that parses and dispatches messages is pygls's own
(`pygls.io_.run_async`). stdout's pipe buffer is enlarged so that writing a large answer does not
wait for the client to drain it. Anything else falls back to pygls's `start_io`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import sys
import threading
from typing import BinaryIO

from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer

log = logging.getLogger("memory_lens.lsp")
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
    if sys.platform == "win32" or not _is_pipe_or_socket(stdin):
        server.start_io()
        return
    enlarge_pipe(stdout)
    # What pygls's start_io does, with the event loop as the reader.
    server._stop_event = threading.Event()
    server.protocol.set_writer(StdoutWriter(stdout))

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=PIPE_BYTES)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
        await run_async(stop_event=server._stop_event, reader=reader, protocol=server.protocol,
                        logger=logging.getLogger("pygls.server"), error_handler=server.report_server_error)

    try:
        asyncio.run(serve())
    except (BrokenPipeError, asyncio.IncompleteReadError):
        log.error("the connection to the client is lost; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
