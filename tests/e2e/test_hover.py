"""textDocument/hover in a memory file: where else an entry appears (with links), and on the
first line a summary of the effective memory at that folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from .conftest import Starter
from .harness import FEATURE_CLIENTS, Session, Workspace, uri_of

pytestmark = pytest.mark.clients(*FEATURE_CLIENTS)

PROJECT = "# Project\n- Use pnpm\n- Keep functions short\n- keep functions SHORT!\n- Only here\n"
PACKAGE = "- Keep functions short\n- Package rule\n"
SIBLING = "- Use PNPM.\n"


async def hover(lsp: Session, path: Path, line: int, character: int = 3) -> types.Hover | None:
    return await lsp.client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=lsp.uri(path)),
        position=types.Position(line=line, character=character)))


def markdown(result: types.Hover | None) -> str:
    assert result is not None
    assert isinstance(result.contents, types.MarkupContent)
    assert result.contents.kind == types.MarkupKind.Markdown
    return result.contents.value


def link(path: Path, line: int) -> str:
    """The Markdown link target for 1-based LINE of PATH."""
    return f"]({uri_of(path)}#L{line})"


async def test_entry_hover_lists_every_other_place(ws: Workspace, start: Starter) -> None:
    project = ws.write("work/proj/GEMINI.md", PROJECT)
    package = ws.write("work/proj/pkg/GEMINI.md", PACKAGE)
    sibling = ws.write("work/proj/other/GEMINI.md", SIBLING)
    lsp = await start()
    lsp.open(project)

    pnpm = markdown(await hover(lsp, project, 1))
    assert link(ws.global_file, 3) in pnpm  # the global file loads first
    assert link(sibling, 1) in pnpm  # another memory file of the workspace
    assert "more general" in pnpm

    short = markdown(await hover(lsp, project, 2))
    assert link(project, 4) in short and "duplicate" in short  # the same file, later
    assert link(package, 1) in short  # a more specific file repeats it

    only = markdown(await hover(lsp, project, 4))
    assert "appears only here" in only and "](file:" not in only

    lsp.open(package)
    from_below = markdown(await hover(lsp, package, 0))
    assert link(project, 3) in from_below and link(project, 4) in from_below


async def test_first_line_summarises_the_effective_memory(shared_lsp: Session) -> None:
    ws = shared_lsp.ws
    package = ws.proj / "pkg" / "GEMINI.md"
    shared_lsp.open(package)
    summary = markdown(await hover(shared_lsp, package, 0, 0))
    effective = await shared_lsp.effective(package)
    assert "Effective memory here" in summary
    assert f"3 files · ~{effective['tokens']} tokens" in summary
    for source in effective["sources"]:
        assert f"]({source['uri']})" in summary


async def test_no_hover_where_there_is_nothing_to_say(shared_lsp: Session) -> None:
    ws = shared_lsp.ws
    project = ws.proj / "GEMINI.md"
    app = ws.proj / "src" / "app.py"
    shared_lsp.open(project)
    shared_lsp.open(app, language="python")
    assert await hover(shared_lsp, project, 2) is None  # a plain text line
    assert await hover(shared_lsp, app, 0) is None  # not a memory file
    assert await hover(shared_lsp, project, 999, 999) is None  # past the end
    assert await hover(shared_lsp, ws.proj / "never-opened" / "GEMINI.md", 0) is None
    assert shared_lsp.server_alive()


async def test_hover_on_a_file_that_is_not_open(shared_lsp: Session) -> None:
    """A memory file the client has not opened is read from disk (the safe way: an unusable one,
    a FIFO say, gets no hover; see test_robustness)."""
    package = shared_lsp.ws.proj / "pkg" / "GEMINI.md"
    assert "appears only here" in markdown(await hover(shared_lsp, package, 1))
    assert "Effective memory here" in markdown(await hover(shared_lsp, package, 0, 0))
