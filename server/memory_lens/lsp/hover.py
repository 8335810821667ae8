"""textDocument/hover in a memory file.

On an entry: where else the same entry (normalised) appears: duplicates in this file, copies
in more general files of the chain, and copies in other memory files, with links. On the
first line: a summary of the effective memory at that folder (sources, tokens, budget).
Computed on a worker thread, as it reads every known memory file.
"""

from __future__ import annotations

import asyncio
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from memory_lens.core.files import realpath
from memory_lens.core.imports import IMPORTED, expand_imports, mention_at
from memory_lens.core.large_files import is_large_text
from memory_lens.core.markdown import parse
from memory_lens.core.merge import Memory
from memory_lens.core.discovery import document_target
from memory_lens.lsp.convert import path_to_uri, uri_to_path

if TYPE_CHECKING:
    from memory_lens.lsp.server import MemoryLensServer


def link(path: Path, line: int) -> str:
    """A Markdown link to 0-based LINE of PATH."""
    return f"[{path}:{line + 1}]({path_to_uri(path)}#L{line + 1})"


def summary(memory: Memory, budget_bytes: int | None, budget_tokens: int | None) -> str:
    loaded = [s for s in memory.sources if s.readable and s.content]
    limit = []
    if budget_bytes is not None:
        limit.append(f"{memory.size_bytes} of {budget_bytes} bytes")
    if budget_tokens is not None:
        limit.append(f"~{memory.tokens} of {budget_tokens} tokens")
    lines = [f"**Effective memory here** ({memory.target_dir}): {len(loaded)} file"
             f"{'s' if len(loaded) != 1 else ''} · ~{memory.tokens} tokens"
             + (f" · {', '.join(limit)}" if limit else ""), ""]
    for i, s in enumerate(memory.sources, 1):
        state = f"~{s.tokens} tokens" if s.readable else f"**unreadable**: {s.reason}"
        lines.append(f"{i}. `{s.scope.value}` [{s.path}]({path_to_uri(s.path)}) — {state}")
    if not memory.sources:
        lines.append("No memory file applies here.")
    return "\n".join(lines)


def entry_hover(ls: MemoryLensServer, path: Path, directory: Path, text: str, line: int) -> str | None:
    """Where else the entry on LINE of memory file PATH (in DIRECTORY, with TEXT) appears;
    nothing for a text over `LARGE_TEXT_CHARS` (not analysed entry by entry)."""
    if is_large_text(text):
        return None
    outline = parse(text)
    entry = outline.entry_at(line)
    if entry is None:
        return None
    key = entry.normalized
    if not key:
        return None
    real = realpath(path)
    out: list[str] = []
    here = [e.line for e in outline.entries if e.normalized == key and e.line != entry.line]
    out += [f"- duplicate in this file: {link(path, n)}" for n in here]
    memory = ls.store.memory_for(directory)
    general = []
    for s in memory.sources:
        if s.real_path is not None and os.fspath(s.real_path) == real:
            break
        general.append(s.path)
    for hit in ls.store.find_hits(key, general):
        out.append(f"- more general copy (loads first): {link(hit.path, hit.line)}")
    others = sorted(p for p in ls.store.known() if p not in general and realpath(p) != real)
    for hit in ls.store.find_hits(key, others):
        out.append(f"- also in {link(hit.path, hit.line)}")
    head = "**Memory entry**"
    return head + (" — also appears:\n\n" + "\n".join(out) if out else " — appears only here.")


def import_hover(path: Path, text: str, offset: int) -> str | None:
    """On an `@path` import of memory file PATH (with TEXT): what it imports and how much text
    it pulls in (its own imports included), or why it fails."""
    if "@" not in text:
        return None
    node = mention_at(expand_imports(text, path).imports, offset)
    if node is None:
        return None
    if node.status != IMPORTED:
        return f"**Import** `@{node.target}` fails: {node.message}"
    nested = sum(1 for _ in _descendants(node.children))
    return (f"**Import** `@{node.target}` → [{node.path}]({path_to_uri(node.path)}): pulls in "
            f"{node.inserted_bytes} bytes, ~{math.ceil(node.inserted_chars / 4)} tokens"
            + (f" ({nested} nested import{'s' if nested != 1 else ''} included)" if nested else ""))


def _descendants(nodes):
    for node in nodes:
        yield node
        yield from _descendants(node.children)


def markup_kind(ls: MemoryLensServer) -> types.MarkupKind:
    """Markdown when the client renders it (or says nothing either way), else plain text."""
    try:
        formats = ls.client_capabilities.text_document.hover.content_format  # type: ignore[union-attr]
    except AttributeError:
        formats = None
    if formats and types.MarkupKind.Markdown not in formats:
        return types.MarkupKind.PlainText
    return types.MarkupKind.Markdown


def register(server: MemoryLensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: MemoryLensServer, params: types.HoverParams) -> types.Hover | None:
        # Off the event loop: the entry's hover reads every known memory file, the summary the
        # chain, an import the files it pulls in.
        return await asyncio.to_thread(hover_for, ls, params)


def hover_for(ls: MemoryLensServer, params: types.HoverParams) -> types.Hover | None:
    """The hover at PARAMS' position in a memory file (worker thread)."""
    path = uri_to_path(params.text_document.uri)
    if not ls.is_memory_path(path):
        return None
    assert path is not None
    doc = ls.document(params.text_document.uri)  # None for an unusable file: no hover
    directory = document_target(path)
    if doc is None or directory is None:
        return None
    line = params.position.line
    parts = []
    imported = import_hover(path, doc.source, doc.offset_at_position(params.position))
    if imported:
        parts.append(imported)
    entry = entry_hover(ls, path, directory, doc.source, line)
    if entry:
        parts.append(entry)
    if line == 0:
        s = ls.settings
        parts.append(summary(ls.store.memory_for(directory), s.budget_bytes, s.budget_tokens))
    if not parts:
        return None
    return types.Hover(contents=types.MarkupContent(kind=markup_kind(ls), value="\n\n---\n\n".join(parts)))
