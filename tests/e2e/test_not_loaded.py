"""`not-loaded` for a file open in the editor that no enabled agent (setting `agents`) loads in any
status: one diagnostic on line 0 with every enabled agent's reason, in the words of
`memory/explain` (core/explain.py), and none once an agent that loads it is enabled."""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from .conftest import Starter
from .harness import Session, Workspace


def not_loaded(diags: list[types.Diagnostic]) -> list[types.Diagnostic]:
    return [d for d in diags if d.code == "not-loaded"]


async def reasons(lsp: Session, path, agents: list[str]) -> list[str]:
    """Every enabled agent's reason for PATH, as memory/explain gives them."""
    result = await lsp.raw_request("memory/explain", {"textDocument": {"uri": lsp.uri(path)}, "agents": agents})
    row = next((f for f in result["files"] if f["path"] == str(path)), None)
    return [] if row is None else [s.get("reason", "") for s in row["statuses"].values()]


def tree(ws: Workspace) -> None:
    ws.write("work/proj/GEMINI.md", "- gemini rule\n")
    ws.write("work/proj/src/app.ts", "x\n")
    ws.write("work/proj/api/AGENTS.md", "- shadowed\n")
    ws.write("work/proj/api/AGENTS.override.md", "- the override\n")
    ws.write("work/proj/.cursor/rules/ts.mdc", "---\nglobs: src/**/*.ts\n---\n- strict\n")
    ws.write("work/proj/.cursorrules", "- legacy\n")
    ws.write("work/proj/.github/instructions/ts.instructions.md", "---\napplyTo: 'src/**/*.ts'\n---\n- ts\n")


@pytest.mark.clients("visual-studio-code")
async def test_a_file_no_enabled_agent_loads_gets_one_not_loaded_with_every_reason(ws: Workspace,
                                                                                  start: Starter) -> None:
    tree(ws)
    lsp = await start(init_options={"memoryLens": {"agents": ["gemini", "codex"]}})
    shadowed, rule = ws.proj / "api" / "AGENTS.md", ws.proj / ".cursor" / "rules" / "ts.mdc"
    legacy = ws.proj / ".cursorrules"  # neither a memory file nor an enabled agent's: this diagnostic only
    for path in (shadowed, rule, legacy):
        lsp.open(path)
        diags = await lsp.wait_diagnostics(path, lambda d: not_loaded(d) and "no enabled agent" in d[-1].message)
        [note] = not_loaded(diags)  # one, in place of Codex's own not-loaded
        assert note.range.start.line == 0 and note.severity == types.DiagnosticSeverity.Information
        assert note.message.startswith("no enabled agent loads this file (Gemini CLI, Codex; setting "
                                       "memoryLens.agents): ")
    # Every reason in memory/explain's words.
    explained = await reasons(lsp, shadowed, ["gemini", "codex"])
    assert explained == ["Gemini CLI: AGENTS.md is not in context.fileName (GEMINI.md)",
                         "Codex reads AGENTS.override.md in this directory instead"]
    assert not_loaded(lsp.diagnostics(shadowed) or [])[0].message.endswith(": " + "; ".join(explained))
    assert not_loaded(lsp.diagnostics(rule) or [])[0].message.endswith(
        ": Gemini CLI: ts.mdc is not in context.fileName (GEMINI.md); Codex does not read ts.mdc")
    # Loaded by an enabled agent: no not-loaded (GEMINI.md for Gemini; the override for Codex).
    for path in (ws.proj / "GEMINI.md", ws.proj / "api" / "AGENTS.override.md"):
        lsp.open(path)
        assert not_loaded(await lsp.wait_diagnostics(path, lambda d: True)) == []
    assert [d.code for d in lsp.diagnostics(legacy) or []] == ["not-loaded"]
    for path in (rule, legacy):
        lsp.close(path)
        await lsp.wait_diagnostics(path, lambda d: d == [])
    assert lsp.server_alive()


@pytest.mark.clients("visual-studio-code")
async def test_an_enabled_agent_that_loads_the_file_takes_the_diagnostic_away(ws: Workspace, start: Starter) -> None:
    tree(ws)
    lsp = await start(init_options={"memoryLens": {"agents": ["gemini", "cursor", "copilot"]}})
    for path in (ws.proj / ".cursor" / "rules" / "ts.mdc", ws.proj / ".github" / "instructions" / "ts.instructions.md"):
        lsp.open(path)
        assert not_loaded(await lsp.wait_diagnostics(path, lambda d: True)) == []
    # The Copilot view names the instructions file for the model (requestable); Cursor reads api/AGENTS.md
    # when it reads a file there (on-read): enabled, they load it.
    shadowed = ws.proj / "api" / "AGENTS.md"
    lsp.open(shadowed)
    assert not_loaded(await lsp.wait_diagnostics(shadowed, lambda d: True)) == []
    assert lsp.server_alive()



@pytest.mark.clients("visual-studio-code")
async def test_an_open_cursorrules_follows_its_file_on_disk(ws: Workspace, start: Starter) -> None:
    """Like a memory file's, an open `.cursorrules`'s diagnostics follow the file on disk: written
    there (by another program, or saved), it is no longer empty, and Cursor loads it."""
    tree(ws)
    legacy = ws.write("work/proj/.cursorrules", "")
    lsp = await start(init_options={"memoryLens": {"agents": ["cursor"]}})
    lsp.open(legacy)
    [note] = not_loaded(await lsp.wait_diagnostics(legacy, lambda d: len(not_loaded(d)) == 1))
    assert note.message.endswith("(Cursor; setting memoryLens.agents): Cursor: empty")
    ws.write("work/proj/.cursorrules", "- legacy\n")
    await lsp.wait_diagnostics(legacy, lambda d: not_loaded(d) == [])
    assert lsp.server_alive()


@pytest.mark.clients("visual-studio-code")
async def test_an_open_cursorrules_keeps_its_diagnostic_through_a_full_rescan(ws: Workspace, start: Starter) -> None:
    """A project's `.gemini/settings.json` written on disk makes the server scan the workspace
    again and drop what it published under the old settings: the `not-loaded` of an open
    `.cursorrules` (neither a memory file nor an enabled agent's) is worked out again, not
    dropped with it until the next edit."""
    tree(ws)
    legacy = ws.proj / ".cursorrules"
    lsp = await start(init_options={"memoryLens": {"agents": ["gemini"]}})
    await lsp.wait_ready()
    lsp.open(legacy)
    [note] = not_loaded(await lsp.wait_diagnostics(legacy, lambda d: len(not_loaded(d)) == 1))
    since = len(lsp.did_change)
    ws.write("work/proj/.gemini/settings.json", "{}\n")  # settings: a full pass
    await lsp.wait_changed(ws.proj / "GEMINI.md", since)  # the full pass has ended
    await lsp.wait_diagnostics(legacy, lambda d: [n.message for n in not_loaded(d)] == [note.message])
    await asyncio.sleep(0.5)  # nothing taken away after it either
    assert [n.message for n in not_loaded(lsp.diagnostics(legacy) or [])] == [note.message]
    assert lsp.server_alive()
