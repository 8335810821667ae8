"""textDocument/definition on an `@path` import of a memory file: the file it imports."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from memory_lens.core.imports import mention_at
from memory_lens.lsp.links import document_mentions, mention_range, target_uri

if TYPE_CHECKING:
    from memory_lens.lsp.server import MemoryLensServer

_START = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))


def register(server: MemoryLensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: MemoryLensServer, params: types.DefinitionParams) -> list[types.LocationLink] | list[types.Location] | None:
        found = document_mentions(ls, params.text_document.uri)
        if found is None:
            return None
        doc, nodes = found
        node = mention_at(nodes, doc.offset_at_position(params.position))
        uri = None if node is None else target_uri(node)
        if node is None or uri is None:
            return None
        if not links_supported(ls):
            return [types.Location(uri=uri, range=_START)]
        return [types.LocationLink(target_uri=uri, target_range=_START, target_selection_range=_START,
                                   origin_selection_range=mention_range(doc, node))]


def links_supported(ls: MemoryLensServer) -> bool:
    """The client takes `LocationLink` results (`definition.linkSupport`); else plain locations."""
    try:
        return bool(ls.client_capabilities.text_document.definition.link_support)  # type: ignore[union-attr]
    except AttributeError:
        return False
