"""The workspace: the background scan with work-done progress, requests answered while it runs,
multi-root workspaces and workspace/didChangeWorkspaceFolders."""

from __future__ import annotations

import pytest
from lsprotocol import types

from .conftest import Starter
from .harness import CMD_LIST, CMD_REFRESH, FEATURE_CLIENTS, Workspace, wait_for


NOW = {"MEMORY_LENS_PROGRESS_DELAY": "0"}  # every scan shows progress, however quick
NEVER = {"MEMORY_LENS_PROGRESS_DELAY": "3600"}  # no scan runs long enough to show it


def check_scan_progress(values: list, files: int) -> None:
    """One scan's progress: begin, reports counting the files found then checked, end."""
    begin, *reports, end = values
    assert isinstance(begin, types.WorkDoneProgressBegin) and begin.title == "Memory Lens"
    assert begin.message == "scanning the workspace for memory files" and begin.cancellable is False
    assert reports and all(isinstance(r, types.WorkDoneProgressReport) for r in reports)
    assert reports[0].message == f"{files} memory files found"
    assert reports[-1].message == f"checked {files} of {files} memory files" and reports[-1].percentage == 100
    assert [r.percentage for r in reports] == sorted(r.percentage for r in reports)
    assert isinstance(end, types.WorkDoneProgressEnd) and end.message == f"{files} memory files"


async def test_scan_reports_progress_when_supported(ws: Workspace, start: Starter) -> None:
    for i in range(140):  # more than one batch of checks (100)
        ws.write(f"work/proj/area{i}/GEMINI.md", f"- Rule {i}\n")
    lsp = await start(wait=False, env=NOW)
    # Requests are answered while the scan runs (or after it, if it was quick).
    result = await lsp.effective(ws.proj / "area7" / "x.py")
    assert result["text"].endswith("- Rule 7")
    await lsp.wait_ready()
    reports = lsp.client.progress_reports  # created tokens, and what each received
    if lsp.supports("window.work_done_progress"):
        await wait_for(lambda: any(isinstance(v[-1], types.WorkDoneProgressEnd) for v in reports.values() if v))
        (token, values), = reports.items()
        check_scan_progress(values, 143)
        assert [r.percentage for r in values[1:-1]] == [0, 69, 100]  # found; checked 100, then 143
    else:
        assert reports == {}  # never asked to create a token
    assert await lsp.command(CMD_REFRESH) == {"files": 143}
    if lsp.supports("window.work_done_progress"):  # a refresh is a scan too: a progress of its own
        await wait_for(lambda: len(reports) == 2 and all(isinstance(v[-1], types.WorkDoneProgressEnd)
                                                         for v in reports.values() if v))
        check_scan_progress(list(reports.values())[1], 143)
    else:
        assert reports == {}


@pytest.mark.clients("visual-studio-code")  # the client that declares window.workDoneProgress
async def test_a_quick_scan_shows_no_progress(ws: Workspace, start: Starter) -> None:
    lsp = await start(env=NEVER)
    assert await lsp.command(CMD_REFRESH) == {"files": 3}
    assert lsp.client.progress_reports == {}


@pytest.mark.clients("visual-studio-code")
async def test_a_client_that_fails_to_create_progress_still_gets_the_scan(ws: Workspace, start: Starter) -> None:
    """A client that declares workDoneProgress but answers `create` with an error: logged, and
    the scan and its diagnostics go on (the session checks that no error was logged)."""
    lsp = await start(env=NOW)
    await wait_for(lambda: [isinstance(v[-1], types.WorkDoneProgressEnd) for v in lsp.client.progress_reports.values()
                            if v] == [True])  # the first scan's, accepted and ended
    first = {token: list(values) for token, values in lsp.client.progress_reports.items()}
    asked: list[types.WorkDoneProgressCreateParams] = []

    def refuse(params: types.WorkDoneProgressCreateParams) -> None:
        asked.append(params)
        raise RuntimeError("progress is not available here")

    lsp.client.protocol.fm.features[types.WINDOW_WORK_DONE_PROGRESS_CREATE] = refuse
    ws.write("work/proj/dup/GEMINI.md", "- Same rule\n- same RULE\n")
    assert await lsp.command(CMD_REFRESH) == {"files": 4}
    await lsp.wait_diagnostics(ws.proj / "dup" / "GEMINI.md", lambda d: [x.code for x in d] == ["duplicate"])
    assert len(asked) == 1 and lsp.client.progress_reports == first  # asked, refused, no $/progress sent


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
