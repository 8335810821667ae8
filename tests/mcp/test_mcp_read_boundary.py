"""Nothing is read out of the project over MCP (docs/security.md, "What a client is shown"): a
memory file or import whose real path leaves the client's roots (without roots: the server's
project) and the global memory directory is listed with its path and the reason, its content
withheld; a path outside them is refused. The CLI keeps showing what the agent loads, and `check`
warns (`link-outside`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client

from test_mcp_server import call, fails, server_params, session

if TYPE_CHECKING:
    from sandbox import Workspace

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- planted"


def plant(ws: Workspace) -> tuple[Path, Path]:
    """A project whose sub/GEMINI.md links to the user's SSH key, and the key."""
    proj = ws.project("proj")
    key = ws.write("home/.ssh/id_ed25519", SECRET + "\n")
    ws.write("proj/GEMINI.md", "- project rule\n")
    ws.symlink("proj/sub/GEMINI.md", str(key))
    return proj, key


async def test_a_link_to_a_secret_is_listed_with_its_reason_and_never_shown(ws: Workspace) -> None:
    proj, key = plant(ws)
    async with session(ws, proj) as client:
        effective = await call(client, "effective_memory", path="sub")
        assert SECRET not in json.dumps(effective)
        assert effective["text"] == "- project rule"
        link = str(proj / "sub" / "GEMINI.md")
        assert [w["path"] for w in effective["withheld"]] == [link]
        reason = effective["withheld"][0]["reason"]
        assert reason.startswith(f"{link} is a link to {key}, outside the server's project {proj}")
        assert reason.endswith("its content is withheld")
        assert [s["readable"] for s in effective["sources"]] == [True, False]
        entries = await call(client, "list_memory_entries", path="sub")
        assert SECRET not in json.dumps(entries) and entries["total"] == 1
        assert entries["withheld"] == effective["withheld"]
    # The CLI shows what the agent loads, and check warns.
    assert SECRET in ws.ok("show", "sub", cwd=proj).stdout
    found = ws.run("check", cwd=proj)
    assert f"{link}:1:1: warning: {link} is a link to {key}, outside the project {proj}" in found.stdout
    assert "[link-outside]" in found.stdout


async def test_every_agent_withholds_a_link_to_a_secret_and_explain_stays_inside(ws: Workspace) -> None:
    proj, key = plant(ws)
    ws.write("proj/CLAUDE.md", "- claude rule\n")
    ws.symlink("proj/sub/CLAUDE.md", str(key))
    ws.write("proj/AGENTS.md", "- agents rule\n")
    ws.symlink("proj/sub/AGENTS.md", str(key))
    ws.write("home/.claude/CLAUDE.md", "- my claude rule\n")  # the agent's own directory: shown
    async with session(ws, proj) as client:
        for agent, name, text in (("claude", "CLAUDE.md", "- claude rule"), ("codex", "AGENTS.md", "- agents rule")):
            effective = await call(client, "effective_memory", path="sub", agent=agent)
            assert SECRET not in json.dumps(effective), agent
            assert text in effective["text"], agent
            links = [s for s in effective["sources"] if s["path"] == str(proj / "sub" / name)]
            assert [s["loaded"] for s in links] == [False], agent
            assert [w["path"] for w in effective["withheld"]] == [links[0]["path"]], agent
            assert effective["withheld"][0]["reason"].startswith(f"{links[0]['path']} is a link to {key}, outside")
        assert "- my claude rule" in (await call(client, "effective_memory", agent="claude"))["text"]
        matrix = await call(client, "explain_context", path="sub", agents=["claude"])
        linked = next(f for f in matrix["files"] if f["path"] == str(proj / "sub" / "CLAUDE.md"))
        assert linked["statuses"]["claude"]["status"] == "not-loaded"
        assert "its content is withheld" in linked["statuses"]["claude"]["reason"]
        assert "is outside the server's project" in await fails(client, "explain_context", path=str(key))
        assert "agents: Input should be 'gemini'" in await fails(client, "explain_context", path=".", agents=["bob"])
    assert SECRET in ws.ok("show", "sub", "--agent", "claude", cwd=proj).stdout  # the CLI shows what loads


async def test_another_repository_is_refused(ws: Workspace) -> None:
    proj, _ = plant(ws)
    other = ws.project("other")
    ws.write("other/GEMINI.md", "- other repository's rule\n")
    async with session(ws, proj) as client:
        for tool in ("effective_memory", "list_memory_entries"):
            message = await fails(client, tool, path=str(other))
            assert f"{other} is outside the server's project {proj}" in message, message
            assert "rule" not in message
        outside = await fails(client, "effective_memory", path="../other")
        assert "is outside the server's project" in outside
        ws.write_global("- global rule\n")
        assert (await call(client, "effective_memory", path=str(ws.global_dir)))["text"] == "- global rule"


async def test_the_clients_roots_decide(ws: Workspace) -> None:
    proj, _ = plant(ws)
    other = ws.project("other")
    ws.write("other/GEMINI.md", "- other repository's rule\n")
    asked: list[Any] = []

    async def roots(context: Any) -> types.ListRootsResult:
        asked.append(context)
        return types.ListRootsResult(roots=[types.Root(uri=other.as_uri(), name="other")])

    async with stdio_client(server_params(ws, proj)) as (read, write):
        async with ClientSession(read, write, list_roots_callback=roots) as client:
            await client.initialize()
            shown = await call(client, "effective_memory", path=str(other))
            assert shown["text"] == "- other repository's rule" and shown["withheld"] == []
            message = await fails(client, "list_memory_entries", path=str(proj))
            assert f"is outside the client's roots {other}" in message
            assert asked
    async with Client(server_params(ws, proj), list_roots_callback=roots, mode="auto") as modern:
        assert modern.protocol_version == "2026-07-28"  # roots asked in an input-required round trip
        result = await modern.call_tool("effective_memory", {"path": str(other)})
        assert not result.is_error and result.structured_content["text"] == "- other repository's rule"
        refused = await modern.call_tool("effective_memory", {"path": str(proj)})
        assert refused.is_error and "is outside the client's roots" in refused.content[0].text


async def test_an_import_the_boundary_markers_let_out_is_shown_by_the_cli_and_withheld_over_mcp(ws: Workspace) -> None:
    """Gemini CLI 0.61 imports a file anywhere below the root its `memoryBoundaryMarkers` find:
    with `["etc"]`, `/` (here: the sandbox root, which holds `etc`)."""
    ws.mkdir("etc")
    proj = ws.project("proj")
    secret = ws.write("home/.ssh/id_ed25519", SECRET + "\n")
    ws.write("proj/.gemini/settings.json", json.dumps({"context": {"memoryBoundaryMarkers": ["etc"]}}))
    ws.write_global(json.dumps({str(proj): "TRUST_FOLDER"}), name="trustedFolders.json")
    ws.write("proj/GEMINI.md", f"- project rule\n@{secret}\n")
    assert SECRET in ws.ok("show", cwd=proj).stdout  # as Gemini CLI loads it
    found = ws.run("check", cwd=proj)
    assert (f"{proj / 'GEMINI.md'}:2:1: warning: @{secret} imports {secret}, outside the project {proj} "
            f"(context.memoryBoundaryMarkers ['etc'] make the import root {ws.root})") in found.stdout
    async with session(ws, proj) as client:
        effective = await call(client, "effective_memory")
        assert SECRET not in json.dumps(effective)
        assert [w["path"] for w in effective["withheld"]] == [str(secret)]
        assert effective["sources"][0]["imports"][0]["status"] == "withheld"
