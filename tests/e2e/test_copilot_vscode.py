"""copilot-vscode over stdio: memory/effective and memory/explain follow the `vscodeSettings` the
client sends (VS Code's chat settings), the same view as `memory-lens show --agent copilot-vscode`
with the same settings in `.vscode/settings.json`; a `vscodeSettings` that is no object is
InvalidParams. MCP's effective_memory takes the agent too."""

from __future__ import annotations

import json

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from pygls.exceptions import JsonRpcException

from .harness import EFFECTIVE, INVALID_PARAMS, Session

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
