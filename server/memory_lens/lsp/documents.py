"""textDocument/didOpen, didChange, didSave, didClose for memory files.

Open memory buffers are checked as typed (diagnostics carry the document version), on a worker
thread: a large buffer never holds up other requests; one over `LARGE_TEXT_CHARS` is checked
once its edits pause (`LARGE_CHECK_PAUSE`). One check per document runs at a time;
edits made meanwhile are checked once it ends, and diagnostics of a version the buffer has left
behind are never published. A save changes what agents load, so it counts as a change on disk. Closing a memory file outside the
workspace withdraws its diagnostics; inside, they fall back to the file on disk.
"""

from __future__ import annotations

import asyncio
import functools
from typing import TYPE_CHECKING

from lsprotocol import types

from memory_lens.core.large_files import is_large_text
from memory_lens.lsp import diagnostics
from memory_lens.lsp.compat import fast_incremental_changes
from memory_lens.lsp.convert import uri_to_path
from memory_lens.lsp.note_diagnostics import is_note_document, note_diagnostics

if TYPE_CHECKING:
    from memory_lens.lsp.server import MemoryLensServer

# A buffer over LARGE_TEXT_CHARS is checked only after this many seconds without a change: in a
# storm of changes to a 10 MB buffer, checking each version took the server 70 ms of CPU per change,
# and answering other requests waited on it (docs/reliability.md).
LARGE_CHECK_PAUSE = 0.3
# (server, URI) of the documents being checked -> whether to check again when the check ends.
_checking: dict[tuple[int, str], bool] = {}
_forced: dict[tuple[int, str], bool] = {}  # a check asked for meanwhile wanted to force publishing
async def check_open_document(ls: MemoryLensServer, uri: str, force: bool = False) -> None:
    """Check the open buffer URI (a memory file) off the event loop and publish its diagnostics.
    Nothing for a document that is not open (a didChange without changes for it): its file is
    never read here. FORCE publishes even diagnostics equal to the last ones sent."""
    key = (id(ls), uri)
    if key in _checking:  # the running check starts again with the newest text when it ends
        _checking[key] = True
        _forced[key] = _forced.get(key, False) or force
        return
    _checking[key] = False
    try:
        while True:
            path = uri_to_path(uri)
            doc = ls.open_text_document(uri)
            if path is None or doc is None:
                return
            if ls.is_memory_path(path) or ls.is_agent_path(path):
                check = functools.partial(diagnostics.diagnostics_for, generation=ls.watcher.generation)
            elif diagnostics.is_instruction_file(path, ls.settings):  # another agent's: not-loaded only
                check = diagnostics.not_loaded_diagnostics
            elif is_note_document(path, ls.settings):
                check = note_diagnostics
            else:  # none of these (any more: the settings changed): nothing of it stays shown
                diagnostics.clear(ls, path)
                return
            if is_large_text(doc.source):  # checked once its edits pause: each check reads all of it
                await asyncio.sleep(LARGE_CHECK_PAUSE)
                if _checking[key]:
                    _checking[key] = False
                    continue
            version, source, store = doc.version, doc.source, ls.store
            diags = await asyncio.to_thread(check, store, path, source, ls.position_encoding)
            force = force or _forced.pop(key, False)
            if _checking[key]:
                _checking[key] = False
                continue
            current = ls.open_text_document(uri)
            if current is not None and current.version == version and store is ls.store:
                diagnostics.publish(ls, path, diags, version, force=force)
            return
    finally:
        _checking.pop(key, None)
        _forced.pop(key, None)



def register(server: MemoryLensServer) -> None:
    fast_incremental_changes()  # pygls's own way blocks the event loop on a large buffer

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: MemoryLensServer, params: types.DidOpenTextDocumentParams) -> None:
        await check_open_document(ls, params.text_document.uri, force=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: MemoryLensServer, params: types.DidChangeTextDocumentParams) -> None:
        await check_open_document(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: MemoryLensServer, params: types.DidSaveTextDocumentParams) -> None:
        path = uri_to_path(params.text_document.uri)
        if ls.is_memory_path(path) or ls.is_agent_path(path):
            assert path is not None
            ls.store.invalidate([path])
            ls.live.request_paths({path})

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: MemoryLensServer, params: types.DidCloseTextDocumentParams) -> None:
        path = uri_to_path(params.text_document.uri)
        if path is None:
            return
        if not (ls.is_memory_path(path) or ls.is_agent_path(path)):
            diagnostics.clear(ls, path)  # an open instruction file's not-loaded, if any
            return
        if path in ls.store.known() or path in ls.store.agent_files():
            diags = await asyncio.to_thread(diagnostics.diagnostics_for, ls.store, path, None, ls.position_encoding)
            if ls.open_text_document(params.text_document.uri) is None:  # not opened again meanwhile
                diagnostics.publish(ls, path, diags)
        else:
            diagnostics.clear(ls, path)
