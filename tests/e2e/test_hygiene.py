"""`stale`, near-`redundant` and `drift` diagnostics on built repositories, as `memory-lens check`
reports them; `stale` re-checked when a project file it reads changes on disk."""

from __future__ import annotations

import json

import pytest
from lsprotocol import types

from .conftest import Starter
from .harness import FEATURE_CLIENTS, Workspace, apply_workspace_edit

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


SHARED = "".join(f"- Shared rule number {n}: keep the build green and the tests fast\n" for n in range(12))
AGENTS_TEXT = "# Rules\n" + SHARED + "- Codex only: sign every commit\n"
CLAUDE_TEXT = "# Rules\n" + SHARED + "- Claude only: answer in French\n"


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_drift_quick_fix_makes_agents_md_the_source(ws: Workspace, start: Starter) -> None:
    ws.write("work/proj/AGENTS.md", AGENTS_TEXT)
    ws.write("work/proj/CLAUDE.md", CLAUDE_TEXT)
    claude_md, agents_md = ws.proj / "CLAUDE.md", ws.proj / "AGENTS.md"
    lsp = await start(init_options={"memoryLens": {"agents": ["gemini", "claude", "codex"]}})
    lsp.open(claude_md)
    message = ("drift: AGENTS.md and CLAUDE.md share 13 of 15 lines; 1 line is only in AGENTS.md and 1 line is "
               "only in CLAUDE.md")
    diags = await lsp.wait_diagnostics(claude_md, lambda d: [x.code for x in d] == ["drift"])
    assert diags[0].message.startswith(message) and diags[0].severity == types.DiagnosticSeverity.Information
    others = await lsp.wait_diagnostics(agents_md, lambda d: "drift" in [x.code for x in d])
    others = [x for x in others if x.code == "drift"]
    assert others[0].message == message
    assert [a.title for a in await lsp.code_actions(agents_md, (0, 0), (0, 0), others)] == []  # Codex: no imports

    actions = await lsp.code_actions(claude_md, (0, 0), (0, 0), diags)
    fix = next(a for a in actions if a.kind == types.CodeActionKind.QuickFix)
    assert fix.title == "Make AGENTS.md the source: import it in CLAUDE.md"
    new = apply_workspace_edit(fix.edit, lsp.encoding, {lsp.uri(claude_md): CLAUDE_TEXT})[claude_md]
    assert new == b"@AGENTS.md\n\n- Claude only: answer in French\n"
    lsp.close(claude_md)
    claude_md.write_bytes(new)
    await lsp.wait_diagnostics(claude_md, lambda d: d == [])
    await lsp.wait_diagnostics(agents_md, lambda d: "drift" not in [x.code for x in d])
    # Each agent still loads AGENTS.md's text; Claude Code its own line too.
    claude = await ws.cli_json("show", "--agent", "claude", "--format", "json", cwd=ws.proj)
    codex = await ws.cli_json("show", "--agent", "codex", "--format", "json", cwd=ws.proj)
    assert codex["text"].strip() == AGENTS_TEXT.strip()
    assert AGENTS_TEXT.strip() in claude["text"] and "- Claude only: answer in French" in claude["text"]
    assert any(s["path"] == str(agents_md) and s["loaded"] for s in claude["sources"])


