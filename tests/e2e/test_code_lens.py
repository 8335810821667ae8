"""textDocument/codeLens: "Effective memory here: N files · ~T tokens" atop each memory file,
running `memoryLens.server.effective`; refreshed when memory changes on disk."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from .harness import CMD_EFFECTIVE, Session, wait_for


async def lenses(lsp: Session, path: Path) -> list[types.CodeLens]:
    return list(await lsp.client.text_document_code_lens_async(types.CodeLensParams(
        text_document=types.TextDocumentIdentifier(uri=lsp.uri(path)))) or [])


async def test_lens_title_and_command(lsp: Session) -> None:
    ws = lsp.ws
    for path, files in ((ws.proj / "pkg" / "GEMINI.md", 3), (ws.proj / "GEMINI.md", 2), (ws.global_file, 1)):
        lsp.open(path)
        (lens,) = await lenses(lsp, path)
        effective = await lsp.effective(path)
        plural = "file" if files == 1 else "files"
        assert lens.range.start == types.Position(line=0, character=0)
        assert lens.command is not None
        assert lens.command.title == f"Effective memory here: {files} {plural} · ~{effective['tokens']} tokens"
        assert lens.command.command == CMD_EFFECTIVE
        assert list(lens.command.arguments or []) and dict(lens.command.arguments[0]) == {"uri": lsp.uri(path)}
        assert await lsp.command(lens.command.command, *lens.command.arguments) == effective

    app = ws.proj / "src" / "app.py"
    lsp.open(app, language="python")
    assert await lenses(lsp, app) == []


async def test_lens_follows_changes_on_disk(lsp: Session) -> None:
    ws = lsp.ws
    package = ws.proj / "pkg" / "GEMINI.md"
    lsp.open(package)
    (before,) = await lenses(lsp, package)
    refreshes = lsp.lens_refreshes
    ws.write("work/proj/GEMINI.md", "")  # an agent empties the project file: one file fewer
    if lsp.supports("workspace.code_lens.refresh_support"):
        await wait_for(lambda: lsp.lens_refreshes > refreshes, what="workspace/codeLens/refresh")

    async def updated() -> str | None:
        (lens,) = await lenses(lsp, package)
        return lens.command.title if lens.command.title.startswith("Effective memory here: 2 files") else None

    assert await wait_for(updated, what="the lens title to count 2 files") != before.command.title
