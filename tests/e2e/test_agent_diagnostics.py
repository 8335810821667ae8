"""Diagnostics per enabled agent (setting `agents`): Codex's cut as `over-budget` on the line of
`cutAt`, and `not-loaded` on an AGENTS.md that an AGENTS.override.md shadows for Codex; the same
findings as `memory-lens check --agent codex`."""

from __future__ import annotations

import pytest
from lsprotocol import types

from .conftest import Starter
from .harness import Workspace

LINE = "x" * 63 + "\n"  # 64 bytes a line
# AGENTS.md is a Gemini file name here too; a large token budget keeps Gemini's own over-budget away.
SETTINGS = {"filenames": ["GEMINI.md", "AGENTS.md"], "tokenBudget": 1_000_000}


def codex_tree(ws: Workspace) -> None:
    ws.write("work/proj/AGENTS.md", LINE * 600)  # 38400 bytes: Codex keeps 32768, lines 1-512
    ws.write("work/proj/pkg/AGENTS.md", "- shadowed\n")
    ws.write("work/proj/pkg/AGENTS.override.md", "- the override\n")


def agent_codes(diags: list[types.Diagnostic]) -> list[tuple[int, str, str]]:
    return [(d.range.start.line, str(d.code), d.message.split(":")[0]) for d in diags
            if d.code in ("over-budget", "not-loaded")]


@pytest.mark.clients("visual-studio-code", "neovim")
@pytest.mark.parametrize("agents", [["codex"], None, ["gemini"]])
async def test_codex_cut_and_shadowed_agents_md(ws: Workspace, start: Starter, agents: list[str] | None) -> None:
    codex_tree(ws)
    lsp = await start(init_options={"memoryLens": {**SETTINGS, **({"agents": agents} if agents else {})}})
    root, shadowed = ws.proj / "AGENTS.md", ws.proj / "pkg" / "AGENTS.md"
    if agents == ["gemini"]:  # Gemini loads both (AGENTS.md is among its names): nothing to say
        await lsp.wait_ready()
        assert agent_codes(await lsp.wait_diagnostics(root, lambda d: True)) == []
        assert agent_codes(await lsp.wait_diagnostics(shadowed, lambda d: True)) == []
        return
    # Codex is enabled by name, or by default because its files exist.
    cut = await lsp.wait_diagnostics(root, lambda d: agent_codes(d) == [(512, "over-budget", "codex")])
    over = next(d for d in cut if d.code == "over-budget")
    assert over.severity == types.DiagnosticSeverity.Warning
    assert "cuts this file at byte 32768 of 38400" in over.message and "line 513 onward" in over.message
    hidden = await lsp.wait_diagnostics(shadowed, lambda d: agent_codes(d) == [(0, "not-loaded", "codex")])
    note = next(d for d in hidden if d.code == "not-loaded")
    assert note.severity == types.DiagnosticSeverity.Information and "AGENTS.override.md" in note.message
    # The same findings as the CLI's.
    _, out, _ = await ws.cli("check", "--agent", "codex", "--filename", "GEMINI.md", "--filename", "AGENTS.md",
                             "--token-budget", "1000000", str(root), str(shadowed), ok=False)
    assert [line.split(": ", 2)[2] for line in out.splitlines()] == [over.message + " [over-budget]",
                                                                     note.message + " [not-loaded]"]
    assert lsp.server_alive()


@pytest.mark.clients("visual-studio-code", "neovim")
async def test_agents_md_not_in_filenames_gets_codex_not_loaded(ws: Workspace, start: Starter) -> None:
    # Gemini's names are the default (GEMINI.md only): AGENTS.md reaches the diagnostics because
    # codex is enabled, from the workspace scan and when opened, while Gemini's view stays as it was.
    ws.write("work/proj/GEMINI.md", "- gemini rule\n")
    ws.write("work/proj/pkg/AGENTS.md", "- shadowed\n")
    ws.write("work/proj/pkg/AGENTS.override.md", "- the override\n")
    ws.write("outside/AGENTS.md", "- also shadowed\n")  # not in the workspace: diagnosed once opened
    ws.write("outside/AGENTS.override.md", "- outside override\n")
    lsp = await start(init_options={"memoryLens": {"agents": ["codex"], "tokenBudget": 1_000_000}})
    shadowed = ws.proj / "pkg" / "AGENTS.md"
    hidden = await lsp.wait_diagnostics(shadowed, lambda d: agent_codes(d) == [(0, "not-loaded", "codex")])
    assert [d.code for d in hidden] == ["not-loaded"]  # the per-agent findings only
    assert "AGENTS.override.md" in hidden[0].message
    assert agent_codes(await lsp.wait_diagnostics(ws.proj / "pkg" / "AGENTS.override.md", lambda d: True)) == []
    outside = ws.path("outside/AGENTS.md")
    assert lsp.diagnostics(outside) is None
    lsp.open(outside)  # open, and loaded by no enabled agent: the one not-loaded with every enabled agent's reason
    opened = await lsp.wait_diagnostics(outside, lambda d: agent_codes(d) == [
        (0, "not-loaded", "no enabled agent loads this file (Codex; setting memoryLens.agents)")])
    assert opened[0].message.endswith("Codex reads AGENTS.override.md in this directory instead")
    # What Gemini loads is unchanged: its GEMINI.md files only.
    result = await lsp.effective(ws.proj / "pkg")
    assert result["sources"] and {s["path"].rsplit("/", 1)[1] for s in result["sources"]} == {"GEMINI.md"}
    assert "shadowed" not in result["text"] and "override" not in result["text"]
    assert lsp.server_alive()
