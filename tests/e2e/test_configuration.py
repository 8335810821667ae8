"""The `memoryLens` settings: initializationOptions (nested or flat), then workspace/configuration
(only from clients that support it), refreshed on workspace/didChangeConfiguration; invalid
values are logged and ignored; filenames, globalDir and tokenBudget change what is loaded."""

from __future__ import annotations

import json
from typing import Any

import pytest
from lsprotocol import types

from .conftest import Starter
from .harness import CMD_SAVE, FEATURE_CLIENTS, Session, Workspace, wait_for


def agents_tree(ws: Workspace) -> dict[str, Any]:
    """AGENTS.md files beside the GEMINI.md ones, and a second global directory."""
    ws.write("work/proj/AGENTS.md", "# Agents\n- Agents rule\n- agents RULE\n")
    ws.write("gdir/AGENTS.md", "- Global agents rule\n")
    ws.write("gdir/GEMINI.md", "- Global gemini rule in gdir\n")
    return {"filenames": ["AGENTS.md", "GEMINI.md"], "globalDir": str(ws.root / "gdir")}


async def assert_agents_settings_apply(lsp: Session) -> None:
    ws = lsp.ws
    target = ws.proj / "pkg" / "sub" / "mod.py"
    _, show, _ = await ws.cli("show", "--format", "json", "--filename", "AGENTS.md", "--filename", "GEMINI.md",
                              "--global-dir", str(ws.root / "gdir"), str(target.parent))
    expected = json.loads(show)

    async def applied() -> dict | None:
        result = await lsp.effective(target)
        return result if result["text"] == expected["text"] else None

    result = await wait_for(applied, what="the effective memory under the new settings")
    assert [s["path"] for s in result["sources"]] == [s["path"] for s in expected["sources"]] == [
        str(ws.root / "gdir" / "AGENTS.md"), str(ws.root / "gdir" / "GEMINI.md"),
        str(ws.proj / "AGENTS.md"), str(ws.proj / "GEMINI.md"), str(ws.proj / "pkg" / "GEMINI.md")]
    await lsp.wait_diagnostics(ws.proj / "AGENTS.md", lambda d: [x.code for x in d] == ["duplicate"])
    await lsp.wait_diagnostics(ws.root / "gdir" / "AGENTS.md", lambda d: d == [])


@pytest.mark.clients(*FEATURE_CLIENTS)
@pytest.mark.parametrize("shape", ["nested", "flat"])
async def test_initialization_options(ws: Workspace, start: Starter, shape: str) -> None:
    settings = agents_tree(ws)
    lsp = await start(init_options={"memoryLens": settings} if shape == "nested" else settings)
    await assert_agents_settings_apply(lsp)
    saved = await lsp.command(CMD_SAVE, {"text": "Saved to the first name", "scope": "project"})
    assert saved["path"] == str(ws.proj / "AGENTS.md")
    saved = await lsp.command(CMD_SAVE, {"text": "Saved globally", "scope": "global"})
    assert saved["path"] == str(ws.root / "gdir" / "AGENTS.md")
    if lsp.supports("workspace.did_change_watched_files.dynamic_registration"):
        globs = json.dumps([r.register_options for r in lsp.registrations], default=str)
        assert "**/AGENTS.md" in globs


async def test_workspace_configuration(ws: Workspace, start: Starter) -> None:
    settings = agents_tree(ws)
    lsp = await start(configuration={"memoryLens": settings})
    if lsp.supports("workspace.configuration"):
        await assert_agents_settings_apply(lsp)
        from memory_lens.core.agents.copilot_vscode import SETTINGS  # VS Code's chat settings, for copilot-vscode

        assert [item.section for p in lsp.configuration_requests for item in p.items] == ["memoryLens", *SETTINGS]
    else:  # never asked: the defaults stay
        assert lsp.configuration_requests == []
        result = await lsp.effective(ws.proj / "pkg" / "sub" / "mod.py")
        assert [s["path"] for s in result["sources"]][:2] == [str(ws.global_file), str(ws.proj / "GEMINI.md")]


