"""textDocument/documentSymbol (sections and entries; hierarchical or flat as the client
supports) and workspace/symbol (every entry of every memory file, the global one included)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from .conftest import Starter
from .harness import Session, Workspace, position_at

OUTLINE = (
    "# Title\n"            # 0
    "- top entry\n"        # 1
    "## Section A\n"       # 2
    "- a one\n"            # 3
    "- a two\n"            # 4
    "  continued\n"        # 5
    "### Sub\n"            # 6
    "- café 😀\n"           # 7
    "## Section B\n"       # 8
    "- b one\n"            # 9
)


async def document_symbols(lsp: Session, path: Path) -> list:
    return list(await lsp.client.text_document_document_symbol_async(types.DocumentSymbolParams(
        text_document=types.TextDocumentIdentifier(uri=lsp.uri(path)))) or [])


def tree(symbols: list[types.DocumentSymbol]) -> list:
    return [(s.name, s.kind, s.range.start.line, s.range.end.line, tree(list(s.children or []))) for s in symbols]


def end_of_line(lsp: Session, line: int) -> types.Position:
    lines = OUTLINE.split("\n")
    return position_at(OUTLINE, sum(len(x) + 1 for x in lines[:line]) + len(lines[line]), lsp.encoding)


async def test_document_symbols(ws: Workspace, start: Starter) -> None:
    memory_file = ws.write("work/proj/pkg/GEMINI.md", OUTLINE)
    lsp = await start()
    lsp.open(memory_file)
    symbols = await document_symbols(lsp, memory_file)
    ns, st = types.SymbolKind.Namespace, types.SymbolKind.String
    if lsp.supports("text_document.document_symbol.hierarchical_document_symbol_support"):
        assert all(isinstance(s, types.DocumentSymbol) for s in symbols)
        assert tree(symbols) == [("Title", ns, 0, 9, [
            ("top entry", st, 1, 1, []),
            ("Section A", ns, 2, 7, [
                ("a one", st, 3, 3, []),
                ("a two", st, 4, 5, []),
                ("Sub", ns, 6, 7, [("café 😀", st, 7, 7, [])]),
            ]),
            ("Section B", ns, 8, 9, [("b one", st, 9, 9, [])]),
        ])]
        cafe = symbols[0].children[1].children[2].children[0]
        assert cafe.range.end == end_of_line(lsp, 7)
        assert cafe.selection_range.start == types.Position(line=7, character=0)
    else:
        assert all(isinstance(s, types.SymbolInformation) for s in symbols)
        flat = sorted((s.location.range.start.line, s.name, s.kind, s.location.range.end.line) for s in symbols)
        assert flat == [(0, "Title", ns, 0), (1, "top entry", st, 1), (2, "Section A", ns, 2), (3, "a one", st, 3),
                        (4, "a two", st, 5), (6, "Sub", ns, 6), (7, "café 😀", st, 7), (8, "Section B", ns, 8),
                        (9, "b one", st, 9)]
        assert {s.location.uri for s in symbols} == {lsp.uri(memory_file)}
        (cafe,) = [s for s in symbols if s.name == "café 😀"]
        assert cafe.location.range.end == end_of_line(lsp, 7)

    app = ws.proj / "src" / "app.py"
    lsp.open(app, language="python")
    assert await document_symbols(lsp, app) == []


async def workspace_symbols(lsp: Session, query: str) -> list[types.SymbolInformation]:
    return list(await lsp.client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query)) or [])


async def test_workspace_symbols_search_every_entry(lsp: Session) -> None:
    ws = lsp.ws
    found = await workspace_symbols(lsp, "PNPM")
    assert [(s.name, s.location.uri, s.location.range.start.line, s.container_name) for s in found] == [
        ("Use pnpm", lsp.uri(ws.global_file), 2, str(ws.global_file))]
    assert all(s.kind == types.SymbolKind.String for s in found)

    everything = await workspace_symbols(lsp, "")
    assert {(s.location.uri, s.name) for s in everything} == {
        (lsp.uri(ws.global_file), "Prefer small commits"), (lsp.uri(ws.global_file), "Use pnpm"),
        (lsp.uri(ws.proj / "GEMINI.md"), "Run tests with pytest"), (lsp.uri(ws.proj / "GEMINI.md"), "Keep functions short"),
        (lsp.uri(ws.proj / "GEMINI.md"), "The API lives in src/api"),
        (lsp.uri(ws.proj / "pkg" / "GEMINI.md"), "Package rule: no globals"),
    }
    assert await workspace_symbols(lsp, "nothing matches this") == []

    # An open buffer is searched as typed.
    package = ws.proj / "pkg" / "GEMINI.md"
    lsp.open(package)
    lsp.change(package, "# Package\n- Typed, unsaved rule\n")
    (typed,) = await workspace_symbols(lsp, "unsaved")
    assert (typed.name, typed.location.uri, typed.location.range.start.line) == (
        "Typed, unsaved rule", lsp.uri(package), 1)
