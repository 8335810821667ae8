"""textDocument/codeLens: "Effective memory here: N files · ~T tokens" atop each memory file.

N counts the files that contribute text at that folder; the lens runs
`memoryLens.server.effective` for the file. Lenses are refreshed (`workspace/codeLens/refresh`)
whenever memory changes on disk. Computed on a worker thread, as it reads the chain's files.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING

from lsprotocol import types

from memory_lens.core.discovery import document_target
from memory_lens.lsp import protocol
from memory_lens.lsp.convert import uri_to_path

if TYPE_CHECKING:
    from memory_lens.lsp.server import MemoryLensServer


def lens_title(files: int, tokens: int) -> str:
    return f"Effective memory here: {files} file{'s' if files != 1 else ''} · ~{tokens} tokens"


def register(server: MemoryLensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    async def code_lens(ls: MemoryLensServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        # Off the event loop: the lens reads every file of the chain.
        return await asyncio.to_thread(code_lenses_for, ls, params)


def code_lenses_for(ls: MemoryLensServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    """The lens atop a memory file (worker thread)."""
    uri = params.text_document.uri
    path = uri_to_path(uri)
    if not ls.is_memory_path(path):
        return []
    assert path is not None
    if ls.open_doc(path) is None and not os.path.lexists(path):
        return []  # an unknown URI: neither open nor on disk
    directory = document_target(path)
    if directory is None:
        return []
    memory = ls.store.memory_for(directory)
    files = sum(1 for s in memory.sources if s.readable and s.content)
    title = lens_title(files, memory.tokens)
    start = types.Position(line=0, character=0)
    return [types.CodeLens(range=types.Range(start=start, end=start),
                           command=types.Command(title=title, command=protocol.CMD_EFFECTIVE,
                                                 arguments=[{"uri": uri}]))]
