"""memory/explain: the matrix of which agent loads which instruction file for a document, and why
not — the same answer as `memory-lens explain PATH --format json` and the MCP tool
`explain_context` (one core function), each file with its URI; bad params are InvalidParams."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from pygls.exceptions import JsonRpcException

from .harness import FEATURE_CLIENTS, INVALID_PARAMS, Session, Workspace, uri_of

pytestmark = pytest.mark.clients(*FEATURE_CLIENTS)
EXPLAIN = "memory/explain"


@pytest.fixture(scope="module")
def shared_ws(shared_ws: Workspace) -> Workspace:
    """The default sandbox with a file of every agent: CLAUDE.md and AGENTS.md in the project,
    an AGENTS.override.md that shadows pkg/AGENTS.md, and two scoped Claude Code rules."""
    shared_ws.write("work/proj/CLAUDE.md", "- claude rule\n")
    shared_ws.write("work/proj/AGENTS.md", "- agents rule\n")
    shared_ws.write("work/proj/pkg/AGENTS.override.md", "- override\n")
    shared_ws.write("work/proj/pkg/AGENTS.md", "- shadowed\n")
    shared_ws.write("work/proj/.claude/rules/py.md", "---\npaths: \"**/*.py\"\n---\npython\n")
    shared_ws.write("work/proj/.claude/rules/ts.md", "---\npaths: src/**/*.ts\n---\nts\n")
    return shared_ws


async def mcp_explain(ws: Workspace, **arguments: Any) -> dict[str, Any]:
    params = StdioServerParameters(command=ws.command[0], args=[*ws.command[1:], "mcp"], env=ws.env(),
                                   cwd=str(ws.proj))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as client:
            await client.initialize()
            result = await client.call_tool("explain_context", arguments)
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)


async def test_lsp_cli_and_mcp_give_the_same_matrix(shared_lsp: Session) -> None:
    ws = shared_lsp.ws  # see shared_ws
    target = ws.proj / "pkg" / "sub" / "mod.py"
    lsp = await shared_lsp.request(EXPLAIN, {"textDocument": {"uri": shared_lsp.uri(target)}})
    cli = await ws.cli_json("explain", str(target), cwd=ws.proj)
    mcp = await mcp_explain(ws, path=str(target.relative_to(ws.proj)))
    assert all(f["uri"] == uri_of(f["path"]) for f in lsp["files"])
    assert {**lsp, "files": [{k: v for k, v in f.items() if k != "uri"} for f in lsp["files"]]} == cli == mcp
    assert lsp["agents"][:4] == ["gemini", "claude", "codex", "wave"]
    by_path = {Path(f["path"]): f["statuses"] for f in cli["files"]}
    assert by_path[ws.proj / "pkg" / "AGENTS.md"]["codex"] == {
        "status": "not-loaded", "reason": "Codex reads AGENTS.override.md in this directory instead"}
    assert by_path[ws.proj / ".claude" / "rules" / "py.md"]["claude"] == {"status": "on-read", "matchedBy": "**/*.py"}
    assert by_path[ws.proj / "GEMINI.md"]["gemini"] == {"status": "loaded"}
    assert by_path[ws.global_file]["gemini"] == {"status": "loaded"}


async def test_agents_narrow_it_and_bad_params_are_invalid(shared_lsp: Session) -> None:
    ws = shared_lsp.ws
    uri = shared_lsp.uri(ws.proj / "src" / "app.ts")  # not saved: the nearest existing directory
    only = await shared_lsp.request(EXPLAIN, {"textDocument": {"uri": uri}, "agents": ["claude"]})
    assert only["agents"] == ["claude"] and all(list(f["statuses"]) == ["claude"] for f in only["files"])
    rule = next(f for f in only["files"] if f["path"].endswith("ts.md"))
    assert rule["statuses"]["claude"] == {"status": "on-read", "matchedBy": "src/**/*.ts"}
    for params in ({"textDocument": {"uri": uri}, "agents": ["bob"]}, {"textDocument": {"uri": uri}, "agents": "claude"},
                   {"textDocument": {"uri": "untitled:Untitled-1"}}):
        with pytest.raises(JsonRpcException) as err:
            await shared_lsp.request(EXPLAIN, params)
        assert err.value.code == INVALID_PARAMS
    assert shared_lsp.server_alive()


async def test_explain_for_an_open_file_follows_every_agents_files_on_disk(lsp: Session) -> None:
    """Asked again and again (each agent's view kept while nothing it looked at changed), the
    matrix is the CLI's fresh one after each change on disk, no file event sent: a scoped
    instructions file and a Cursor rule edited in place (same size), an AGENTS.md created in the
    file's directory, a Cursor rule created, then the first two removed."""
    ws = lsp.ws
    instructions, rule = ws.proj / ".github" / "instructions" / "py.instructions.md", ws.proj / ".cursor" / "rules" / "py.mdc"
    ws.write("work/proj/.github/instructions/py.instructions.md", '---\napplyTo: "**/*.py"\n---\npython\n')
    ws.write("work/proj/.cursor/rules/py.mdc", '---\nglobs: "**/*.py"\n---\npython\n')
    ws.write("work/proj/pkg/a.py", "")
    ws.write("work/proj/.git/HEAD", "ref: refs/heads/main\n")  # a repository, as Copilot CLI takes one
    for folder in ("objects", "refs"):
        (ws.proj / ".git" / folder).mkdir()
    target = ws.proj / "pkg" / "a.py"

    async def matrix() -> dict[str, dict[str, Any]]:
        got = await lsp.request(EXPLAIN, {"textDocument": {"uri": lsp.uri(target)}})
        cli = await ws.cli_json("explain", str(target), cwd=ws.proj)
        assert {**got, "files": [{k: v for k, v in f.items() if k != "uri"} for f in got["files"]]} == cli
        return {f["path"]: f["statuses"] for f in cli["files"]}

    first = await matrix()
    assert first[str(instructions)]["copilot"]["matchedBy"] == "**/*.py"
    assert first[str(rule)]["cursor"] == {"status": "on-read", "matchedBy": "**/*.py"}
    assert await matrix() == first
    ws.write("work/proj/.github/instructions/py.instructions.md", '---\napplyTo: "**/*.md"\n---\npython\n')
    ws.write("work/proj/.cursor/rules/py.mdc", '---\nglobs: "**/*.md"\n---\npython\n')
    edited = await matrix()
    assert "matchedBy" not in edited[str(instructions)]["copilot"]
    assert edited[str(rule)]["cursor"]["status"] == "not-loaded"
    ws.write("work/proj/pkg/AGENTS.md", "- package rule\n")
    ws.write("work/proj/.cursor/rules/all.mdc", "---\nalwaysApply: true\n---\nall\n")
    created = await matrix()
    assert created[str(ws.proj / "pkg" / "AGENTS.md")]["codex"] == {"status": "loaded"}
    assert created[str(ws.proj / ".cursor" / "rules" / "all.mdc")]["cursor"] == {"status": "loaded"}
    instructions.unlink()
    rule.unlink()
    removed = await matrix()
    assert str(instructions) not in removed and str(rule) not in removed


async def test_the_kept_matrix_is_worked_out_again_after_any_change_it_depends_on(lsp: Session) -> None:
    """The open file's whole matrix is kept (with its JSON) while nothing it looked at changed.
    Asked again after each change on disk (no file event), it is the fresh one: a Claude Code
    rule's `paths:` edited, a file only the rows' listing looks for (`.claude/AGENTS.md`)
    created then removed, a project root made below, the VS Code chat settings sent, and
    Gemini's settings.json, which only the store's Gemini memory reads."""
    ws = lsp.ws
    ws.write("work/proj/AGENTS.md", "- agents\n")
    ws.write("work/proj/.claude/rules/py.md", '---\npaths: "**/*.py"\n---\npython\n')
    ws.write("work/proj/pkg/a.py", "")
    target = ws.proj / "pkg" / "a.py"
    lsp.open(target, language="python")
    rule, agents = str(ws.proj / ".claude" / "rules" / "py.md"), str(ws.proj / "AGENTS.md")

    async def matrix(**params: Any) -> dict[str, dict[str, Any]]:
        got = await lsp.request(EXPLAIN, {"textDocument": {"uri": lsp.uri(target)}, **params})
        return {f["path"]: f["statuses"] for f in got["files"]}

    async def fresh(but: str = "") -> dict[str, dict[str, Any]]:
        """The matrix, the CLI's but for agent BUT."""
        got = await matrix()
        cli = await ws.cli_json("explain", str(target), cwd=ws.proj)
        assert ({p: {a: s for a, s in statuses.items() if a != but} for p, statuses in got.items()}
                == {f["path"]: {a: s for a, s in f["statuses"].items() if a != but} for f in cli["files"]})
        return got

    first = await fresh()
    assert await matrix() == first and first[rule]["claude"] == {"status": "on-read", "matchedBy": "**/*.py"}
    ws.write("work/proj/.claude/rules/py.md", '---\npaths: "src/**/*.ts"\n---\npython\n')
    assert (await fresh())[rule]["claude"]["status"] == "not-loaded"
    created = ws.write("work/proj/.claude/AGENTS.md", "- listed only as a row\n")
    assert str(created) in await fresh()
    created.unlink()
    assert str(created) not in await fresh()
    (ws.proj / "pkg" / ".git").mkdir()
    # above the project root now; Copilot Chat takes the editor's workspace folder, not the root, as its own
    assert (await fresh(but="copilot-vscode"))[agents]["codex"]["status"] == "not-loaded"
    shutil.rmtree(ws.proj / "pkg" / ".git")
    assert agents in await fresh()

    default = await matrix()
    off = await matrix(vscodeSettings={"chat.useAgentsMdFile": False})
    assert default[agents]["copilot-vscode"] == {"status": "loaded"}
    assert off[agents]["copilot-vscode"]["status"] == "not-loaded"
    assert await matrix() == default

    assert default[agents]["gemini"]["status"] == "not-loaded"
    ws.write("home/.gemini/settings.json", json.dumps({"context": {"fileName": ["AGENTS.md", "GEMINI.md"]}}))
    cli = await ws.cli_json("explain", str(target), cwd=ws.proj)
    assert (await matrix())[agents]["gemini"] == {"status": "loaded"} == next(
        f["statuses"]["gemini"] for f in cli["files"] if f["path"] == agents)