async def test_did_change_configuration(ws: Workspace, start: Starter) -> None:
    settings = agents_tree(ws)
    lsp = await start()
    await lsp.wait_diagnostics(ws.proj / "GEMINI.md", lambda d: d == [])
    # Not memory yet: AGENTS.md gets the secret check alone (none here), not the duplicate check.
    assert lsp.diagnostics(ws.proj / "AGENTS.md") in (None, [])

    def notify(pushed: Any) -> None:
        lsp.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=pushed))

    pull = lsp.supports("workspace.configuration")
    if pull:
        lsp.client.set_configuration({"memoryLens": settings})
        notify(None)
    else:
        notify({"memoryLens": settings})
    await assert_agents_settings_apply(lsp)
    if lsp.supports("workspace.did_change_watched_files.dynamic_registration"):
        await wait_for(lambda: lsp.unregistrations and "AGENTS.md" in json.dumps(
            [r.register_options for r in lsp.registrations[1:]], default=str), what="watchers for AGENTS.md")

    # Back to the defaults: AGENTS.md files are no longer memory, their diagnostics are withdrawn.
    if pull:
        lsp.client.set_configuration({"memoryLens": {}})
        notify(None)
    else:
        notify({"memoryLens": {"filenames": None, "globalDir": None}})
    await lsp.wait_diagnostics(ws.proj / "AGENTS.md", lambda d: d == [])
    result = await lsp.effective(ws.proj / "pkg" / "sub" / "mod.py")
    assert [s["path"] for s in result["sources"]][0] == str(ws.global_file)


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_invalid_values_are_logged_and_ignored(ws: Workspace, start: Starter) -> None:
    bad = {"filenames": ["a/b.md"], "globalDir": 5, "tokenBudget": -1, "debug": "yes", "unknown": True}
    lsp = await start(init_options={"memoryLens": bad})
    log = await wait_for(lambda: lsp.log_text() if lsp.log_text().count("ignoring setting") == 4 else None,
                         what="four warnings")
    for name in ("filenames", "globalDir", "tokenBudget", "debug"):
        assert f"ignoring setting memoryLens.{name}" in log
    assert all(m.type == types.MessageType.Warning for m in lsp.client.log_messages if "ignoring" in m.message)
    result = await lsp.effective(ws.proj / "pkg" / "GEMINI.md")
    assert [s["path"] for s in result["sources"]] == [
        str(ws.global_file), str(ws.proj / "GEMINI.md"), str(ws.proj / "pkg" / "GEMINI.md")]
    assert lsp.diagnostics(ws.proj / "GEMINI.md") == []

    # Settings of the wrong shape altogether are ignored too.
    for pushed in (["filenames"], "AGENTS.md", 42, {"memoryLens": "AGENTS.md"}):
        lsp.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=pushed))
    assert (await lsp.effective(ws.proj / "pkg" / "GEMINI.md"))["sources"] == result["sources"]


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_filenames_as_a_comma_separated_string_and_token_budget(ws: Workspace, start: Starter) -> None:
    settings = agents_tree(ws)
    lsp = await start(init_options={"memoryLens": {"filenames": "AGENTS.md, GEMINI.md", "tokenBudget": 12,
                                                   "globalDir": settings["globalDir"]}})
    files = [ws.root / "gdir" / "AGENTS.md", ws.root / "gdir" / "GEMINI.md", ws.proj / "AGENTS.md",
             ws.proj / "GEMINI.md", ws.proj / "pkg" / "GEMINI.md"]
    _, out, _ = await ws.cli("check", "--format", "json", "--filename", "AGENTS.md", "--filename", "GEMINI.md",
                             "--global-dir", settings["globalDir"], "--token-budget", "12", *map(str, files), ok=False)
    findings = json.loads(out)
    assert "over-budget" in {f["code"] for f in findings}
    for path in files:
        expected = [(f["line"] - 1, f["code"], f["message"]) for f in findings if f["path"] == str(path)]
        await lsp.wait_diagnostics(path, lambda d, e=expected: [(x.range.start.line, x.code, x.message) for x in d] == e)
