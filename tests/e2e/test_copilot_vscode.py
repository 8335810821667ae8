"""copilot-vscode over stdio: memory/effective and memory/explain follow the `vscodeSettings` the
client sends (VS Code's chat settings), else those it answers to workspace/configuration (the
`not-loaded` diagnostic too), the same view as `memory-lens show --agent copilot-vscode` with the
same settings in `.vscode/settings.json`; a `vscodeSettings` that is no object is InvalidParams;
the workspace is the editor's folders. MCP's effective_memory takes the agent too."""

from __future__ import annotations

import json

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from pygls.exceptions import JsonRpcException

from .conftest import Starter
from .harness import EFFECTIVE, INVALID_PARAMS, Session, Workspace, wait_for

pytestmark = pytest.mark.clients("visual-studio-code")
AGENT = "copilot-vscode"
EXPLAIN = "memory/explain"


async def test_effective_and_explain_follow_the_settings_sent(lsp: Session) -> None:
    ws = lsp.ws
    ws.write("work/proj/AGENTS.md", "- agents\n")
    ws.write("work/proj/.github/copilot-instructions.md", "- copilot\n")
    ws.write("work/proj/.github/instructions/py.instructions.md", "---\napplyTo: 'pkg/*.py'\n---\npython\n")
    ws.write("work/proj/pkg/a.py", "")
    target = ws.proj / "pkg" / "a.py"
    default = await lsp.effective(target, agent=AGENT)
    show = await ws.cli_json("show", str(target), "--agent", AGENT, "--start", str(ws.proj))
    rule = "---\napplyTo: 'pkg/*.py'\n---\npython"
    assert default["text"] == show["text"] == f"{rule}\n\n- copilot\n\n- agents"
    sent = await lsp.effective(target, agent=AGENT, vscodeSettings={"chat.useAgentsMdFile": False,
                                                                    "chat.includeApplyingInstructions": "x"})
    by_name = {s["path"].rsplit("/", 1)[-1]: s for s in sent["sources"]}
    assert by_name["AGENTS.md"]["loaded"] is False and by_name["AGENTS.md"]["reason"] == "chat.useAgentsMdFile is off"
    assert by_name["py.instructions.md"]["matchedBy"] == "pkg/*.py"  # the malformed value: its default
    assert sent["warnings"] == ['chat.includeApplyingInstructions is "x", not true or false: Memory Lens takes '
                                "VS Code's default (true)"]
    ws.write("work/proj/.vscode/settings.json", '{\n  // as sent\n  "chat.useAgentsMdFile": false,\n}\n')
    show = await ws.cli_json("show", str(target), "--agent", AGENT, "--start", str(ws.proj))
    assert show["text"] == sent["text"] == f"{rule}\n\n- copilot"
    matrix = await lsp.request(EXPLAIN, {"textDocument": {"uri": lsp.uri(target)}, "agents": [AGENT],
                                         "vscodeSettings": {"chat.useAgentsMdFile": True}})
    statuses = {f["path"].rsplit("/", 1)[-1]: f["statuses"][AGENT] for f in matrix["files"]}
    assert statuses["AGENTS.md"] == {"status": "loaded"}  # sent settings win over the file
    assert statuses["py.instructions.md"] == {"status": "on-read", "matchedBy": "pkg/*.py"}
    cli = await ws.cli_json("explain", str(target), "--agents", AGENT, "--start", str(ws.proj))
    assert {f["path"].rsplit("/", 1)[-1]: f["statuses"][AGENT] for f in cli["files"]}["AGENTS.md"] == {
        "status": "not-loaded", "reason": "Copilot Chat: chat.useAgentsMdFile is off"}
    for method, params in ((EFFECTIVE, {"agent": AGENT}), (EXPLAIN, {"agents": [AGENT]})):
        with pytest.raises(JsonRpcException) as err:
            await lsp.request(method, {"textDocument": {"uri": lsp.uri(target)}, **params, "vscodeSettings": [1]})
        assert err.value.code == INVALID_PARAMS and "'vscodeSettings' must be an object" in err.value.message


