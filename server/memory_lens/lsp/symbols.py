"""textDocument/documentSymbol (sections and entries) and workspace/symbol (every entry of every
memory file, the global ones included, then the notes of the workspace's project and the global
notes).

A document gets at most `MAX_DOCUMENT_SYMBOLS` symbols, in line order; when there are more, the
last one is named "N more entries and sections not shown". A text over `LARGE_TEXT_CHARS` is
outlined as far as its first `LARGE_TEXT_CHARS` characters only (the last symbol then says so):
parsing all of a 10 MB buffer took seconds and a gigabyte. The outline is built on a worker
thread, so a large file does not hold up other requests."""

from __future__ import annotations

import asyncio
from itertools import islice
from typing import TYPE_CHECKING, Iterator

from lsprotocol import types

from memory_lens.core.large_files import LARGE_TEXT_CHARS, is_large_text
from memory_lens.core.markdown import Entry, Outline, parse, split_lines
from memory_lens.core.markdown import normalize
from memory_lens.lsp.convert import lines_range, path_to_uri, uri_to_path

if TYPE_CHECKING:
    from memory_lens.lsp.server import MemoryLensServer

MAX_WORKSPACE_RESULTS = 500
MAX_DOCUMENT_SYMBOLS = 2000  # per document, the "not shown" symbol included
MAX_NOTE_RESULTS = 100


def entry_name(entry: Entry) -> str:
    first = entry.text.split("\n", 1)[0].strip() or "(empty entry)"
    return first if len(first) <= 80 else first[:79] + "…"


def outline_shown(source: str) -> tuple[Outline, bool]:
    """The outline of SOURCE that its symbols show, and whether it stops short of the end: a
    text over `LARGE_TEXT_CHARS` is outlined up to its last line break within that many
    characters."""
    if not is_large_text(source):
        return parse(source), False
    end = source.rfind("\n", 0, LARGE_TEXT_CHARS) + 1
    return parse(source[:end or LARGE_TEXT_CHARS]), True


def document_symbols(outline: Outline, encoding: object, cut: bool = False) -> list[types.DocumentSymbol]:
    """Headings nest by level; entries sit under the heading they follow. CUT: OUTLINE is only
    the first part of a large text (`outline_shown`)."""
    lines = outline.lines
    roots: list[types.DocumentSymbol] = []
    stack: list[tuple[int, types.DocumentSymbol]] = []
    items = sorted([(h.line, "h", h) for h in outline.headings] + [(e.line, "e", e) for e in outline.entries],
                   key=lambda t: t[0])
    last = max(len(lines) - 1, 0)
    hidden = len(items) - (MAX_DOCUMENT_SYMBOLS - 1)
    if hidden > 1 or cut:
        items = items[:MAX_DOCUMENT_SYMBOLS - 1]
    for line, kind, item in items:
        if kind == "h":
            end = outline.section_end(item.line, item.level)
            sym = types.DocumentSymbol(
                name=item.title or "(untitled section)", kind=types.SymbolKind.Namespace,
                range=lines_range(lines, item.line, min(max(end - 1, item.line), last), encoding),
                selection_range=lines_range(lines, item.line, item.line, encoding), children=[])
            while stack and stack[-1][0] >= item.level:
                stack.pop()
            (stack[-1][1].children if stack else roots).append(sym)
            stack.append((item.level, sym))
        else:
            sym = types.DocumentSymbol(
                name=entry_name(item), kind=types.SymbolKind.String,
                range=lines_range(lines, item.line, item.end_line, encoding),
                selection_range=lines_range(lines, item.line, item.line, encoding))
            (stack[-1][1].children if stack else roots).append(sym)
    if hidden > 1 or cut:
        after = items[-1][0] + 1 if items and items[-1][0] < last else last if items else 0
        rng = lines_range(lines, after, max(after, last), encoding)
        roots.append(types.DocumentSymbol(name=not_shown_name(hidden, cut), kind=types.SymbolKind.Null,
                                          range=rng, selection_range=rng))
    return roots


def not_shown_name(hidden: int, cut: bool = False) -> str:
    if cut:
        return (f"entries and sections not shown from here on (a file over {LARGE_TEXT_CHARS} characters is "
                f"outlined as far as its first {LARGE_TEXT_CHARS} characters and {MAX_DOCUMENT_SYMBOLS} symbols)")
    return f"{hidden} more entries and sections not shown (at most {MAX_DOCUMENT_SYMBOLS} symbols per file)"


