"""The workspace: the background scan with work-done progress, requests answered while it runs,
multi-root workspaces and workspace/didChangeWorkspaceFolders."""

from __future__ import annotations

import pytest
from lsprotocol import types

from .conftest import Starter
from .harness import CMD_LIST, CMD_REFRESH, FEATURE_CLIENTS, Workspace, wait_for


async def test_scan_reports_progress_when_supported(ws: Workspace, start: Starter) -> None:
    for i in range(40):
        ws.write(f"work/proj/area{i}/GEMINI.md", f"- Rule {i}\n")
    lsp = await start(wait=False)
    # Requests are answered while the scan runs (or after it, if it was quick).
    result = await lsp.effective(ws.proj / "area7" / "x.py")
    assert result["text"].endswith("- Rule 7")
    await lsp.wait_ready()
    reports = lsp.client.progress_reports
    if lsp.supports("window.work_done_progress"):
        (token, values), = reports.items()
        assert isinstance(values[0], types.WorkDoneProgressBegin) and values[0].title
        assert isinstance(values[-1], types.WorkDoneProgressEnd)
        assert values[-1].message == "43 memory files"
    else:
        assert reports == {}
    assert await lsp.command(CMD_REFRESH) == {"files": 43}
    assert len(reports) <= 1  # a refresh does not start another progress


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_multi_root(ws: Workspace, start: Starter) -> None:
    second = ws.project("work/second")
    ws.write("work/second/GEMINI.md", "- Second rule\n- second RULE\n")
    loose = ws.root / "work" / "loose"
    ws.write("work/loose/GEMINI.md", "- Use pnpm\n")
    lsp = await start(folders=[ws.proj, second, loose])
    await lsp.wait_diagnostics(second / "GEMINI.md", lambda d: [x.code for x in d] == ["duplicate"])
    await lsp.wait_diagnostics(loose / "GEMINI.md", lambda d: [x.code for x in d] == ["redundant"])
    await lsp.wait_diagnostics(ws.proj / "GEMINI.md", lambda d: d == [])
    assert (await lsp.effective(second / "src" / "a.py"))["projectRoot"] == str(second)
    assert (await lsp.effective(loose / "a.py"))["projectRoot"] is None
    names = {s.name for s in await lsp.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="rule"))}
    assert names == {"Second rule", "second RULE", "Package rule: no globals"}
    first_folder = await lsp.command(CMD_LIST, {"scope": "project"})
    assert {e["path"] for e in first_folder} == {str(ws.proj / "GEMINI.md")}


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_workspace_folders_change(ws: Workspace, start: Starter) -> None:
    second = ws.project("work/second")
    ws.write("work/second/GEMINI.md", "- Second rule\n- second RULE\n")
    lsp = await start()
    assert lsp.diagnostics(second / "GEMINI.md") is None
    folder = types.WorkspaceFolder(uri=lsp.uri(second), name="second")

    def change(added: list, removed: list) -> None:
        lsp.client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(added=added, removed=removed)))

    change([folder], [])
    await lsp.wait_diagnostics(second / "GEMINI.md", lambda d: [x.code for x in d] == ["duplicate"])
    await wait_for(lambda: lsp.uri(second / "GEMINI.md") in lsp.changed_uris(), what="memory/didChange")
    change([], [folder])
    await lsp.wait_diagnostics(second / "GEMINI.md", lambda d: d == [])
    assert await lsp.command(CMD_REFRESH) == {"files": 3}
