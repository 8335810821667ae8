"""`stale`, near-`redundant` and `drift` diagnostics on built repositories, as `memory-lens check`
reports them; `stale` re-checked when a project file it reads changes on disk."""

from __future__ import annotations

import pytest
from lsprotocol import types

from .conftest import Starter
from .harness import FEATURE_CLIENTS, Workspace

STALE_TEXT = "# Project\n- Run `npm run lint` before pushing.\n- Use pnpm.\n- Tests live in `src/tests`.\n"


def stale(diags: list[types.Diagnostic]) -> list[tuple[int, int, str]]:
    return [(d.range.start.line, d.range.start.character, d.message) for d in diags if d.code == "stale"]


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_stale_matches_check_and_follows_the_project_files(ws: Workspace, start: Starter) -> None:
    ws.write("work/proj/GEMINI.md", STALE_TEXT)
    ws.write("work/proj/package.json", '{"scripts": {"test": "jest"}}')
    ws.write("work/proj/package-lock.json", "{}")
    memory = ws.proj / "GEMINI.md"
    lsp = await start()
    diags = await lsp.wait_diagnostics(memory, lambda d: len(stale(d)) == 3)
    check = [f for f in await ws.cli_json("check", "--format", "json", cwd=ws.proj) if f["code"] == "stale"]
    assert stale(diags) == [(f["line"] - 1, f["column"] - 1, f["message"]) for f in check]
    assert all(d.severity == types.DiagnosticSeverity.Warning for d in diags if d.code == "stale")

    ws.write("work/proj/package.json", '{"scripts": {"test": "jest", "lint": "eslint ."}}')
    (ws.proj / "package-lock.json").unlink()
    ws.write("work/proj/pnpm-lock.yaml", "")
    diags = await lsp.wait_diagnostics(memory, lambda d: len(stale(d)) == 1)
    assert "`src/tests` does not exist" in stale(diags)[0][2]