def flat_symbols(uri: str, outline: Outline, encoding: object, cut: bool = False) -> list[types.SymbolInformation]:
    """Headings then entries, at most `MAX_DOCUMENT_SYMBOLS` in all (the last one then says how
    many are not shown, or, when CUT, that OUTLINE is only the first part of a large text)."""
    lines = outline.lines

    def each() -> Iterator[types.SymbolInformation]:
        for h in outline.headings:
            yield types.SymbolInformation(name=h.title or "(untitled section)", kind=types.SymbolKind.Namespace,
                                          location=types.Location(uri=uri, range=lines_range(lines, h.line, h.line, encoding)))
        for e in outline.entries:
            yield types.SymbolInformation(name=entry_name(e), kind=types.SymbolKind.String,
                                          location=types.Location(uri=uri, range=lines_range(lines, e.line, e.end_line, encoding)))

    out = list(islice(each(), MAX_DOCUMENT_SYMBOLS + 1))
    if len(out) <= MAX_DOCUMENT_SYMBOLS and not cut:
        return out
    out = out[:MAX_DOCUMENT_SYMBOLS - 1]
    hidden = len(outline.headings) + len(outline.entries) - len(out)
    last = max(len(lines) - 1, 0)
    out.append(types.SymbolInformation(name=not_shown_name(hidden, cut), kind=types.SymbolKind.Null,
                                       location=types.Location(uri=uri, range=lines_range(lines, last, last, encoding))))
    return out


def search_entries(ls: MemoryLensServer, query: str) -> list[types.SymbolInformation]:
    """Entries of every known memory file whose text contains QUERY (normalised), in path order."""
    wanted = normalize(query) if query.strip() else ""
    results: list[types.SymbolInformation] = []
    docs = ls.open_memory_docs()
    for path in sorted(ls.store.known()):
        if path not in docs and not ls.store.entries_contain(path, wanted):
            continue  # on disk, no entry matches: answered by the entry cache, nothing parsed
        text, _ = ls.current_text(path, docs)
        if text is None:  # unusable, or an open buffer over the size limit: not parsed
            continue
        indexed = ls.store.entries(path, text)
        if not any(wanted in key for key in indexed.keys):
            continue
        matches = [e for e in indexed.entries if wanted in e.normalized]
        lines = split_lines(text)
        uri = path_to_uri(path)
        for e in matches:
            results.append(types.SymbolInformation(
                name=entry_name(e), kind=types.SymbolKind.String, container_name=str(path),
                location=types.Location(uri=uri, range=lines_range(lines, e.line, e.end_line, ls.position_encoding))))
            if len(results) >= MAX_WORKSPACE_RESULTS:
                return results
    return results


def register(server: MemoryLensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def document_symbol(ls: MemoryLensServer, params: types.DocumentSymbolParams):
        uri = params.text_document.uri
        path = uri_to_path(uri)
        if not ls.is_memory_path(path):
            return []
        doc = ls.document(uri)  # the open buffer, else the file read safely; None if unusable
        if doc is None or len(doc.source) > ls.settings.max_file_bytes:  # too large: not parsed
            return []
        source, encoding = doc.source, ls.position_encoding
        hierarchical = ls.supports("text_document.document_symbol.hierarchical_document_symbol_support")

        def symbols() -> list:
            outline, cut = outline_shown(source)
            return (document_symbols(outline, encoding, cut) if hierarchical
                    else flat_symbols(uri, outline, encoding, cut))

        return await asyncio.to_thread(symbols)

    @server.feature(types.WORKSPACE_SYMBOL)
    async def workspace_symbol(ls: MemoryLensServer, params: types.WorkspaceSymbolParams):
        query = params.query or ""
        entries = await asyncio.to_thread(search_entries, ls, query)  # parses matching files: off the loop
        return entries + await search_notes(ls, query)


async def search_notes(ls: MemoryLensServer, query: str) -> list[types.SymbolInformation]:
    """Notes of the first workspace folder's project and global notes whose name, tags or content
    have words starting with the words of QUERY (every note for an empty query), best first. A
    note's location is its Markdown document for clients that open `memory-lens-note:` URIs
    (setting `noteDocuments`), else its JSON file."""
    import asyncio

    from memory_lens.core.notes import NoteError
    from memory_lens.core.notes.fulltext import tokenize
    from memory_lens.lsp.notes import document_uri, hub

    store = hub(ls).store_for({})
    words = tokenize(query)
    try:
        if words:
            page = await asyncio.to_thread(store.search, " ".join(w + "*" for w in words), "both", (), MAX_NOTE_RESULTS)
        else:
            page = await asyncio.to_thread(store.list, "", (), "both", MAX_NOTE_RESULTS)
    except NoteError as err:
        ls.warn_once(f"notes: {err}")
        return []
    zero = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))
    out = []
    for note in page.notes:
        uri = (document_uri(note.scope, note.name, store.project_root) if ls.config.note_documents
               else path_to_uri(note.path))
        tags = f" · {', '.join(note.tags)}" if note.tags else ""
        out.append(types.SymbolInformation(
            name=note.name, kind=types.SymbolKind.Object, container_name=f"{note.scope.value} note{tags}",
            location=types.Location(uri=uri, range=zero)))
    return out