async def test_mcp_effective_memory_takes_the_agent(lsp: Session) -> None:
    ws = lsp.ws
    ws.write("work/proj/.github/instructions/py.instructions.md", "---\napplyTo: '**/*.py'\n---\npython\n")
    ws.write("work/proj/pkg/a.py", "")
    params = StdioServerParameters(command=ws.command[0], args=[*ws.command[1:], "mcp"], env=ws.env(),
                                   cwd=str(ws.proj))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        result = await mcp.call_tool("effective_memory", {"path": "pkg/a.py", "agent": AGENT})
    assert not result.is_error, result.content
    data = json.loads(result.content[0].text)
    assert data["agent"] == AGENT
    rule = [s for s in data["sources"] if s["path"].endswith("py.instructions.md")]
    assert [(s["loaded"], s["when"], s["matchedBy"]) for s in rule] == [(True, "on-read", "**/*.py")]


async def test_the_workspace_is_the_editors_folders(ws: Workspace, start: Starter) -> None:
    """Two folders open below the repository root: memory/effective and memory/explain read each
    folder's files (VS Code reads every folder of the window), not the repository root's."""
    for top in ("", "app/", "lib/"):
        ws.write(f"work/proj/{top}AGENTS.md", f"- {top or 'root'} agents\n")
    target = ws.write("work/proj/app/m.py", "")
    app, lib = ws.proj / "app", ws.proj / "lib"
    lsp = await start(folders=[app, lib])
    result = await lsp.effective(target, agent=AGENT)
    assert [s["path"] for s in result["sources"] if s["loaded"]] == [str(app / "AGENTS.md"), str(lib / "AGENTS.md")]
    assert result["text"] == "- app/ agents\n\n- lib/ agents"
    matrix = await lsp.request(EXPLAIN, {"textDocument": {"uri": lsp.uri(target)}, "agents": [AGENT]})
    statuses = {f["path"]: f["statuses"][AGENT]["status"] for f in matrix["files"]}
    assert statuses[str(lib / "AGENTS.md")] == "loaded" and statuses[str(ws.proj / "AGENTS.md")] == "not-loaded"


async def test_chat_settings_come_from_workspace_configuration(ws: Workspace, start: Starter) -> None:
    """The chat settings the client answers to workspace/configuration are the ones the
    `not-loaded` diagnostic, memory/effective and memory/explain follow when a request sends none:
    with `chat.useNestedAgentsMdFiles` on, pkg/AGENTS.md is listed for the model, so no
    diagnostic says no enabled agent loads it."""
    ws.write("work/proj/pkg/AGENTS.md", "- pkg\n")
    ws.write("work/proj/pkg/a.py", "")
    nested = ws.proj / "pkg" / "AGENTS.md"
    lsp = await start(init_options={"memoryLens": {"agents": [AGENT]}},
                      configuration={"memoryLens": {"agents": [AGENT]}, "chat": {"useNestedAgentsMdFiles": True}})
    matrix = await lsp.request(EXPLAIN, {"textDocument": {"uri": lsp.uri(ws.proj / "pkg" / "a.py")},
                                         "agents": [AGENT]})
    assert {f["path"]: f["statuses"][AGENT] for f in matrix["files"]}[str(nested)] == {
        "status": "requestable", "matchedBy": "pkg/"}
    effective = await lsp.effective(nested, agent=AGENT)
    assert [s.get("when") for s in effective["sources"] if s["path"] == str(nested)] == ["requestable"]
    lsp.open(nested)
    await wait_for(lambda: any(p.uri == lsp.uri(nested) and p.version == 1 for p in lsp.published),
                   what="the diagnostics of the opened pkg/AGENTS.md")
    opened = [p for p in lsp.published if p.uri == lsp.uri(nested) and p.version == 1][-1]
    assert [d.message for d in opened.diagnostics if d.code == "not-loaded"] == []
    sections = [item.section for p in lsp.configuration_requests for item in p.items]
    assert sections[:2] == ["memoryLens", "github.copilot.chat.codeGeneration.useInstructionFiles"], sections
    assert lsp.server_alive()
