"""textDocument/didOpen, didChange, didSave, didClose for memory files.

Open memory buffers are checked as typed (diagnostics carry the document version). A save
changes what agents load, so it counts as a change on disk. Closing a memory file outside the
workspace withdraws its diagnostics; inside, they fall back to the file on disk.
"""

from __future__ import annotations

from lsprotocol import types

from memory_lens.lsp import diagnostics
from memory_lens.lsp.convert import uri_to_path
from memory_lens.lsp.server import MemoryLensServer


def check_open_document(ls: MemoryLensServer, uri: str, force: bool = False) -> None:
    """Check the open buffer URI (a memory file) and publish its diagnostics. Nothing for a
    document that is not open (a didChange without changes for it): its file is never read here."""
    path = uri_to_path(uri)
    doc = ls.open_text_document(uri)
    if not ls.is_memory_path(path) or doc is None:
        return
    assert path is not None
    diags = diagnostics.diagnostics_for(ls.store, path, doc.source, ls.position_encoding)
    diagnostics.publish(ls, path, diags, doc.version, force=force)


def register(server: MemoryLensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: MemoryLensServer, params: types.DidOpenTextDocumentParams) -> None:
        check_open_document(ls, params.text_document.uri, force=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: MemoryLensServer, params: types.DidChangeTextDocumentParams) -> None:
        check_open_document(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: MemoryLensServer, params: types.DidSaveTextDocumentParams) -> None:
        path = uri_to_path(params.text_document.uri)
        if ls.is_memory_path(path):
            assert path is not None
            ls.store.invalidate([path])
            ls.live.request_paths({path})

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: MemoryLensServer, params: types.DidCloseTextDocumentParams) -> None:
        path = uri_to_path(params.text_document.uri)
        if not ls.is_memory_path(path):
            return
        assert path is not None
        if path in ls.store.known():
            diags = diagnostics.diagnostics_for(ls.store, path, None, ls.position_encoding)
            diagnostics.publish(ls, path, diags)
        else:
            diagnostics.clear(ls, path)