GEMINI_TEXT = "# Rules\n" + SHARED + "- Gemini only: answer in French\n"


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_drift_quick_fix_points_gemini_cli_at_agents_md_through_its_settings(ws: Workspace,
                                                                                   start: Starter) -> None:
    ws.write("work/proj/AGENTS.md", AGENTS_TEXT)
    ws.write("work/proj/GEMINI.md", GEMINI_TEXT)
    ws.write("work/proj/.gemini/settings.json", '{"ui": {"theme": "dark"}}\n')
    ws.write("home/.gemini/trustedFolders.json", json.dumps({str(ws.proj): "TRUST_FOLDER"}))
    gemini_md, agents_md, settings = ws.proj / "GEMINI.md", ws.proj / "AGENTS.md", ws.proj / ".gemini/settings.json"
    lsp = await start(init_options={"memoryLens": {"agents": ["gemini", "codex"]}})
    lsp.open(agents_md)  # the fix is offered on both files: here on the source's side
    diags = await lsp.wait_diagnostics(agents_md, lambda d: "drift" in [x.code for x in d])
    drift = [x for x in diags if x.code == "drift"]
    [fix] = [a for a in await lsp.code_actions(agents_md, (0, 0), (0, 0), drift) if a.kind == "quickfix"]
    assert fix.title == ("Make AGENTS.md the source: add it to context.fileName in .gemini/settings.json, "
                         "keep in GEMINI.md only its own lines")
    assert fix.edit is None and fix.command.command == "memoryLens.server.fixDrift"
    result = await lsp.command(fix.command.command, *fix.command.arguments)
    assert result == {"message": f"{gemini_md}: kept only the lines AGENTS.md lacks"}
    assert json.loads(settings.read_text()) == {"ui": {"theme": "dark"},
                                                "context": {"fileName": ["AGENTS.md", "GEMINI.md"]}}
    assert gemini_md.read_text() == "- Gemini only: answer in French\n"
    await lsp.wait_diagnostics(agents_md, lambda d: "drift" not in [x.code for x in d])
    gemini = await ws.cli_json("show", "--agent", "gemini", cwd=ws.proj)
    codex = await ws.cli_json("show", "--agent", "codex", cwd=ws.proj)
    assert AGENTS_TEXT.strip() in gemini["text"] and "- Gemini only: answer in French" in gemini["text"]
    assert gemini["text"].count("Shared rule number 3:") == 1 and codex["text"].strip() == AGENTS_TEXT.strip()



@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_drift_quick_fix_refuses_gemini_settings_it_would_lose_comments_of(ws: Workspace,
                                                                                 start: Starter) -> None:
    ws.write("work/proj/AGENTS.md", AGENTS_TEXT)
    ws.write("work/proj/GEMINI.md", GEMINI_TEXT)
    settings = ws.write("work/proj/.gemini/settings.json", '{"ui": {} // mine\n}\n')
    ws.write("home/.gemini/trustedFolders.json", json.dumps({str(ws.proj): "TRUST_FOLDER"}))
    gemini_md = ws.proj / "GEMINI.md"
    lsp = await start(init_options={"memoryLens": {"agents": ["gemini", "codex"]}})
    lsp.open(gemini_md)
    diags = await lsp.wait_diagnostics(gemini_md, lambda d: "drift" in [x.code for x in d])
    [fix] = [a for a in await lsp.code_actions(gemini_md, (0, 0), (0, 0), [x for x in diags if x.code == "drift"])
             if a.kind == "quickfix"]
    with pytest.raises(Exception, match="holds comments, which rewriting it would lose"):
        await lsp.command(fix.command.command, *fix.command.arguments)
    assert gemini_md.read_text() == GEMINI_TEXT and settings.read_text() == '{"ui": {} // mine\n}\n'


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_an_open_note_file_gets_secret_diagnostics_and_no_fix_that_breaks_it(ws: Workspace,
                                                                                   start: Starter) -> None:
    key = "AKIA" + "Z7Q2KX5MPL3VWN8R"
    await ws.cli("notes", "create", "--allow-secret", "deploy", "Deploy notes\n\nuse " + key, cwd=ws.proj)
    note = ws.proj / ".memory-lens" / "notes" / "deploy.json"
    lines = note.read_text().splitlines()
    [(line, column)] = [(i, l.index(key)) for i, l in enumerate(lines) if key in l]
    lsp = await start()
    lsp.open(note, language="json")
    diags = await lsp.wait_diagnostics(note, lambda d: [x.code for x in d] == ["secret"])
    assert (diags[0].range.start.line, diags[0].range.start.character) == (line, column)
    assert diags[0].severity == types.DiagnosticSeverity.Error and key not in diags[0].message
    assert [a for a in await lsp.code_actions(note, (line, 0), (line, 0), diags) if a.kind == "quickfix"] == []
    lsp.change(note, note.read_text().replace(key, "<revoked>"))  # checked as typed
    await lsp.wait_diagnostics(note, lambda d: d == [])
