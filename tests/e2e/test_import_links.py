"""`@path` imports in a memory file over LSP: document links, go-to-definition, completion of
paths after `@`, the size an import pulls in on hover, and the import-* diagnostics."""

from __future__ import annotations

import pytest
from lsprotocol import types

from .conftest import Starter
from .harness import FEATURE_CLIENTS, Workspace, uri_of

pytestmark = pytest.mark.clients(*FEATURE_CLIENTS)

TEXT = "# Rules\nSee @./docs/style.md and `@./docs/style.md`.\nmail me@example.com @missing.md\n"
STYLE = "Use tabs.\n@./more.md\n"
MORE = "More: caf\u00e9\n"


def _build(ws: Workspace):
    proj = ws.project("work/app")
    memory = ws.write("work/app/GEMINI.md", TEXT)
    ws.write("work/app/docs/style.md", STYLE)
    ws.write("work/app/docs/more.md", MORE)
    ws.write("work/app/docs/sub/deep.md", "deep\n")
    ws.write("work/app/notes.txt", "n\n")
    return proj, memory


async def test_links_and_definition(ws: Workspace, start: Starter) -> None:
    proj, memory = _build(ws)
    lsp = await start(folders=[proj])
    uri = lsp.open(memory)
    links = await lsp.client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    assert [(l.range.start.line, l.range.start.character, l.range.end.character, l.target) for l in links] == [
        (1, 4, 20, uri_of(proj / "docs" / "style.md"))]  # not the code span, not the missing file

    found = await lsp.client.text_document_definition_async(types.DefinitionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=1, character=10)))
    (target,) = found
    definition_uri = target.target_uri if isinstance(target, types.LocationLink) else target.uri
    assert definition_uri == uri_of(proj / "docs" / "style.md")
    assert isinstance(target, types.LocationLink) == lsp.supports("text_document.definition.link_support")
    nothing = await lsp.client.text_document_definition_async(types.DefinitionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=2, character=3)))
    assert not nothing  # "me@example.com" is no import


async def test_completion_after_at(ws: Workspace, start: Starter) -> None:
    proj, memory = _build(ws)
    lsp = await start(folders=[proj])
    uri = lsp.open(memory, TEXT + "@./docs/s")

    async def complete(line: int, character: int):
        return await lsp.client.text_document_completion_async(types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character)))

    completions = await complete(3, len("@./docs/s"))
    assert sorted(i.label for i in completions.items) == ["style.md", "sub/"]
    style = next(i for i in completions.items if i.label == "style.md")
    assert style.text_edit.range == types.Range(start=types.Position(line=3, character=len("@./docs/")),
                                                end=types.Position(line=3, character=len("@./docs/s")))
    assert style.kind == types.CompletionItemKind.File

    lsp.change(memory, TEXT + "@")
    top = await complete(3, 1)
    labels = [i.label for i in sorted(top.items, key=lambda i: i.sort_text)]
    assert labels == ["GEMINI.md", "docs/", "notes.txt"]  # Markdown first, then folders; .git left out
    lsp.change(memory, TEXT + "me@")
    assert await complete(3, 3) is None  # an '@' inside a word is no mention


async def test_hover_says_what_an_import_pulls_in(ws: Workspace, start: Starter) -> None:
    proj, memory = _build(ws)
    lsp = await start(folders=[proj])
    uri = lsp.open(memory)
    hover = await lsp.client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=1, character=6)))
    value = hover.contents.value
    inserted = (STYLE.replace("@./more.md", f"<!-- Imported from: ./more.md -->\n{MORE}\n"
                              "<!-- End of import from: ./more.md -->"))
    assert f"pulls in {len(inserted.encode())} bytes, ~{-(-len(inserted) // 4)} tokens" in value
    assert "1 nested import included" in value and uri_of(proj / "docs" / "style.md") in value
    failed = await lsp.client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=2, character=22)))
    assert "`@missing.md` fails: ENOENT" in failed.contents.value


async def test_import_diagnostics(ws: Workspace, start: Starter) -> None:
    proj, memory = _build(ws)
    ws.write("work/outside.md", "x\n")
    lsp = await start(folders=[proj])
    diags = await lsp.wait_diagnostics(memory, lambda d: [x.code for x in d] == ["import-not-found"])
    assert diags[0].range.start.line == 2 and diags[0].severity == types.DiagnosticSeverity.Warning
    lsp.open(memory)
    lsp.change(memory, TEXT + "@../outside.md\n")
    diags = await lsp.wait_diagnostics(
        memory, lambda d: [x.code for x in d] == ["import-not-found", "import-outside-root"])
    assert [d.range.start.line for d in diags] == [2, 3]
