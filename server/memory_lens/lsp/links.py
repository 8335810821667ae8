"""textDocument/documentLink: each `@path` import of a memory file links to the file it imports.

The mentions are the ones Gemini CLI imports (`core/imports.py`): not those in backtick code,
not an `@` inside a word. A mention whose file can be read links to it, wherever it resolved;
one that failed (missing, outside the project root, a URL) has no link and gets a diagnostic.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.workspace import TextDocument

from memory_lens.core.imports import IMPORTED, ImportNode, expand_imports
from memory_lens.lsp.convert import path_to_uri, uri_to_path

if TYPE_CHECKING:
    from memory_lens.lsp.server import MemoryLensServer


def document_mentions(ls: MemoryLensServer, uri: str) -> tuple[TextDocument, tuple[ImportNode, ...]] | None:
    """The memory document URI (its open buffer, else the file) and its own import mentions;
    None for a document that is not a memory file or cannot be read."""
    path = uri_to_path(uri)
    if not ls.is_memory_path(path):
        return None
    assert path is not None
    doc = ls.document(uri)
    if doc is None:
        return None
    return doc, expand_imports(doc.source, path).imports


def mention_range(doc: TextDocument, node: ImportNode) -> types.Range:
    """The range of `@path` in client units."""
    return types.Range(start=doc.client_position_at_offset(node.start),
                       end=doc.client_position_at_offset(node.end))


def target_uri(node: ImportNode) -> str | None:
    """The URI a mention links to: the file it imported, else None."""
    return path_to_uri(node.path) if node.status == IMPORTED and isinstance(node.path, Path) else None


def register(server: MemoryLensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK, types.DocumentLinkOptions(resolve_provider=False))
    def document_links(ls: MemoryLensServer, params: types.DocumentLinkParams) -> list[types.DocumentLink] | None:
        found = document_mentions(ls, params.text_document.uri)
        if found is None:
            return None
        doc, nodes = found
        tooltips = tooltips_supported(ls)
        return [types.DocumentLink(range=mention_range(doc, node), target=uri,
                                   tooltip=f"Imports {node.path}" if tooltips else None)
                for node in nodes if (uri := target_uri(node)) is not None]


def tooltips_supported(ls: MemoryLensServer) -> bool:
    """`documentLink.tooltipSupport`: a tooltip sent to a client without it breaks the spec."""
    try:
        return bool(ls.client_capabilities.text_document.document_link.tooltip_support)  # type: ignore[union-attr]
    except AttributeError:
        return False
