"""save_memory's limits: an approval covers one scope of one project, and its form says which; a
fact is an entry, not a file, and no save makes a memory file larger than Memory Lens reads.
And errors over MCP name MCP tools, not CLI commands."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import mcp_types as types

from test_mcp_server import Elicitations, call, fails, session

if TYPE_CHECKING:
    from sandbox import Workspace


def accept(text: str, always: bool) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"text": text, "always_allow": always})


async def test_always_allow_covers_one_scope_and_the_form_says_which(ws: Workspace) -> None:
    proj = ws.project("proj")
    elicit = Elicitations()
    async with session(ws, proj, elicit) as client:
        elicit.answers.append(accept("Use pnpm", True))
        await call(client, "save_memory", fact="Use pnpm")
        assert elicit.asked[-1].requested_schema["properties"]["always_allow"]["title"] == "Always allow for this project"
        assert (await call(client, "save_memory", fact="Use tabs"))["saved"] is True and len(elicit.asked) == 1

        elicit.answers.append(types.ElicitResult(action="decline"))
        declined = await call(client, "save_memory", fact="Answer in French", scope="global")
        assert declined["declined"] is True and len(elicit.asked) == 2  # asked: the approval was the project's
        assert not (ws.global_dir / "GEMINI.md").exists()
        form = elicit.asked[-1].requested_schema["properties"]["always_allow"]
        assert form["title"] == "Always allow saving to global memory from this project"

        elicit.answers.append(accept("Answer in English", True))
        await call(client, "save_memory", fact="Answer in English", scope="global")
        assert (await call(client, "save_memory", fact="Be brief", scope="global"))["saved"] is True
        assert len(elicit.asked) == 3
    approvals = json.loads((ws.config_dir / "memory-lens" / "mcp-approvals.json").read_text())
    assert approvals == {"version": 1, "always_allow": {str(proj): ["save_memory", "save_memory:global"]}}
    assert (ws.global_dir / "GEMINI.md").read_text() == "## Gemini Added Memories\n- Answer in English\n- Be brief\n"


async def test_a_fact_is_not_a_file(ws: Workspace) -> None:
    proj = ws.project("proj")
    ws.write("proj/GEMINI.md", "# Rules\n")
    async with session(ws, proj) as client:
        message = await fails(client, "save_memory", fact="x" * 4097)
        assert message == ("Error executing tool save_memory: invalid arguments: "
                           "fact: String should have at most 4096 characters")
        assert (await call(client, "save_memory", fact="y" * 4096))["saved"] is True
    assert "x" not in (proj / "GEMINI.md").read_text()


async def test_no_save_makes_a_file_larger_than_memory_lens_reads(ws: Workspace) -> None:
    proj = ws.project("proj")
    ws.write("proj/GEMINI.md", "# Rules\n" + "- rule\n" * 20)
    before = (proj / "GEMINI.md").read_bytes()
    async with session(ws, proj, None, "--max-file-size", "200") as client:
        message = await fails(client, "save_memory", fact="A fact of sixty characters or so, which is over the limit")
        assert f"{proj / 'GEMINI.md'}: saving this entry would make it" in message
        assert "over the 200-byte limit" in message and "nothing written" in message
        assert (await call(client, "save_memory", fact="short"))["saved"] is True
    assert (proj / "GEMINI.md").read_bytes() == before + b"\n## Gemini Added Memories\n- short\n"


async def test_missing_note_errors_name_the_mcp_tool(ws: Workspace) -> None:
    proj = ws.project("proj")
    async with session(ws, proj) as client:
        for tool, args in (("memory_read", {}), ("memory_edit", {"content": "x"}), ("memory_delete", {})):
            message = await fails(client, tool, name="nowhere", **args)
            assert "no note named 'nowhere'" in message and "memory_list" in message, message
            assert "memory-lens" not in message, message
        message = await fails(client, "remove_memory_entry", text="no such entry")
        assert "call list_memory_entries" in message and "memory-lens" not in message
