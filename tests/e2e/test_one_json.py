"""One JSON per result, whichever front end gives it: the entries of a chain as `memory-lens
list --format json`, MCP's `list_memory_entries` and the `memoryLens.server.list` command give
them; the effective view of every agent as
`memory-lens show --format json`, the MCP tool `effective_memory` and the language server's
`memory/effective` (camelCase, with `uri` and `dirty`) give it, and a finding as
`memory-lens check --format json` and the published diagnostics give it."""

from __future__ import annotations

import json

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from memory_lens.core.agents import AGENTS

from .conftest import Starter
from .harness import CMD_LIST, Workspace, uri_of

pytestmark = pytest.mark.clients("visual-studio-code")
CAMEL = {"project_root": "projectRoot", "target_dir": "targetDir"}
SEVERITY = {"error": 1, "warning": 2, "information": 3, "hint": 4}


def _tree(ws: Workspace) -> None:
    ws.write("work/proj/GEMINI.md", "- Keep a changelog\n- Keep a changelog\n@./missing.md\n")
    ws.write("work/proj/AGENTS.md", "- Run the tests first\n")
    ws.write("work/proj/CLAUDE.md", "# Claude\n@AGENTS.md\n")
    ws.write("work/proj/pkg/sub/GEMINI.md", "- pkg rule\n")
    ws.write("work/proj/pkg/sub/deeper/mod.py", "VALUE = 1\n")
    ws.symlink("work/proj/pkg/sub/deeper/GEMINI.md", "gone.md")  # a dangling link: skipped, a warning


async def test_effective_view_and_findings_are_one_json(ws: Workspace, start: Starter) -> None:
    _tree(ws)
    lsp = await start()
    target = ws.proj / "pkg" / "sub" / "deeper"
    params = StdioServerParameters(command=ws.command[0], args=[*ws.command[1:], "mcp"], env=ws.env(),
                                   cwd=str(ws.proj))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        for agent in AGENTS:
            cli = await ws.cli_json("show", str(target), "--agent", agent)
            assert cli["agent"] == agent and cli["target_dir"] == str(target)
            if agent == "gemini":  # MCP gives Gemini's view, read inside the client's roots, and what they withheld
                result = await mcp.call_tool("effective_memory", {"path": "pkg/sub/deeper", "agent": agent})
                assert not result.is_error, result.content
                assert result.structured_content == {**cli, "withheld": []} == json.loads(result.content[0].text)
            if agent in ("claude", "cursor", "copilot", "copilot-vscode"):  # the editor starts them in the workspace folder, for the document
                cli = await ws.cli_json("show", str(target / "mod.py"), "--agent", agent, "--start", str(ws.proj))
            from_lsp = await lsp.effective(target / "mod.py", agent=agent)
            assert from_lsp == {**{CAMEL.get(k, k): v for k, v in cli.items()},
                                "sources": [{"uri": uri_of(s["path"]), **s, "dirty": False}
                                            for s in cli["sources"]]}, agent
        entries = await ws.cli_json("list", "--dir", str(target))
        assert len(entries) >= 3
        result = await mcp.call_tool("list_memory_entries", {"path": "pkg/sub/deeper", "limit": 100})
        assert result.structured_content["entries"] == entries
        from_lsp = await lsp.command(CMD_LIST, {"uri": uri_of(target / "mod.py")})
        assert [{k: e[k] for k in ("text", "path", "line", "scope")} for e in from_lsp] == entries
        gemini = await ws.cli_json("show", str(target))
        assert gemini["warnings"] and "deeper/GEMINI.md: skipped" in gemini["warnings"][0]

    memory_file = ws.proj / "GEMINI.md"
    _, out, _ = await ws.cli("check", str(memory_file), "--format", "json")
    findings = json.loads(out)
    assert [f["code"] for f in findings] == ["import-not-found", "duplicate"]
    diagnostics = await lsp.wait_diagnostics(memory_file, lambda d: len(d) == len(findings))
    assert [{"path": str(memory_file), "line": d.range.start.line + 1, "column": d.range.start.character + 1,
             "severity": next(k for k, v in SEVERITY.items() if v == d.severity), "code": d.code,
             "message": d.message} for d in sorted(diagnostics, key=lambda d: d.range.start.line)] == \
        sorted(findings, key=lambda f: f["line"])
